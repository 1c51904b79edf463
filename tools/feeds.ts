import { z } from "zod";
import { feed, feedPollResult } from "../src/wire/feeds.js";
import { defineOperation } from "./operation.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";

const feedId = z.uuid().describe("the subscription's id");
const feedTags = z.array(z.string().trim().min(1).max(64)).max(8).describe("up to 8 tags every entry from the feed carries");
const interval = z.number().int().min(15).max(1440).describe("minutes between polls, 15 to 1440");
const maxItems = z.number().int().min(1).max(100).describe("new items taken per poll, 1 to 100");
const confidence = z.number().min(0).max(0.8).describe("the entries' confidence, 0 to 0.8");

const feedSubscribe = defineOperation({
  name: "feed_subscribe",
  title: "Subscribe to a feed",
  description:
    "Follow an RSS, Atom or JSON Feed URL (release notes, changelogs, status pages): its new items become memory entries in the project, " +
    "tagged feed-item and unprocessed, so they turn up in searches. The URL is fetched once to check it is a feed unless verify=false.",
  kind: "create",
  http: { method: "POST", path: "/feeds", query: ["verify"] },
  input: z.strictObject({
    url: z.url({ protocol: /^https?$/ }).max(2048).describe("http(s) URL of the feed; public addresses only unless the operator allows private ones"),
    name: z.string().trim().min(1).max(200).optional().describe("default: the feed's title"),
    project: projectId.nullable().optional().describe("default your current project; null: global"),
    tags: feedTags.optional(),
    interval_minutes: interval.optional().describe("default 60"),
    max_items_per_poll: maxItems.optional().describe("default 20; the first poll takes only this many of the newest"),
    confidence: confidence.optional().describe("default 0.5"),
    verify: z.boolean().optional().describe("false: skip the test fetch; the first poll runs within a minute"),
  }),
  output: feed,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT", "UPSTREAM_ERROR"],
  handle({ services, caller }, { verify, ...input }) {
    return services.feeds.subscribe(caller, input, verify ?? true);
  },
});

const feedList = defineOperation({
  name: "feed_list",
  title: "List feed subscriptions",
  description: "Feed subscriptions of your projects (and global ones), oldest first, with their status, last error and next poll.",
  kind: "list",
  http: { method: "GET", path: "/feeds" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("null (or empty): global subscriptions"),
    limit: limitParam(200, 50),
    cursor: cursorParam,
  }),
  output: feed,
  handle({ services, caller }, input) {
    return services.feeds.list(caller, input);
  },
});

const feedGet = defineOperation({
  name: "feed_get",
  title: "Read a feed subscription",
  description: "One subscription with its status, last error, items ingested and next poll.",
  kind: "read",
  http: { method: "GET", path: "/feeds/:id" },
  input: z.strictObject({ id: feedId }),
  output: feed,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.feeds.get(caller, input.id);
  },
});

const feedUpdate = defineOperation({
  name: "feed_update",
  title: "Change a feed subscription",
  description: "Rename, retag, pause or resume a subscription, or change how often and how much it polls. The subscriber or an owner.",
  kind: "update",
  http: { method: "PATCH", path: "/feeds/:id" },
  input: z.strictObject({
    id: feedId,
    name: z.string().trim().min(1).max(200).optional(),
    tags: feedTags.optional(),
    interval_minutes: interval.optional(),
    max_items_per_poll: maxItems.optional(),
    confidence: confidence.optional(),
    paused: z.boolean().optional(),
  }),
  output: feed,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, { id, ...changes }) {
    return services.feeds.update(caller, id, changes);
  },
});

const feedDelete = defineOperation({
  name: "feed_delete",
  title: "Unsubscribe from a feed",
  description: "Stop following a feed; the entries it brought stay. The subscriber or an owner.",
  kind: "delete",
  http: { method: "DELETE", path: "/feeds/:id" },
  input: z.strictObject({ id: feedId }),
  output: undefined,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  async handle({ services, caller }, input) {
    await services.feeds.remove(caller, input.id);
  },
});

const feedPoll = defineOperation({
  name: "feed_poll",
  title: "Poll a feed now",
  description: "Fetch a subscription now, paused or not, instead of waiting for its next poll (after any poll already running, waiting up to 15 s for it); says how many items became entries. The subscriber or an owner.",
  kind: "action",
  http: { method: "POST", path: "/feeds/:id/poll", status: 200 },
  input: z.strictObject({ id: feedId }),
  output: feedPollResult,
  errors: ["NOT_FOUND", "FORBIDDEN", "CONFLICT", "UPSTREAM_ERROR"],
  handle({ services, caller }, input) {
    return services.feeds.pollNow(caller, input.id);
  },
});

export const feedOperations = [feedSubscribe, feedList, feedGet, feedUpdate, feedDelete, feedPoll];
