import { createHash } from "node:crypto";
import { invalid, notFound } from "../../core/errors.js";
import { nameBasedId } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { FeedPosition, FeedRow, FeedSelection } from "../../store/memory-feed.js";
import type { Store } from "../../store/store.js";
import type { MemoryType } from "../../wire/memory.js";
import type { JsonFeed } from "../../wire/memory-feed.js";
import { grantReaches, viewpointOf, type Caller } from "../caller.js";
import type { Instance } from "../instance.js";
import { leavesCodeOut } from "../memory-records.js";
import { decodeCursor, encodeCursor, isKeyset } from "../paging.js";
import { atomOf } from "./atom.js";
import { feedEntryOf, type FeedEntry, type FeedSite } from "./items.js";
import { jsonFeedOf, type FeedPageView } from "./json-feed.js";

/** Where the two feeds are served; their URLs are written into the feeds themselves. */
export const FEED_PATHS = { json: "/memory/feed.json", atom: "/memory/feed.atom" } as const;

/** A feed request as the operations validated it. */
export interface FeedQuery {
  project?: string | null | undefined;
  tag?: string | undefined;
  type?: MemoryType | undefined;
  agent?: string | undefined;
  source_kind?: string | undefined;
  ids?: string[] | undefined;
  include_deleted?: boolean | undefined;
  order: "updated" | "changes";
  since_seq?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** A feed as rendered, or word that the client's copy (its `If-None-Match`) is current. */
export type RenderedFeed<Body> =
  | { etag: string; notModified: true }
  | { etag: string; notModified: false; body: Body; next: { url: string; cursor: string } | null };

interface FeedPage {
  entries: FeedEntry[];
  nextCursor: string | null;
  maxChangeSeq: number;
}

const isChangeCursor = (value: unknown): value is { seq: number } =>
  typeof value === "object" && value !== null && Number.isSafeInteger((value as { seq?: unknown }).seq);

/** What a feed selects, as query parameters in one order: the same selection always reads the same. */
function selectionParams(query: FeedQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.project !== undefined) params.set("project", query.project ?? "");
  for (const key of ["tag", "type", "agent", "source_kind"] as const) {
    const value = query[key];
    if (value !== undefined) params.set(key, value);
  }
  if (query.ids !== undefined) params.set("ids", query.ids.join(","));
  if (query.include_deleted === true) params.set("include_deleted", "true");
  if (query.order === "changes") params.set("order", "changes");
  return params;
}

/**
 * The query string of a feed URL, from what was validated: never the credentials a request may
 * carry in its own query, so the links a feed hands out (`feed_url`, `next_url`, the Atom links)
 * hold no secret, and a reader adds its credentials to each as it did to the first.
 */
function searchOf(query: FeedQuery, cursor: string | null): string {
  const params = selectionParams(query);
  if (query.since_seq !== undefined) params.set("since_seq", String(query.since_seq));
  params.set("limit", String(query.limit));
  if (cursor !== null) params.set("cursor", cursor);
  return params.toString();
}

/**
 * An entity tag of a rendered body: any change of what the feed shows changes it (an entry, the
 * newest change, the links), and the same body always gets the same one, on every server.
 */
const etagOf = (body: string): string => `"${createHash("sha256").update(body, "utf8").digest("base64url")}"`;

/** Whether an `If-None-Match` value names `etag` (or is `*`); weak tags compare as strong ones, as RFC 9110 says for this header. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}

/**
 * The outbound feeds (CONTRACT §15): the caller's visible, shared entries as JSON Feed and Atom,
 * newest change first or in the order their changes committed (`order=changes`, which peers pull
 * in). Private entries and directives are never in them; compiled code only when asked for by type
 * or provenance, as in every read.
 */
export class MemoryFeed {
  constructor(
    private readonly store: Store,
    private readonly instance: Pick<Instance, "id" | "name">,
    private readonly site: { url: string },
  ) {}

  async json(caller: Caller, query: FeedQuery, ifNoneMatch?: string): Promise<RenderedFeed<JsonFeed>> {
    const { view, site } = await this.view(caller, query, FEED_PATHS.json);
    const body = jsonFeedOf(view, site);
    return this.rendered(body, JSON.stringify(body), view, ifNoneMatch);
  }

