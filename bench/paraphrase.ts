// Paraphrases: how DUPLICATE_THRESHOLD and SIMILAR_THRESHOLD sort pairs of agent notes (the same
// fact reworded, lightly restated, contradicted, or unrelated; test/fixtures/paraphrases.ts), and
// how SEARCH_MIN_SIMILARITY trades off-topic noise against recall on the bench corpus. Pair
// cosines come from the project's embedders in this process; the rest from a real server.
import { loadConfig } from "../src/core/config.js";
import { progress, round, type Row, type Section, type Target } from "./lib.js";
import { GROUPS, pairCosines, pairRows, pairTargets, type EmbeddingModel } from "./paraphrase-pairs.js";
import { storeBench } from "./paraphrase-store.js";

export interface ParaphraseOptions {
  models: readonly EmbeddingModel[];
  /** Entries of the seeded bench store the search and `similar` runs use. */
  storeEntries: number;
  /** Labelled bench-corpus queries per search run. */
  queries: number;
  /** SEARCH_MIN_SIMILARITY values to compare; 0 stands for no floor. */
  floors: readonly number[];
}

export async function runParaphraseBench(options: ParaphraseOptions): Promise<Section> {
  // The defaults as this build ships them, not whatever the caller's environment sets.
  const defaults = loadConfig({});
  const rows: Row[] = [];
  const targets: Target[] = [];
  const details: Record<string, unknown> = { pairs: Object.fromEntries(Object.entries(GROUPS).map(([group, pairs]) => [group, pairs.length])) };
  for (const model of options.models) {
    progress(`paraphrase: pair cosines with ${model}`);
    const cosines = await pairCosines(model);
    rows.push(...pairRows(model, cosines, defaults));
    targets.push(...pairTargets(model, cosines, defaults));
    details[`${model} pair cosines`] = Object.fromEntries(Object.entries(cosines).map(([group, values]) => [group, values.map((value) => round(value, 3))]));
  }
  for (const model of options.models) {
    const report = await storeBench(model, options, defaults);
    rows.push(...report.rows);
    targets.push(...report.targets);
    details[`${model} store`] = report.details;
  }
  return {
    name: "paraphrase",
    title: "Paraphrases: duplicate and similar thresholds on note pairs, and the search floor on the bench corpus",
    rows,
    targets,
    details,
  };
}
