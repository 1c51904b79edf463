import { z } from "zod";
import { FEED_PATHS, type RenderedFeed } from "../src/services/memory-feed/service.js";
import { sourceKind } from "../src/wire/memory.js";
import { jsonFeed } from "../src/wire/memory-feed.js";
import { merkleBucket, merkleSummary } from "../src/wire/merkle.js";
import { defineOperation, notModified, reply, type HttpBinding, type Reply } from "./operation.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";

// The outbound feeds and the merkle summary (CONTRACT §15): read by feed readers and by peers,
// which can be given a URL and little else, so these routes alone also take credentials in the
// query (`agent_id`, `api_key`, or a peer's `mesh_token`), and they have no MCP tool.

const feedInput = z.strictObject({
  project: projectId.nullable().optional().describe("only this project; empty: global entries"),
  tag: z.string().min(1).max(64).optional(),
  type: z.enum(["memory", "doc", "skill", "compiled"]).optional().describe("directives are never in a feed; compiled code only when asked for"),
  agent: z.string().min(1).max(64).optional().describe("author"),
  source_kind: sourceKind.optional().describe("only entries with this provenance"),
  ids: z.array(z.uuid()).min(1).max(200).optional().describe("only these entries: full ids, comma-separated"),
  include_deleted: z.boolean().optional().describe("also tombstones, without content, of deleted and expired entries"),
  order: z
    .enum(["updated", "changes"])
    .default("updated")
    .describe("updated: newest change first; changes: oldest change first, in commit order (change_seq), as a peer pulls"),
  since_seq: z.number().int().min(0).optional().describe("with order=changes: only changes after this change_seq"),
  limit: limitParam(500, 50),
  cursor: cursorParam,
  if_none_match: z.string().max(1000).optional().describe("an ETag this feed gave: 304 when the page is unchanged"),
});

const feedHttp = (path: string, contentType: string): HttpBinding<"if_none_match"> => ({
  method: "GET",
  path,
  contentType,
  headers: { if_none_match: "if-none-match" },
  queryCredentials: true,
  otherStatuses: [{ status: 304, description: "unchanged since the ETag in If-None-Match" }],
  responseHeaders: {
    ETag: "the page's entity tag, for If-None-Match",
    Link: 'the next page with rel="next" (without credentials), when there is one',
    "X-Next-Cursor": "cursor of the next page, when there is one",
  },
});

function feedReply<Body>(feed: RenderedFeed<Body>): Body | Reply<Body> {
  // A feed is per caller: a shared cache may not keep it, and a client asks again each time.
  const headers: Record<string, string> = { ETag: feed.etag, "Cache-Control": "private, no-cache" };
  if (feed.notModified) return notModified(headers);
  if (feed.next !== null) {
    headers.Link = `<${feed.next.url}>; rel="next"`;
    headers["X-Next-Cursor"] = feed.next.cursor;
  }
  return reply(feed.body, { headers });
}

const memoryFeedJson = defineOperation({
  name: "memory_feed_json",
  title: "Memory as a JSON Feed",
  description:
    "Shared entries you can see as JSON Feed 1.1 (application/feed+json), newest change first, or with " +
    "`order=changes&since_seq=` every change after a point in commit order, which is how a peer follows this " +
    "instance. Never private entries or directives. Each item has Cairn's fields under `_cairn` (version, origin, " +
    "change_seq …); the feed's `_cairn` names the instance and its newest change. Credentials may be given in the " +
    "query (`agent_id`, `api_key`) on this route. A peer's mesh token (`pull` or `feed`) reads the shared memory, doc " +
    "and skill entries of its projects.",
  kind: "read",
  mesh: ["pull", "feed"],
  http: feedHttp(FEED_PATHS.json, "application/feed+json"),
  input: feedInput,
  output: jsonFeed,
  async handle({ services, caller }, input) {
    const { if_none_match: ifNoneMatch, ...query } = input;
    return feedReply(await services.memoryFeed.json(caller, query, ifNoneMatch));
  },
});

const memoryFeedAtom = defineOperation({
  name: "memory_feed_atom",
  title: "Memory as an Atom feed",
  description:
    "The same selection as the JSON Feed, as Atom 1.0 (application/atom+xml) for feed readers: plain text " +
    "titles and content, `urn:uuid:` ids, a category per tag, tombstones as RFC 6721 deleted entries. " +
    "Credentials may be given in the query (`agent_id`, `api_key`) on this route.",
  kind: "read",
  mesh: ["pull", "feed"],
  http: feedHttp(FEED_PATHS.atom, "application/atom+xml"),
  input: feedInput,
  output: z.string().describe("the Atom document"),
  async handle({ services, caller }, input) {
    const { if_none_match: ifNoneMatch, ...query } = input;
    return feedReply(await services.memoryFeed.atom(caller, query, ifNoneMatch));
  },
});

const memoryMerkle = defineOperation({
  name: "memory_merkle",
  title: "Merkle summary of a project's entries",
  description:
    "What a peer compares to find what its copy lacks: the shared memory, doc and skill entries of `project` " +
    "(tombstones included) as a root hash and a hash per bucket, or with `bucket` that bucket's entries and " +
    "their leaves. docs/feeds.md defines the hashes. Credentials may be given in the query (`agent_id`, " +
    "`api_key`) on this route.",
  kind: "read",
  restOnly: true,
  mesh: ["pull"],
  http: { method: "GET", path: "/memory/merkle", queryCredentials: true },
  input: z.strictObject({
    project: projectId.nullable().describe("the project; empty: the global entries"),
    bucket: z
      .string()
      .regex(/^[0-9a-fA-F]{2}$/, "must be two hex digits")
      .transform((bucket) => bucket.toLowerCase())
      .optional()
      .describe("two hex digits: that bucket's entries instead of the summary"),
  }),
  output: z.union([merkleSummary, merkleBucket]),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return input.bucket === undefined
      ? services.merkle.summary(caller, input.project)
      : services.merkle.bucket(caller, input.project, input.bucket);
  },
});

export const memoryFeedOperations = [memoryFeedJson, memoryFeedAtom, memoryMerkle];