  async atom(caller: Caller, query: FeedQuery, ifNoneMatch?: string): Promise<RenderedFeed<string>> {
    const { view } = await this.view(caller, query, FEED_PATHS.atom);
    const body = atomOf({ ...view, feedId: this.feedId(query), homeUrl: this.siteUrl() });
    return this.rendered(body, body, view, ifNoneMatch);
  }

  private rendered<Body>(body: Body, text: string, view: FeedPageView & { nextCursor: string | null }, ifNoneMatch: string | undefined): RenderedFeed<Body> {
    const etag = etagOf(text);
    if (matches(ifNoneMatch, etag)) return { etag, notModified: true };
    const next = view.nextUrl === null || view.nextCursor === null ? null : { url: view.nextUrl, cursor: view.nextCursor };
    return { etag, notModified: false, body, next };
  }

  private siteUrl(): string {
    return this.site.url.replace(/\/+$/, "");
  }

  /**
   * The Atom feed's id: one per selection on this instance (the filters, not the page), so every
   * page of a feed and every fetch of it carry the same id, and another selection another one.
   */
  private feedId(query: FeedQuery): string {
    return nameBasedId(this.instance.id, `${FEED_PATHS.atom}?${selectionParams(query).toString()}`);
  }

  private async view(caller: Caller, query: FeedQuery, path: string): Promise<{ view: FeedPageView & { nextCursor: string | null }; site: FeedSite }> {
    const site: FeedSite = { instanceId: this.instance.id, instanceName: this.instance.name, url: this.siteUrl() };
    const page = await this.page(caller, query, site);
    const url = (cursor: string | null): string => `${site.url}${path}?${searchOf(query, cursor)}`;
    const scope = query.project === undefined ? "" : query.project === null ? " (global)" : ` (${query.project})`;
    return {
      site,
      view: {
        title: `${this.instance.name}: Cairn memory${scope}`,
        feedUrl: url(null),
        nextUrl: page.nextCursor === null ? null : url(page.nextCursor),
        nextCursor: page.nextCursor,
        entries: page.entries,
        maxChangeSeq: page.maxChangeSeq,
      },
    };
  }

  private async page(caller: Caller, query: FeedQuery, site: FeedSite): Promise<FeedPage> {
    if (query.since_seq !== undefined && query.order !== "changes") throw invalid("since_seq", "only with order=changes");
    const selection: FeedSelection = {
      project: query.project,
      tag: query.tag,
      type: query.type,
      agent: query.agent,
      sourceKind: query.source_kind,
      ids: query.ids,
      includeDeleted: query.include_deleted === true,
      excludeCompiled: leavesCodeOut({ type: query.type, sourceKind: query.source_kind }),
    };
    const grant = caller.mesh;
    if (grant !== undefined) {
      // A peer reads what its token grants, as if it could see every project, but only those.
      if (query.project !== undefined && !grantReaches(grant, query.project)) throw notFound("project");
      selection.grant = { projects: grant.projects, includeGlobal: grant.includeGlobal };
      selection.excludeCompiled = true;
    }
    let position: FeedPosition;
    if (query.order === "changes") {
      const after = decodeCursor(query.cursor, isChangeCursor);
      position = { order: "changes", afterSeq: after?.seq ?? query.since_seq ?? 0 };
    } else {
      position = { order: "updated", after: decodeCursor(query.cursor, isKeyset) };
    }
    const reader = this.store.reader;
    const viewpoint = grant === undefined ? viewpointOf(caller) : { agentId: caller.agentId, allProjects: true };
    const at = now();
    // The newest change first, then the page: every change up to it has committed before the page
    // is read (seqs become visible in commit order), so the last page holds every change up to
    // `max_change_seq` and a reader that moves its cursor there skips nothing.
    const maxChangeSeq = await this.store.memoryFeed.newestChange(reader, viewpoint, at, selection);
    const rows = await this.store.memoryFeed.page(reader, viewpoint, at, selection, position, query.limit + 1);
    const more = rows.length > query.limit;
    const kept = more ? rows.slice(0, query.limit) : rows;
    const last = kept.at(-1);
    const keyOf = (row: FeedRow): unknown => (query.order === "changes" ? { seq: row.change_seq } : { at: row.updated_at, pk: row.pk });
    return {
      entries: kept.map((row) => feedEntryOf(row, site, at)),
      nextCursor: more && last !== undefined ? encodeCursor(keyOf(last)) : null,
      maxChangeSeq,
    };
  }
}
