import type { MemoryEntry } from "../src/wire/memory.js";
import type { CairnClient } from "./client.js";

/** Directives one read may return; far above any real team's count. */
const MAX_PER_READ = 1000;
export const MAX_PROJECTS = 500;

export interface DirectiveConflict {
  /** 1-based numbers of the pair in the preamble. */
  i: number;
  j: number;
  a: MemoryEntry;
  b: MemoryEntry;
  similarity: number;
}

/**
 * The directives that apply to a pass over `project` (null: global), in the seed's three reads and
 * order: global, then the project's, then the archivist's private ones; merged, de-duplicated by
 * id with the later read winning, so project directives override global ones and private ones
 * override both. "Global" is `project` null: a directive of another project never crosses over.
 */
export async function loadDirectives(client: CairnClient, project: string | null): Promise<MemoryEntry[]> {
  // Oldest first within a set: numbers stay put as directives are added, and a newer one reads as the later word.
  const read = async (query: Record<string, string | null>) =>
    (await client.all("memory_list", { type: "directive", include_embedding: true, ...query }, MAX_PER_READ)).sort(
      (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
  const global = await read({ scope: "project", project: null });
  const projectSet = project === null ? [] : await read({ scope: "project", project });
  // Private directives made for another project stay out of this one's pass.
  const own = (await read({ scope: "agent" })).filter((entry) => entry.project === null || entry.project === project);
  const merged = new Map<string, MemoryEntry>();
  for (const entry of [...global, ...projectSet, ...own]) {
    merged.delete(entry.id);
    merged.set(entry.id, entry);
  }
  return [...merged.values()];
}

/** One line per directive: new lines inside a directive would break the preamble's shape. */
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Project ids to the names the preamble shows; an id missing from it is shown as is. */
export type ProjectNames = ReadonlyMap<string, string>;

/** The project names the preamble shows (the seed's `(project: <project_name>)`). */
export async function projectNames(client: CairnClient): Promise<ProjectNames> {
  const projects = await client.all("project_list", {}, MAX_PROJECTS);
  return new Map(projects.map((project) => [project.id, project.name]));
}

function directiveLine(entry: MemoryEntry, number: number, names: ProjectNames = new Map()): string {
  const project = entry.project === null ? "global" : (names.get(entry.project) ?? entry.project);
  const label = entry.scope === "agent" ? "(agent-private)" : `(project: ${oneLine(project)})`;
  return `[${number}] ${label} ${oneLine(entry.content)}`;
}

/** The warning line the contract fixes for a conflicting pair. */
export const conflictWarning = (conflict: Pick<DirectiveConflict, "i" | "j">): string =>
  `WARNING: directives [${conflict.i}] and [${conflict.j}] may conflict; use your best judgment and flag the ambiguity in your output.`;

/** The preamble placed before the role description; empty when no directive applies. */
export function preamble(directives: MemoryEntry[], conflicts: DirectiveConflict[] = [], names: ProjectNames = new Map()): string {
  if (directives.length === 0) return "";
  return [
    ...conflicts.map(conflictWarning),
    "--- STANDING DIRECTIVES ---",
    ...directives.map((entry, index) => directiveLine(entry, index + 1, names)),
    "--- END DIRECTIVES ---",
  ].join("\n");
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let k = 0; k < a.length && k < b.length; k++) {
    const x = a[k] as number;
    const y = b[k] as number;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

/** Pairs whose embeddings' cosine exceeds `threshold`; a directive not yet embedded is in no pair. */
export function findConflicts(directives: MemoryEntry[], threshold: number): DirectiveConflict[] {
  const conflicts: DirectiveConflict[] = [];
  directives.forEach((a, ai) => {
    directives.forEach((b, bi) => {
      if (bi <= ai || !a.embedding || !b.embedding) return;
      const similarity = cosine(a.embedding, b.embedding);
      if (similarity > threshold) conflicts.push({ i: ai + 1, j: bi + 1, a, b, similarity });
    });
  });
  return conflicts;
}
