// The pair half of the paraphrase benchmark: cosines of each fixture pair with one embedder, and
// what a threshold on them gets right as a duplicate check or as `similar`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Config } from "../src/core/config.js";
import { cosine } from "../src/embed/embedder.js";
import { embedderLoaderFor } from "../src/embed/models.js";
import { contradictions, paraphrases, restatements, unrelated, type NotePair } from "../test/fixtures/paraphrases.js";
import type { Row, Target } from "./lib.js";

export type EmbeddingModel = Config["EMBEDDING_MODEL"];

export type Group = "paraphrases" | "restatements" | "contradictions" | "unrelated";
export const GROUPS: Record<Group, NotePair[]> = { paraphrases, restatements, contradictions, unrelated };
/** Pairs a duplicate check should merge. */
export const SAME_FACT: Group[] = ["paraphrases", "restatements"];
/** Pairs `similar` should show the writer: overlaps and contradictions (CONTRACT §3). */
export const SAME_SUBJECT: Group[] = ["paraphrases", "restatements", "contradictions"];

export const THRESHOLDS = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98];

export type Cosines = Record<Group, number[]>;

export async function pairCosines(model: EmbeddingModel): Promise<Cosines> {
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-pairs-"));
  try {
    const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: model, DATA_DIR: dataDir })();
    const cosines = {} as Cosines;
    for (const [group, pairs] of Object.entries(GROUPS) as [Group, NotePair[]][]) {
      const first = await embedder.embed(pairs.map((pair) => pair.a));
      const second = await embedder.embed(pairs.map((pair) => pair.b));
      cosines[group] = pairs.map((_, index) => cosine(first[index] as Float32Array, second[index] as Float32Array));
    }
    await embedder.close();
    return cosines;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export interface Verdict {
  precision: number | null;
  recall: number;
  /** Pairs at or above the threshold that should not be. */
  wrong: number;
}

const atLeast = (values: number[], threshold: number): number => values.filter((value) => value >= threshold).length;
const total = (cosines: Cosines, groups: Group[], threshold: number): number =>
  groups.reduce((sum, group) => sum + atLeast(cosines[group], threshold), 0);
const size = (groups: Group[]): number => groups.reduce((sum, group) => sum + GROUPS[group].length, 0);
const others = (groups: Group[]): Group[] => (Object.keys(GROUPS) as Group[]).filter((group) => !groups.includes(group));

/** Precision and recall of "cosine ≥ threshold" for telling `wanted` pairs from the rest. */
export function verdict(right: number, wanted: number, wrong: number): Verdict {
  return { precision: right + wrong === 0 ? null : right / (right + wrong), recall: right / wanted, wrong };
}

const pairVerdict = (cosines: Cosines, wanted: Group[], threshold: number): Verdict =>
  verdict(total(cosines, wanted, threshold), size(wanted), total(cosines, others(wanted), threshold));

export const ratio = (value: number | null): string => (value === null ? "–" : value.toFixed(2));

/**
 * Duplicates: the most recall among thresholds that are no worse than `current` in precision
 * and in the number of wrong merges, since a wrong merge silently drops a fact.
 */
function recommendDuplicate(verdictAt: (threshold: number) => Verdict, current: number): number {
  const base = verdictAt(current);
  let best = current;
  for (const threshold of THRESHOLDS) {
    const candidate = verdictAt(threshold);
    const noWorse = (candidate.precision ?? 1) >= (base.precision ?? 1) && candidate.wrong <= base.wrong;
    const bestRecall = verdictAt(best).recall;
    if (noWorse && (candidate.recall > bestRecall || (candidate.recall === bestRecall && threshold > best))) best = threshold;
  }
  return best;
}

/**
 * `similar`: the most recall at which no unrelated pair is listed. A missed overlap costs little,
 * while an unrelated entry in the list costs the writer's attention on every write.
 */
function recommendSimilar(verdictAt: (threshold: number) => Verdict): number {
  const clean = THRESHOLDS.filter((threshold) => verdictAt(threshold).wrong === 0);
  return clean.reduce((best, threshold) => (verdictAt(threshold).recall > verdictAt(best).recall ? threshold : best), clean.at(-1) ?? 1);
}

export function pairRows(model: EmbeddingModel, cosines: Cosines, defaults: Config): Row[] {
  return THRESHOLDS.map((threshold) => {
    const marks = [threshold === defaults.DUPLICATE_THRESHOLD ? "DUPLICATE" : "", threshold === defaults.SIMILAR_THRESHOLD ? "SIMILAR" : ""].filter(Boolean);
    const counts = (Object.keys(GROUPS) as Group[]).map((group) => `${group} ${atLeast(cosines[group], threshold)}/${GROUPS[group].length}`);
    const duplicate = pairVerdict(cosines, SAME_FACT, threshold);
    const similar = pairVerdict(cosines, SAME_SUBJECT, threshold);
    return {
      scenario: `${model} pairs, cosine ≥ ${threshold}${marks.length > 0 ? ` (${marks.join(", ")} default)` : ""}`,
      n: size(Object.keys(GROUPS) as Group[]),
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note:
        `${counts.join(", ")}; duplicate P ${ratio(duplicate.precision)} R ${ratio(duplicate.recall)}, ` +
        `paraphrase recall ${ratio(atLeast(cosines.paraphrases, threshold) / paraphrases.length)}; ` +
        `similar P ${ratio(similar.precision)} R ${ratio(similar.recall)}`,
    };
  });
}

export function pairTargets(model: EmbeddingModel, cosines: Cosines, defaults: Config): Target[] {
  const duplicateAt = (threshold: number): Verdict => pairVerdict(cosines, SAME_FACT, threshold);
  const similarAt = (threshold: number): Verdict => pairVerdict(cosines, SAME_SUBJECT, threshold);
  const duplicate = recommendDuplicate(duplicateAt, defaults.DUPLICATE_THRESHOLD);
  const similar = recommendSimilar(similarAt);
  const describe = (at: Verdict): string => `P ${ratio(at.precision)} R ${ratio(at.recall)}`;
  return [
    {
      what: `${model}: DUPLICATE_THRESHOLD on the pairs (most recall, no loss of precision, no more wrong merges than the default)`,
      goal: `default ${defaults.DUPLICATE_THRESHOLD}: ${describe(duplicateAt(defaults.DUPLICATE_THRESHOLD))}`,
      measured: `recommended ${duplicate}: ${describe(duplicateAt(duplicate))}`,
      met: duplicate === defaults.DUPLICATE_THRESHOLD,
    },
    {
      what: `${model}: SIMILAR_THRESHOLD on the pairs (most recall with no unrelated pair listed)`,
      goal: `default ${defaults.SIMILAR_THRESHOLD}: ${describe(similarAt(defaults.SIMILAR_THRESHOLD))}`,
      measured: `recommended ${similar}: ${describe(similarAt(similar))}`,
      met: similar === defaults.SIMILAR_THRESHOLD,
    },
  ];
}
