import { AppError } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { FeedPatch, FeedRow } from "../../store/feeds.js";
import type { Store } from "../../store/store.js";
import type { FeedPollResult } from "../../wire/feeds.js";
import type { MemoryService } from "../memory.js";
import { FeedFetchError, type FeedFetcher, type FeedResponse } from "./fetcher.js";
import type { ReadyItem } from "./items.js";
import { FeedDocumentError } from "./document-error.js";
import type { FeedParseThread, ParsedItems } from "./parse-thread.js";

/** A feed fetched and parsed already (a subscription's test fetch, which its first poll uses). */
export interface FetchedFeed {
  response: FeedResponse;
  parsed: ParsedItems;
}
import { FAILURES_TO_FAIL, nextPollDelaySeconds, retryAfterSeconds, statusOf } from "./schedule.js";

/** Tags every entry from a feed carries besides the subscription's own: what it is, and that nobody has looked at it yet. */
const FEED_ENTRY_TAGS = ["feed-item", "unprocessed"];
/** Item keys not seen in a document for this long are forgotten (an item that left its feed rarely comes back). */
const ITEM_MEMORY_DAYS = 90;

interface Outcome {
  ingested: number;
  notModified: boolean;
  /** Null on success. */
  error: string | null;
  retryAfter: number | null;
  etag?: string | null;
  lastModified?: string | null;
}

