import type { ReachedEntry } from "../../store/compile.js";
import type { MemoryRow } from "../../store/memory.js";
import type { Reader, Store, Tx } from "../../store/store.js";
import type { StaleReason } from "../../wire/memory.js";
import { seesAllProjects, type Caller } from "../caller.js";
import type { MemoryWrites } from "../memory-writes.js";

// Staleness (CONTRACT §18). A mark is bookkeeping about an entry, not an edit of it: like a
// headline or a decay it leaves `version` and `updated_at` alone, and says itself in a
// `memory.updated` event (`reason: "stale"`, or `"fresh"` when it clears).

/** A compiled entry whose code changed from `oldSha` to `newSha` in this compile. */
export interface ShaChange {
  entryId: string;
  path: string;
  symbol: string;
  oldSha: string;
  newSha: string;
}

type Marked = Pick<MemoryRow, "pk" | "id" | "type" | "project" | "scope" | "version" | "agent_id" | "source_kind" | "stale_since" | "stale_reason">;

const reasonOf = (row: Pick<MemoryRow, "stale_reason">): StaleReason | null => (row.stale_reason === null ? null : (JSON.parse(row.stale_reason) as StaleReason));

async function setMark<T extends Marked>(store: Store, writes: MemoryWrites, tx: Tx, actor: string, row: T, mark: { since: string; reason: StaleReason } | null): Promise<T> {
  const patch = { stale_since: mark?.since ?? null, stale_reason: mark === null ? null : JSON.stringify(mark.reason) };
  await store.memory.patch(tx, row.pk, patch);
  await writes.emitChange(tx, "memory.updated", actor, row, { reason: mark === null ? "fresh" : "stale" });
  return { ...row, ...patch };
}

/** Clears an entry's mark (its author confirmed it); returns the row as it is now. */
export function clearStaleMark<T extends Marked>(store: Store, writes: MemoryWrites, tx: Tx, actor: string, row: T): Promise<T> {
  return setMark(store, writes, tx, actor, row, null);
}

/**
 * Carries this compile's sha changes to what they reach: every live entry a changed compiled entry
 * grounds and, one level further, every live compiled entry that depends on it (except those this
 * compile rewrote: they describe the code as it is now). An entry stays marked by the first change
 * that reached it: a later change of the same code moves `new_sha` on, one that returns the code
 * to `old_sha` clears the mark, and a change of other code leaves it as it is. Returns the entries
 * marked, each once.
 */
export async function carryShaChanges(
  store: Store,
  writes: MemoryWrites,
  tx: Tx,
  actor: string,
  changes: readonly ShaChange[],
  rewritten: ReadonlySet<string>,
  at: string,
): Promise<MemoryRow[]> {
  if (changes.length === 0) return [];
  const byEntry = new Map(changes.map((change) => [change.entryId, change]));
  const ids = [...byEntry.keys()];
  const reached: ReachedEntry[] = [
    ...(await store.compile.grounded(tx, ids, at)),
    ...(await store.compile.dependents(tx, ids, at)).filter((row) => !rewritten.has(row.id)),
  ];
  // One entry may be reached by several changes: each sees what the one before left.
  const current = new Map<number, MemoryRow>();
  const marked = new Map<number, MemoryRow>();
  for (const { via_id: via, ...reachedRow } of reached) {
    const change = byEntry.get(via);
    if (!change) continue;
    const row = current.get(reachedRow.pk) ?? reachedRow;
    const reason = reasonOf(row);
    let next: { since: string; reason: StaleReason } | null | undefined;
    if (reason === null) {
      next = { since: at, reason: { path: change.path, symbol: change.symbol, old_sha: change.oldSha, new_sha: change.newSha } };
    } else if (reason.path === change.path && reason.symbol === change.symbol) {
      if (reason.old_sha === change.newSha) next = null;
      else if (reason.new_sha !== change.newSha) next = { since: row.stale_since ?? at, reason: { ...reason, new_sha: change.newSha } };
    }
    if (next === undefined) continue;
    const updated = await setMark(store, writes, tx, actor, row, next);
    current.set(row.pk, updated);
    if (next === null) marked.delete(row.pk);
    else marked.set(row.pk, updated);
  }
  return [...marked.values()];
}

// Who hears of a mark (docs/decisions.md, "Hardening part two"). Code may ground entries its
// compiler cannot see — a global function grounds a note in a project, or someone's private note —
// and those entries are marked all the same: their readers are the ones who need to know. But the
// compile's answer names only what its caller may see, and its event, which everyone who sees the
// compile's project reads, counts only what all of them see.

/** The marked entries the caller may see: no id of another project's or another agent's entry. */
export async function markedFor(store: Store, r: Reader, caller: Caller, marked: readonly MemoryRow[]): Promise<MemoryRow[]> {
  const allProjects = seesAllProjects(caller.role);
  const member = new Map<string, boolean>();
  const seen: MemoryRow[] = [];
  for (const row of marked) {
    if (row.scope === "agent") {
      if (row.agent_id === caller.agentId) seen.push(row);
      continue;
    }
    if (row.project === null || allProjects) {
      seen.push(row);
      continue;
    }
    let isMember = member.get(row.project);
    if (isMember === undefined) {
      isMember = await store.projects.isMember(r, row.project, caller.agentId);
      member.set(row.project, isMember);
    }
    if (isMember) seen.push(row);
  }
  return seen;
}

/** How many marked entries every reader of a compile's event in `project` may see: its shared ones and global ones. */
export const markedForEveryone = (marked: readonly MemoryRow[], project: string | null): number =>
  marked.filter((row) => row.scope === "project" && (row.project === null || row.project === project)).length;
