import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  agent_id: string;
  project: string | null;
  private_to: string | null;
  payload: string;
  created_at: string;
  /** 1 when only the agents in the event's audience may see it. */
  restricted: number;
}

export const EVENT_ROW_COLUMNS = rowColumns<EventRow>("events", {
  seq: true, id: true, type: true, agent_id: true, project: true, private_to: true, payload: true, created_at: true, restricted: true,
});

export type NewEventRow = Omit<EventRow, "seq" | "restricted">;

export interface EventFilters {
  /** Exact type, or a family such as `memory.*`. */
  type?: string | undefined;
  agent?: string | undefined;
}

/**
 * The memory entry whose change an event announces: its `change_seq` becomes the event's seq, and
 * its merkle leaf and bucket are stamped from the row as the change left it (so the change must be
 * written first). `localOrigin`: this instance's id, the origin of every entry written here.
 */
export interface AnnouncedChange {
  memoryId: string;
  localOrigin: string;
}

export interface EventStore {
  /**
   * Stores the event and returns its seq; with an `audience`, only those agents may ever see it.
   * With `announces`, the entry is marked with that seq in the same statement where the backend
   * can (PostgreSQL: one round trip fewer while the events' lock is held).
   */
  insert(tx: Tx, row: NewEventRow, audience?: string[], announces?: AnnouncedChange): Promise<number>;
  /**
   * Visible events after `afterSeq` (or created after `since`), in commit order; with `beforeSeq`
   * newest first instead, from just below it down to the start.
   */
  list(
    r: Reader,
    viewpoint: Viewpoint,
    start: { afterSeq: number } | { since: string },
    filters: EventFilters,
    limit: number,
    beforeSeq?: number,
  ): Promise<EventRow[]>;
  /**
   * Every event after `afterSeq` in seq order, whoever may see it, with its audience (null when
   * it has none): what a server hands its live subscribers.
   */
  since(r: Reader, afterSeq: number, limit: number): Promise<(EventRow & { audience: string[] | null })[]>;
  /** The highest seq a reader may pass: every event up to it is committed. */
  maxSeq(r: Reader): Promise<number>;
  /** The highest seq retention has removed: a reader asking to resume before it has missed events. */
  prunedThrough(r: Reader): Promise<number>;
  /**
   * Deletes up to `batch` of the oldest events created before `before` and records how far the log
   * has been cut; returns how many went. Called in a loop, one transaction per batch.
   */
  pruneBatch(tx: Tx, before: string, batch: number): Promise<number>;
}
