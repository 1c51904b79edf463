import type { MemoryPatch, MemoryRow } from "../../store/memory.js";
import type { Store, Tx } from "../../store/store.js";
import type { CompileUnit } from "../../wire/compile.js";
import type { CompileSource } from "../../wire/memory.js";
import type { MemoryEmbeddings } from "../memory-embeddings.js";
import { newMemoryRow } from "../memory-records.js";
import type { MemoryWrites } from "../memory-writes.js";

// A unit's `compiled` entry (CONTRACT §18): what it says, and how it is written and rewritten.

const COMPILED_TAG = "compiled";

/** `path::symbol`, the name a blueprint's `anchor_changed` check uses; a module is its path. */
export const anchorName = (unit: Pick<CompileUnit, "path" | "symbol">): string => (unit.symbol === "" ? unit.path : `${unit.path}::${unit.symbol}`);

/**
 * The entry's content: the code's name, kind and language on the first line (what a search by
 * path or symbol finds), then the signature unless the description already opens with it, then
 * the description. Line numbers stay on the anchor: they move without the code changing.
 */
export function compiledContent(unit: CompileUnit): string {
  const lines = [`${anchorName(unit)} (${unit.kind}, ${unit.lang})`];
  if (unit.signature !== undefined && unit.signature !== "" && !unit.description.includes(unit.signature)) lines.push(unit.signature);
  if (unit.description.trim() !== "") lines.push(unit.description);
  return lines.join("\n");
}

const compiledTags = (unit: CompileUnit): string[] => [...new Set([COMPILED_TAG, unit.lang])];

const compileSourceOf = (unit: CompileUnit, commit: string | null): CompileSource => ({ kind: "compile", path: unit.path, symbol: unit.symbol, sha: unit.sha, commit });

/** Writes and rewrites compiled entries through the one write path every entry takes (DESIGN §4a). */
export class CompiledEntries {
  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly embeddings: MemoryEmbeddings,
  ) {}

  /** The vector of each distinct content, embedded before the transaction (null where there is no model). */
  async embedAll(contents: readonly string[]): Promise<Map<string, Float32Array | null>> {
    const distinct = [...new Set(contents)];
    const vectors = await Promise.all(distinct.map((content) => this.embeddings.embedForWrite(content)));
    return new Map(distinct.map((content, index) => [content, vectors[index] ?? null]));
  }

  /** A new compiled entry by `author`, shared with the project, fully confident. */
  create(tx: Tx, author: string, project: string | null, unit: CompileUnit, commit: string | null, vector: Float32Array | null, at: string): Promise<MemoryRow> {
    const tags = compiledTags(unit);
    const fields = { type: "compiled" as const, project, scope: "project" as const, content: compiledContent(unit), confidence: 1, parents: [], tags, expiresAt: null, source: compileSourceOf(unit, commit) };
    return this.writes.create(tx, author, newMemoryRow(author, fields, at), tags, vector);
  }

  /**
   * The entry of code whose sha changed: its content, tags and source follow the unit, its version
   * moves on, it is embedded again, and a mark it carried is gone (it describes the code as it is
   * now). The author stays; the event is `actor`'s.
   */
  async rewrite(tx: Tx, actor: string, row: MemoryRow, unit: CompileUnit, commit: string | null, vector: Float32Array | null, at: string): Promise<MemoryRow> {
    const tags = compiledTags(unit);
    const candidate: MemoryPatch = {
      content: compiledContent(unit),
      tags: JSON.stringify(tags),
      source: JSON.stringify(compileSourceOf(unit, commit)),
      stale_since: null,
      stale_reason: null,
    };
    const changes: MemoryPatch = {};
    const changed: string[] = [];
    for (const [field, value] of Object.entries(candidate) as [keyof MemoryPatch, unknown][]) {
      if (value === row[field]) continue;
      (changes as Record<string, unknown>)[field] = value;
      // The reason goes with its mark: `stale_since` names both.
      if (field !== "stale_reason") changed.push(field);
    }
    return this.writes.update(tx, actor, row, changes, changed, changes.tags === undefined ? undefined : tags, vector, at);
  }
}
