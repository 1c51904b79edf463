import { invalid } from "../../core/errors.js";
import type { Reader, Store } from "../../store/store.js";
import type { ProjectMapping } from "../../wire/mesh.js";

/** Projects as a request names them: `{remote, local}` pairs, or one id for both sides. */
export type MappingInput = readonly (string | ProjectMapping)[];

/** Pairs, once per remote project: one peer project landing in two local ones would be two copies of each entry. */
export function mappingFrom(input: MappingInput): ProjectMapping[] {
  const pairs = input.map((item) => (typeof item === "string" ? { remote: item, local: item } : { remote: item.remote, local: item.local }));
  const seen = new Set<string>();
  for (const [index, pair] of pairs.entries()) {
    if (seen.has(pair.remote)) throw invalid(`projects.${index}`, `the peer's project ${pair.remote} is mapped twice`);
    seen.add(pair.remote);
  }
  return pairs;
}

/** Every local project of the mapping exists here (422 naming the first that does not). */
export async function checkLocalProjects(store: Store, r: Reader, mapping: readonly ProjectMapping[]): Promise<void> {
  for (const [index, pair] of mapping.entries()) {
    if (!(await store.projects.byId(r, pair.local))) throw invalid(`projects.${index}`, `no such project here: ${pair.local}`);
  }
}

/** The same link seen from the other side: what it pulls from us is what we pull into. */
export const inverted = (mapping: readonly ProjectMapping[]): ProjectMapping[] => mapping.map((pair) => ({ remote: pair.local, local: pair.remote }));
