import { z } from "zod";
import { timestamp } from "./timestamp.js";

// Feed subscriptions: RSS, Atom and JSON Feed documents polled into memory (CONTRACT §15).

const feedStatus = z.enum(["ok", "failing", "paused"]);

/** A subscription as a member of its project reads it. */
export const feed = z
  .object({
    id: z.uuid(),
    project: z.string().nullable(),
    agent_id: z.string().describe("the subscriber, who writes the entries"),
    url: z.string().describe("shown whole to the subscriber and the owner role; others see it without its query part"),
    name: z.string(),
    tags: z.array(z.string()).describe("given to every entry, besides feed-item and unprocessed"),
    interval_minutes: z.number().int(),
    max_items_per_poll: z.number().int(),
    confidence: z.number(),
    paused: z.boolean(),
    status: feedStatus.describe("failing after 3 failed polls in a row, until one succeeds"),
    last_polled_at: timestamp.nullable(),
    last_success_at: timestamp.nullable(),
    last_error: z.string().nullable(),
    next_poll_at: timestamp,
    items_ingested: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Feed" });
export type Feed = z.output<typeof feed>;

/** What a poll on request did. */
export const feedPollResult = z
  .object({
    ingested: z.number().int().describe("items that became entries (or reinforced one)"),
    not_modified: z.boolean().describe("the feed said it had not changed: nothing new"),
    status: feedStatus,
  })
  .meta({ id: "FeedPollResult" });
export type FeedPollResult = z.output<typeof feedPollResult>;
