import { invalid } from "../core/errors.js";
import { normalizeTimestamp } from "../core/time.js";
import type { Db } from "../store/db.js";
import { listEvents } from "../store/events.js";
import { toEventRecord, type EventRecord } from "../events/bus.js";
import { viewerOf, type Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";

export interface EventQuery {
  since: string;
  type?: string | undefined;
  agent?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** `since` is a timestamp, or `seq:<n>` to continue exactly after a known event. */
export function parseSince(since: string): { afterSeq: number } | { since: string } {
  const seq = /^seq:(\d{1,15})$/.exec(since);
  if (seq?.[1] !== undefined) return { afterSeq: Number(seq[1]) };
  const timestamp = normalizeTimestamp(since);
  if (timestamp === undefined) throw invalid("since", "expected an RFC 3339 timestamp or seq:<n>");
  return { since: timestamp };
}

const isSeq = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export class EventService {
  constructor(private readonly db: Db) {}

  list(caller: Caller, query: EventQuery): Page<EventRecord> {
    const afterSeq = decodeCursor(query.cursor, isSeq);
    const start = afterSeq === null ? parseSince(query.since) : { afterSeq };
    const rows = listEvents(this.db, viewerOf(caller), start, query, query.limit + 1);
    return pageOf(rows, query.limit, toEventRecord, (row) => row.seq);
  }
}
