import { safeUrl } from "../../net/safe-url.js";
import type { FeedRow } from "../../store/feeds.js";
import type { Feed } from "../../wire/feeds.js";
import type { Caller } from "../caller.js";
import { statusOf } from "./schedule.js";

export type FeedStatus = Feed["status"];

/** The URL as subscriptions are told apart: what the URL parser normalises (scheme, host, port), without a fragment. */
export function urlKey(url: string): string {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

/** Whether the caller sees the subscription's URL whole (a query string may hold a private token). */
const seesWholeUrl = (caller: Caller, row: Pick<FeedRow, "agent_id">): boolean => caller.role === "owner" || caller.agentId === row.agent_id;

export function toFeed(row: FeedRow, caller: Caller): Feed {
  return {
    id: row.id,
    project: row.project,
    agent_id: row.agent_id,
    url: seesWholeUrl(caller, row) ? row.url : safeUrl(row.url),
    name: row.name,
    tags: JSON.parse(row.tags) as string[],
    interval_minutes: row.interval_minutes,
    max_items_per_poll: row.max_items_per_poll,
    confidence: row.confidence,
    paused: row.paused === 1,
    status: statusOf(row),
    last_polled_at: row.last_polled_at,
    last_success_at: row.last_success_at,
    last_error: row.last_error,
    next_poll_at: row.next_poll_at,
    items_ingested: row.items_ingested,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