/** A poll that failed: why, in words that name no secret (the fetcher's messages carry no query string). */
class PollFailure extends Error {
  constructor(
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/**
 * One poll of a subscription the caller holds the lease of: fetch (conditionally), parse, turn new
 * items into entries through the ordinary write path, then record the outcome and the next poll
 * and give the lease back. A hostile or broken document costs this one failed poll.
 */
export class FeedPolls {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly memory: MemoryService,
    private readonly fetcher: FeedFetcher,
    private readonly parser: FeedParseThread,
    private readonly log: Logger,
    private readonly maxContentBytes: number,
  ) {}

  /** Polls `row` as `holder`; `fetched` is a document already in hand (a subscription's test fetch). */
  async run(row: FeedRow, holder: string, fetched?: FetchedFeed): Promise<FeedPollResult & { error: string | null }> {
    const outcome = await this.attempt(row, fetched);
    const status = await this.finish(row, holder, outcome);
    return { ingested: outcome.ingested, not_modified: outcome.notModified, status, error: outcome.error };
  }

  private async attempt(row: FeedRow, fetched?: FetchedFeed): Promise<Outcome> {
    let ingested = 0;
    try {
      const response = fetched?.response ?? (await this.fetch(row));
      if (response.status === 304) return { ingested: 0, notModified: true, error: null, retryAfter: null };
      if (response.status < 200 || response.status > 299) {
        throw new PollFailure(`the feed answered HTTP ${response.status}`, retryAfterSeconds(response.header("retry-after")));
      }
      const document = fetched?.parsed ?? (await this.parse(response, row.url));
      ingested = await this.ingest(row, document.items, (count) => (ingested = count));
      return { ingested, notModified: false, error: null, retryAfter: null, etag: response.header("etag") ?? null, lastModified: response.header("last-modified") ?? null };
    } catch (error) {
      const retryAfter = error instanceof PollFailure ? error.retryAfter : null;
      const said = describe(error);
      if (said === null) this.log.error("feed poll failed unexpectedly", { feed_id: row.id, error });
      return { ingested, notModified: false, error: said ?? "the poll failed", retryAfter };
    }
  }

  /** The document's items as entries will hold them, parsed off the event loop. */
  parse(response: FeedResponse, url: string): Promise<ParsedItems> {
    return this.parser.parse(response.body, response.header("content-type"), url, this.maxContentBytes);
  }

  private fetch(row: FeedRow): Promise<FeedResponse> {
    const headers: Record<string, string> = { accept: "application/feed+json, application/atom+xml, application/rss+xml, application/xml;q=0.9, */*;q=0.5" };
    if (row.etag) headers["if-none-match"] = row.etag;
    if (row.last_modified) headers["if-modified-since"] = row.last_modified;
    return this.fetcher.get(row.url, headers);
  }

  /**
   * New items become entries, oldest first, each in its own transaction with the record that it
   * was seen; items past `max_items_per_poll` (and, on the first poll, all but the newest) are
   * marked seen without an entry. Returns how many became (or reinforced) entries.
   */
  private async ingest(row: FeedRow, ready: readonly ReadyItem[], progress: (count: number) => void): Promise<number> {
    const at = now();
    const subscriber = await this.store.agents.get(this.store.reader, row.agent_id);
    if (!subscriber || subscriber.deleted_at !== null) throw new PollFailure("the subscriber no longer exists");
    const { take, skip } = await this.store.transaction(async (tx) => {
      const seen = await this.store.feeds.seenKeys(tx, row.pk, ready.map((item) => item.key), at);
      const fresh = ready.filter((item) => !seen.has(item.key));
      const worth = fresh.filter((item) => item.content !== null);
      const split = { take: worth.slice(0, row.max_items_per_poll), skip: [...worth.slice(row.max_items_per_poll), ...fresh.filter((item) => item.content === null)] };
      for (const item of split.skip) await this.store.feeds.recordItem(tx, row.pk, item.key, null, at);
      return split;
    });
    if (skip.length > 0) this.log.info("feed items passed over", { feed_id: row.id, items: skip.length, first_poll: row.primed === 0 });
    const caller = { agentId: subscriber.agent_id, role: subscriber.role };
    const tags = [...new Set([...(JSON.parse(row.tags) as string[]), ...FEED_ENTRY_TAGS])];
    let ingested = 0;
    for (const item of [...take].reverse()) {
      await this.write(row, caller, tags, item, at);
      progress(++ingested);
    }
    return ingested;
  }

  private async write(row: FeedRow, caller: { agentId: string; role: NonNullable<Awaited<ReturnType<Store["agents"]["get"]>>>["role"] }, tags: string[], item: ReadyItem, at: string): Promise<void> {
    await this.memory.writeFromFeed(
      caller,
      { content: item.content as string, type: "memory", scope: "project", project: row.project, tags, confidence: row.confidence },
      { kind: "feed", feed_id: row.id, url: item.link, guid: item.key },
      (tx, entryId) => this.store.feeds.recordItem(tx, row.pk, item.key, entryId, at),
    );
  }

  /** Records the outcome and gives the lease back; says `feed.polled`, and `feed.failing` when this failure made it so. */
  private async finish(row: FeedRow, holder: string, outcome: Outcome): Promise<FeedPollResult["status"]> {
    const at = now();
    const failures = outcome.error === null ? 0 : row.failures + 1;
    const failing = failures >= FAILURES_TO_FAIL ? 1 : 0;
    const patch: FeedPatch = {
      failures,
      failing,
      last_polled_at: at,
      last_error: outcome.error,
      next_poll_at: addSeconds(at, nextPollDelaySeconds(row, failures, outcome.retryAfter)),
      primed: outcome.error === null ? 1 : row.primed,
    };
    if (outcome.error === null) patch.last_success_at = at;
    if (outcome.etag !== undefined) patch.etag = outcome.etag;
    if (outcome.lastModified !== undefined) patch.last_modified = outcome.lastModified;
    const status = statusOf({ paused: row.paused, failing });
    await this.store.transaction(async (tx) => {
      if (!(await this.store.feeds.finishPoll(tx, row.pk, holder, patch, outcome.ingested))) return;
      const base = { agentId: row.agent_id, project: row.project };
      await this.bus.emit(tx, {
        ...base,
        type: "feed.polled",
        payload: { feed_id: row.id, project: row.project, ingested: outcome.ingested, not_modified: outcome.notModified, status },
      });
      if (failing === 1 && row.failing === 0) await this.bus.emit(tx, { ...base, type: "feed.failing", payload: { feed_id: row.id, project: row.project, failures } });
      await this.store.feeds.forgetItems(tx, addSeconds(at, -ITEM_MEMORY_DAYS * 86400), 1000);
    });
    if (outcome.error !== null) this.log.warn("feed poll failed", { feed_id: row.id, failures, error: outcome.error });
    return status;
  }
}

/** What a failed poll records as its `last_error`; null for a failure that is the server's own (logged instead). */
function describe(error: unknown): string | null {
  if (error instanceof PollFailure || error instanceof FeedFetchError || error instanceof FeedDocumentError) return error.message;
  if (error instanceof AppError) return `an item could not be written: ${error.detail}`;
  return null;
}
