import type { EventAppend } from "../sql/events.js";
import { pgTxOf } from "./transactions.js";
import { EVENTS_CHANNEL } from "./wakeups.js";

/** Held by every transaction that writes events, from its first until it ends. */
const EVENTS_LOCK = "cairn:events";

// Transactions overlap here, and a seq is drawn when the row is inserted, not when it commits: a
// reader that has passed seq 7 could later meet a 6 that committed after it. So the first event
// a transaction writes takes the events' lock, held until that transaction ends: seqs are drawn,
// and become visible, in commit order. That transaction also notifies the other servers' listeners
// (PostgreSQL delivers it at commit, once per transaction and payload; never after a rollback).
//
// The first event takes the lock, notifies and inserts in one statement (one round trip while
// the lock is held, not three): the row comes from a subquery that takes the lock first, so its
// seq is drawn under it. The notification names the store that sent it (`sender`): that store's
// bus reads the log after its own commits already, and its listener passes over its own.
export function pgEventAppend(sender: string): EventAppend {
  return async (tx, insert) => {
    const state = pgTxOf(tx);
    if (state.eventsLocked) return insert();
    const seq = await insert({
      sql: "FROM (SELECT pg_advisory_xact_lock(hashtextextended(?, 0)), pg_notify(?, ?)) AS locked",
      params: [EVENTS_LOCK, EVENTS_CHANNEL, sender],
    });
    state.holdLock(EVENTS_LOCK);
    state.eventsLocked = true;
    // Held from here (the statement that took it may have waited for it first: not held then).
    state.eventsLockedAt = performance.now();
    return seq;
  };
}
