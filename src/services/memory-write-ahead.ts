import { now } from "../core/time.js";
import type { DuplicateKey } from "../store/memory.js";
import type { Store, Tx } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { Caller } from "./caller.js";
import { locks } from "./locks.js";
import type { OverlapFinder, Survey } from "./memory-overlap.js";
import { newMemoryRow, toEntry, type NewEntryFields } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import type { WriteResult } from "./memory.js";

/** A write that inserts its entry ahead of its project's lock, as `MemoryService.writeAs` planned it. */
export interface AheadWrite {
  caller: Caller;
  viewpoint: Viewpoint;
  dupKey: DuplicateKey;
  vector: Float32Array;
  survey: Survey;
  fields: NewEntryFields;
  check: boolean;
  recorded: ((tx: Tx, entryId: string) => Promise<void>) | undefined;
}

/** Rolls back a write inserted ahead of its lock, for the careful way. */
class AheadRefused extends Error {}

/**
 * A write's usual outcome, a new entry, inserted ahead of its project's lock: the insert (above all
 * pgvector's HNSW insert, most of a write's time in its transaction) runs beside the project's
 * other writes, and the lock covers only the check of what committed since the survey, the event
 * and the commit. Until then the row is seen by no other transaction, and its own checks pass it
 * over. Two such writes of one fact cannot both commit: the second to take the lock sees the
 * first. Undefined when the checks find a duplicate or would have to scan again (a scan would
 * meet the row): the transaction rolls back, the row with it, and the write goes the careful way.
 */
export async function writeAhead(store: Store, writes: MemoryWrites, overlap: OverlapFinder, write: AheadWrite): Promise<WriteResult | undefined> {
  const { caller, viewpoint, dupKey, vector, survey, fields, check } = write;
  try {
    return await store.transaction(async (tx): Promise<WriteResult> => {
      const stored = await writes.insert(tx, newMemoryRow(caller.agentId, fields, now()), fields.tags, vector);
      await tx.lock(locks.memoryWrite(fields.project));
      const at = now();
      const near = await overlap.catchUp(tx, survey, viewpoint, dupKey, vector, at, true);
      if (!near || (check && (await overlap.nearDuplicate(tx, dupKey, fields.content, near, at)))) throw new AheadRefused();
      const created = await writes.announce(tx, caller.agentId, stored);
      await write.recorded?.(tx, created.id);
      return { created: true, entry: { ...toEntry(created), similar: overlap.similarAmong(near) } };
    });
  } catch (error) {
    if (error instanceof AheadRefused) return undefined;
    throw error;
  }
}
