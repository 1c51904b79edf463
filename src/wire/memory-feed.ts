import { z } from "zod";
import { confidence, entrySource, memoryType, scope } from "./memory.js";
import { timestamp } from "./timestamp.js";

// The outbound JSON Feed (CONTRACT §15): JSON Feed 1.1 with Cairn's fields under `_cairn`, which
// feed readers ignore and a peer replicating this instance reads.

export const JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1";

const feedItemFields = z
  .object({
    type: memoryType,
    scope,
    project: z.string().nullable(),
    agent_id: z.string(),
    version: z.number().int(),
    confidence,
    parents: z.array(z.string()),
    origin: z.string().describe("the id of the instance the entry was written on"),
    origin_name: z.string().describe("that instance's name"),
    source: entrySource.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: timestamp.optional().describe("tombstones only (include_deleted=true): when the entry was deleted or expired"),
    change_seq: z.number().int().describe("the entry's last change in the instance's commit order: order=changes&since_seq continues after it"),
  })
  .meta({ id: "FeedItemFields" });

const jsonFeedItem = z
  .object({
    id: z.uuid(),
    url: z.string().describe("<PUBLIC_URL>/memory/<id>"),
    title: z.string().optional().describe("the headline, or the first line, at most 80 characters; absent on a tombstone"),
    content_text: z.string().describe("the entry's content; empty on a tombstone"),
    date_published: timestamp,
    date_modified: timestamp,
    authors: z.array(z.object({ name: z.string() })),
    tags: z.array(z.string()).optional().describe("absent on a tombstone"),
    _cairn: feedItemFields,
  })
  .meta({ id: "JsonFeedItem" });
export type JsonFeedItem = z.output<typeof jsonFeedItem>;

export const jsonFeed = z
  .object({
    version: z.literal(JSON_FEED_VERSION),
    title: z.string(),
    home_page_url: z.string(),
    feed_url: z.string().describe("this feed, without paging or credentials"),
    next_url: z.string().optional().describe("the next page (without credentials), when there is one"),
    items: z.array(jsonFeedItem),
    _cairn: z.object({
      instance_id: z.uuid(),
      instance_name: z.string(),
      max_change_seq: z.number().int().describe("the highest change_seq in the whole selection (every page), 0 when empty"),
    }),
  })
  .meta({ id: "JsonFeed" });
export type JsonFeed = z.output<typeof jsonFeed>;
