import { randomUUID } from "node:crypto";
import { AppError, conflict, forbidden, invalid, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { FeedPatch, FeedRow } from "../../store/feeds.js";
import { ConstraintViolation, type Store } from "../../store/store.js";
import type { Feed, FeedPollResult } from "../../wire/feeds.js";
import { checkProjectWrite } from "../access.js";
import { viewpointOf, type Caller } from "../caller.js";
import { claimWhenFree } from "../claim-loop.js";
import { pageOf, decodeCursor, type Page } from "../paging.js";
import { FeedFetchError, type FeedFetcher, type FeedResponse } from "./fetcher.js";
import { FeedDocumentError } from "./document-error.js";
import type { FeedPolls, FetchedFeed } from "./polls.js";
import { safeUrl } from "../../net/safe-url.js";
import { toFeed, urlKey } from "./records.js";

/** Subscriptions a project (or global memory) may hold. */
const MAX_FEEDS_PER_PROJECT = 200;
/** How long a poll may hold a feed before another process may take it over (a dead server's poll lapses). */
export const POLL_LEASE_SECONDS = 600;

export interface SubscribeInput {
  url: string;
  name?: string | undefined;
  project?: string | null | undefined;
  tags?: string[] | undefined;
  interval_minutes?: number | undefined;
  max_items_per_poll?: number | undefined;
  confidence?: number | undefined;
}

export type FeedChanges = { [K in "name" | "tags" | "interval_minutes" | "max_items_per_poll" | "confidence" | "paused"]?: Feed[K] | undefined };

const isPkCursor = (value: unknown): value is { pk: number } =>
  typeof value === "object" && value !== null && Number.isInteger((value as { pk?: unknown }).pk);

/**
 * Feed subscriptions (CONTRACT §15): who may subscribe, see, change and poll them. The polls
 * themselves, scheduled or asked for, are FeedPolls'.
 */
export class FeedService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly fetcher: FeedFetcher,
    private readonly polls: FeedPolls,
  ) {}

  async subscribe(caller: Caller, input: SubscribeInput, verify: boolean): Promise<Feed> {
    const reader = this.store.reader;
    const project = input.project === undefined ? ((await this.store.agents.get(reader, caller.agentId))?.current_project ?? null) : input.project;
    await checkProjectWrite(this.store.projects, reader, caller, project);
    const refusal = await this.fetcher.refusal(input.url);
    if (refusal !== null) throw invalid("url", `url not allowed: ${refusal}`, `url not allowed: ${refusal}`);
    const key = urlKey(input.url);
    const existing = await this.store.feeds.byUrl(reader, project, key);
    if (existing) throw alreadySubscribed(existing.id);
    if ((await this.store.feeds.countInProject(reader, project)) >= MAX_FEEDS_PER_PROJECT) {
      throw conflict(`the project holds ${MAX_FEEDS_PER_PROJECT} subscriptions, the most it may; delete one first`);
    }
    const tested = verify ? await this.testFetch(input.url) : undefined;

    const at = now();
    const holder = `subscribe:${randomUUID()}`;
    const row: Omit<FeedRow, "pk"> = {
      id: newId(),
      project,
      agent_id: caller.agentId,
      url: input.url,
      url_key: key,
      name: input.name ?? (tested?.parsed.title?.slice(0, 200) || new URL(input.url).hostname),
      tags: JSON.stringify([...new Set(input.tags ?? [])]),
      interval_minutes: input.interval_minutes ?? 60,
      max_items_per_poll: input.max_items_per_poll ?? 20,
      confidence: input.confidence ?? 0.5,
      paused: 0,
      failing: 0,
      failures: 0,
      last_polled_at: null,
      last_success_at: null,
      last_error: null,
      // Without a test fetch, the poller takes it on its next round (within a minute).
      next_poll_at: at,
      etag: null,
      last_modified: null,
      items_ingested: 0,
      primed: 0,
      // With one, this request polls it with what it fetched: the poller keeps off until then.
      lease_until: tested ? addSeconds(at, POLL_LEASE_SECONDS) : null,
      lease_holder: tested ? holder : null,
      created_at: at,
      updated_at: at,
    };
    let pk: number;
    try {
      pk = await this.store.transaction(async (tx) => {
        const inserted = await this.store.feeds.insert(tx, row);
        if (row.lease_holder !== null) await this.store.feeds.claimOne(tx, inserted, at, holder, row.lease_until as string);
        await this.bus.emit(tx, { type: "feed.created", agentId: caller.agentId, project, payload: { feed_id: row.id, project } });
        return inserted;
      });
    } catch (error) {
      // Two subscriptions of one URL racing: the unique key let one in.
      const winner = error instanceof ConstraintViolation ? await this.store.feeds.byUrl(this.store.reader, project, key) : undefined;
      if (winner) throw alreadySubscribed(winner.id);
      throw error;
    }
    if (tested) await this.polls.run({ ...row, pk }, holder, tested);
    return toFeed((await this.store.feeds.byId(this.store.reader, row.id)) as FeedRow, caller);
  }

  /** The test fetch of a new subscription: a feed that answers, and is a feed. */
  private async testFetch(url: string): Promise<FetchedFeed> {
    let response: FeedResponse;
    try {
      response = await this.fetcher.get(url, { accept: "application/feed+json, application/atom+xml, application/rss+xml, application/xml;q=0.9, */*;q=0.5" });
    } catch (error) {
      if (error instanceof FeedFetchError && error.refused) throw invalid("url", `url not allowed: ${error.message}`, `url not allowed: ${error.message}`);
      throw upstream(url, error instanceof FeedFetchError ? error.message : "the request failed");
    }
    if (response.status < 200 || response.status > 299) throw upstream(url, `it answered HTTP ${response.status}`);
    try {
      return { response, parsed: await this.polls.parse(response, url) };
    } catch (error) {
      if (error instanceof FeedDocumentError) throw invalid("url", `not a feed: ${error.message}`, `not a feed: ${error.message}`);
      throw error;
    }
  }

  async list(caller: Caller, input: { project?: string | null | undefined; limit: number; cursor?: string | undefined }): Promise<Page<Feed>> {
    const after = decodeCursor(input.cursor, isPkCursor);
    const rows = await this.store.feeds.list(this.store.reader, viewpointOf(caller), input.project, after?.pk ?? 0, input.limit + 1);
    return pageOf(rows, input.limit, (row) => toFeed(row, caller), (row) => ({ pk: row.pk }));
  }

  async get(caller: Caller, id: string): Promise<Feed> {
    return toFeed(await this.visible(caller, id), caller);
  }

  async update(caller: Caller, id: string, changes: FeedChanges): Promise<Feed> {
    const current = await this.changeable(caller, id);
    const at = now();
    const patch: FeedPatch = { updated_at: at };
    const changed: string[] = [];
    const set = <K extends keyof FeedPatch>(field: string, key: K, value: FeedPatch[K], was: unknown): void => {
      if (value === undefined || value === was) return;
      patch[key] = value;
      changed.push(field);
    };
    set("name", "name", changes.name, current.name);
    set("tags", "tags", changes.tags === undefined ? undefined : JSON.stringify([...new Set(changes.tags)]), current.tags);
    set("interval_minutes", "interval_minutes", changes.interval_minutes, current.interval_minutes);
    set("max_items_per_poll", "max_items_per_poll", changes.max_items_per_poll, current.max_items_per_poll);
    set("confidence", "confidence", changes.confidence, current.confidence);
    set("paused", "paused", changes.paused === undefined ? undefined : changes.paused ? 1 : 0, current.paused);
    if (changed.length === 0) return toFeed(current, caller);
    // A new interval counts from the last poll; a feed resumed polls on the poller's next round.
    if (patch.interval_minutes !== undefined && current.last_polled_at !== null) patch.next_poll_at = addSeconds(current.last_polled_at, patch.interval_minutes * 60);
    if (patch.paused === 0) patch.next_poll_at = at;
    const updated = await this.store.transaction(async (tx) => {
      await this.store.feeds.patch(tx, current.pk, patch);
      await this.bus.emit(tx, { type: "feed.updated", agentId: caller.agentId, project: current.project, payload: { feed_id: current.id, project: current.project, changed } });
      return this.store.feeds.byId(tx, current.id);
    });
    if (!updated) throw notFound("feed");
    return toFeed(updated, caller);
  }

  async remove(caller: Caller, id: string): Promise<void> {
    const current = await this.changeable(caller, id);
    await this.store.transaction(async (tx) => {
      if (!(await this.store.feeds.delete(tx, current.pk))) throw notFound("feed");
      await this.bus.emit(tx, { type: "feed.deleted", agentId: caller.agentId, project: current.project, payload: { feed_id: current.id, project: current.project } });
    });
  }

  /** Polls now, paused or not, after any poll under way has ended (409 when one still holds it after a wait); 502 when the feed fails. */
  async pollNow(caller: Caller, id: string): Promise<FeedPollResult> {
    const holder = `request:${randomUUID()}`;
    const claimed = await claimWhenFree(async () => {
      const current = await this.changeable(caller, id);
      const at = now();
      return this.store.transaction((tx) => this.store.feeds.claimOne(tx, current.pk, at, holder, addSeconds(at, POLL_LEASE_SECONDS)));
    });
    if (!claimed) throw conflict("a poll of the feed is still under way; try again shortly");
    const result = await this.polls.run(claimed, holder);
    if (result.error !== null) throw upstream(claimed.url, result.error);
    return { ingested: result.ingested, not_modified: result.not_modified, status: result.status };
  }

  private async visible(caller: Caller, id: string): Promise<FeedRow> {
    const row = await this.store.feeds.byId(this.store.reader, id);
    if (!row) throw notFound("feed");
    const viewpoint = viewpointOf(caller);
    if (row.project !== null && !viewpoint.allProjects && !(await this.store.projects.isMember(this.store.reader, row.project, caller.agentId))) throw notFound("feed");
    return row;
  }

  /** A subscription the caller may change: its subscriber's, or any for the owner role. */
  private async changeable(caller: Caller, id: string): Promise<FeedRow> {
    const row = await this.visible(caller, id);
    if (caller.role !== "owner" && caller.agentId !== row.agent_id) throw forbidden("only the subscriber or an owner may change this feed");
    return row;
  }
}

const alreadySubscribed = (id: string): AppError => new AppError("CONFLICT", "already subscribed", { extra: { id } });

/** 502: the feed failed while the request waited; named without its query string, its body never quoted. */
const upstream = (url: string, reason: string): AppError => new AppError("UPSTREAM_ERROR", `feed ${safeUrl(url)} failed: ${reason}`);
