import type { GraphSelection } from "../../store/knowledge.js";
import type { SelectionRanking } from "./rank-selection.js";

/** A selection's ranks as computed (its best-ranked entries and the edges between them), and the change stamp they were computed at. */
export interface RankedSelection extends SelectionRanking {
  stamp: number;
}

/** Selections kept; the least recently used goes first. */
const CAPACITY = 32;

export const selectionKey = (selection: GraphSelection): string =>
  JSON.stringify([selection.projects === null ? null : [...selection.projects].sort(), selection.global, selection.type ?? null, selection.code === true]);

/**
 * Ranks per selection, kept until the selection changes: a change to any entry or edge of its
 * projects (the stamp moves, on this server or another sharing the database), or an entry of it
 * expiring. Concurrent requests for one selection at one stamp share one computation.
 */
export class CentralCache {
  private readonly entries = new Map<string, RankedSelection>();
  private readonly computing = new Map<string, Promise<RankedSelection>>();

  async get(
    selection: GraphSelection,
    stamp: number,
    nowMs: number,
    compute: () => Promise<RankedSelection>,
  ): Promise<{ ranked: RankedSelection; cached: boolean }> {
    const key = selectionKey(selection);
    const held = this.entries.get(key);
    if (held && held.stamp === stamp && nowMs < held.validUntilMs) {
      this.entries.delete(key);
      this.entries.set(key, held);
      return { ranked: held, cached: true };
    }
    // Only requests that saw the same stamp share a computation: a later one must see its change.
    const run = `${key}@${stamp}`;
    let pending = this.computing.get(run);
    if (!pending) {
      pending = compute().finally(() => this.computing.delete(run));
      this.computing.set(run, pending);
    }
    const ranked = await pending;
    this.entries.delete(key);
    this.entries.set(key, ranked);
    while (this.entries.size > CAPACITY) this.entries.delete(this.entries.keys().next().value as string);
    return { ranked, cached: false };
  }
}
