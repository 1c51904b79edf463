import { z } from "zod";
import type { Logger } from "../src/core/log.js";
import type { Capture } from "../src/wire/captures.js";
import { ApiError } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";
import { loadDirectives, preamble, projectNames, type ProjectNames } from "./directives.js";
import { BudgetExhausted, estimateTokens, LlmError, type BudgetedModel } from "./llm/index.js";
import { CAPTURE_ROLE, captureBlock, parseJsonReply, systemPrompt } from "./prompts.js";
import { followEventStream } from "./sse.js";
import { StreamTrigger } from "./trigger.js";

/** Captures one run digests; a longer queue is worked off by the runs after it. */
const MAX_CAPTURES_PER_RUN = 50;
/** Captures one run reads, skipped ones included, before it stops paging. */
const MAX_LISTED_PER_RUN = 500;
/** A page of captures holds their text (up to CAPTURE_MAX_BYTES each): a few at a time. */
const PAGE = 10;
const REPLY_TOKENS = 2000;
const MAX_FACTS = 12;
const MAX_FACT_CHARS = 2000;
const MAX_MODEL_TAGS = 6;
/** The server's limit for one tag. */
const MAX_TAG_CHARS = 64;
const SLUG = /^[a-z0-9][a-z0-9.-]{0,39}$/;
/** A burst of captures (hooks firing together) makes one run, not one each. */
const DEBOUNCE_MS = 100;

const reply = z.object({ facts: z.array(z.unknown()).max(100) });
const fact = z.object({
  content: z.string().trim().min(1).max(MAX_FACT_CHARS),
  tags: z.array(z.unknown()).max(50).optional(),
});

export interface DigestCounts {
  digested: number;
  /** Failed this time; tried again by a later scheduled pass. */
  failed: number;
  /** Failed for the last time (CAPTURE_MAX_ATTEMPTS): never listed again. */
  dead: number;
  /** Entries written, new or reinforced. */
  facts: number;
  reinforced: number;
  /** Facts of a valid reply that were not written (bad shape, a secret, beyond MAX_FACTS). */
  dropped: number;
  calls: number;
  budgetExhausted: boolean;
  /** The run stopped at MAX_CAPTURES_PER_RUN with more captures waiting. */
  more: boolean;
}

const emptyDigestCounts = (): DigestCounts => ({ digested: 0, failed: 0, dead: 0, facts: 0, reinforced: 0, dropped: 0, calls: 0, budgetExhausted: false, more: false });

interface Fact {
  content: string;
  tags: string[];
}

type Outcome = { facts: Fact[]; dropped: number } | { error: string };

/** What one run reads once and uses for every capture: the project names and each project's preamble. */
interface RunCache {
  names: Promise<ProjectNames> | null;
  preambles: Map<string, Promise<string>>;
}

const noop = (): void => undefined;

/** The model's tags as slugs (lower case, dashes for spaces); anything else is dropped, not fixed. */
function slugs(raw: unknown[] | undefined): string[] {
  const tags = new Set<string>();
  for (const item of raw ?? []) {
    if (typeof item !== "string") continue;
    const tag = item.trim().toLowerCase().replace(/[\s_]+/g, "-");
    if (SLUG.test(tag)) tags.add(tag);
    if (tags.size === MAX_MODEL_TAGS) break;
  }
  return [...tags];
}

/** The facts worth writing from a reply: well-formed, no redacted secret, no repeat, at most MAX_FACTS. */
function factsOf(text: string): { facts: Fact[]; dropped: number } | null {
  let parsed: z.output<typeof reply>;
  try {
    parsed = reply.parse(parseJsonReply(text));
  } catch {
    return null;
  }
  const facts: Fact[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  for (const item of parsed.facts) {
    const checked = fact.safeParse(item);
    // A fact that only says where a secret was ("the key is [REDACTED:…]") is not one to keep.
    if (!checked.success || /\[REDACTED/i.test(checked.data.content) || facts.length === MAX_FACTS) {
      dropped++;
      continue;
    }
    const key = checked.data.content.replace(/\s+/g, " ").toLowerCase();
    if (seen.has(key)) {
      dropped++;
      continue;
    }
    seen.add(key);
    facts.push({ content: checked.data.content, tags: slugs(checked.data.tags) });
  }
  return { facts, dropped };
}

/**
 * Digests pending captures (CONTRACT §13) one at a time: one model call per capture extracts
 * durable facts, each written through the ordinary write path with the capture as its source, so
 * the server files it as the capture's author into the capture's project (or the author's private
 * scope) and a fact the team already has reinforces that entry. One digester per shift: its
 * `signal` ends with the shift, and a run stops at the next capture.
 */
export class CaptureDigester {
  private running: Promise<DigestCounts> | null = null;
  private queued: Promise<DigestCounts> | null = null;
  private queuedRetry = false;

  constructor(
    private readonly client: CairnClient,
    private readonly model: BudgetedModel,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * One run over the queue, oldest first, digesting at most MAX_CAPTURES_PER_RUN. Never two at
   * once: a call while a run is under way gets the next run, shared by every caller meanwhile,
   * because the one under way may have read the queue before their capture arrived.
   * `retryFailed` (the scheduled pass) includes captures that failed before; event-driven runs
   * take only new ones, so a model outage costs a capture one attempt per pass, not one per event.
   */
  run(retryFailed: boolean): Promise<DigestCounts> {
    if (this.running === null) {
      const run = this.digestQueue(retryFailed).finally(() => {
        this.running = null;
      });
      this.running = run;
      return run;
    }
    this.queuedRetry ||= retryFailed;
    this.queued ??= this.running.then(noop, noop).then(() => {
      const retry = this.queuedRetry;
      this.queued = null;
      this.queuedRetry = false;
      return this.run(retry);
    });
    return this.queued;
  }

  private async digestQueue(retryFailed: boolean): Promise<DigestCounts> {
    const counts = emptyDigestCounts();
    const cache: RunCache = { names: null, preambles: new Map() };
    let worked = 0;
    let listed = 0;
    let cursor: string | undefined;
    // Paged by cursor rather than re-reading the head: a capture that fails stays pending and is not met twice in a run.
    while (!this.signal.aborted && listed < MAX_LISTED_PER_RUN) {
      const page = await this.client.page("capture_list", { limit: PAGE, cursor });
      for (const capture of page.items) {
        listed++;
        if (this.signal.aborted) return counts;
        if (capture.attempts > 0 && !retryFailed) continue;
        if (worked === MAX_CAPTURES_PER_RUN) {
          counts.more = true;
          return counts;
        }
        if (!(await this.digest(capture, cache, counts))) {
          counts.budgetExhausted = true;
          return counts;
        }
        worked++;
      }
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    return counts;
  }

  /** Digests one capture and reports it; false when the budget cannot pay for it (left pending, unreported). */
  private async digest(capture: Capture, cache: RunCache, counts: DigestCounts): Promise<boolean> {
    const outcome = await this.extract(capture, cache, counts);
    if (outcome === null) return false;
    const dropped = "facts" in outcome ? outcome.dropped : 0;
    counts.dropped += dropped;
    const result = "facts" in outcome ? await this.write(capture, outcome.facts, counts) : outcome;
    await this.report(capture, result, dropped, counts);
    return true;
  }

  /** The facts the model finds in a capture, or why there are none; null when the budget cannot pay for the call. */
  private async extract(capture: Capture, cache: RunCache, counts: DigestCounts): Promise<Outcome | null> {
    const system = systemPrompt(await this.preambleFor(capture.project, cache), CAPTURE_ROLE);
    const user = captureBlock(capture);
    // A capture no hour's budget could pay for would otherwise block the head of the queue until it expires.
    if (this.model.budget.perHour > 0 && estimateTokens(system + user) + REPLY_TOKENS > this.model.budget.perHour) {
      return { error: "the capture is too large for the hourly token budget" };
    }
    let text: string;
    try {
      text = (await this.model.complete({ system, user, maxTokens: REPLY_TOKENS })).text;
      counts.calls++;
    } catch (error) {
      if (error instanceof BudgetExhausted) return null;
      if (!(error instanceof LlmError)) throw error;
      this.log.warn("capture digest call failed", { capture_id: capture.id, error });
      // The provider's message may quote the prompt: the report, which its author reads, names only the status.
      return { error: `the model call failed${error.status === null ? "" : ` (${error.status})`}` };
    }
    return factsOf(text) ?? { error: "the model's reply was not the expected JSON" };
  }

  /** Writes the facts as entries from the capture; the ids, or why a write was refused. */
  private async write(capture: Capture, facts: Fact[], counts: DigestCounts): Promise<{ ids: string[] } | { error: string }> {
    const base = ["capture", ...(capture.session_id === null ? [] : [`session:${capture.session_id}`.slice(0, MAX_TAG_CHARS)])];
    const ids: string[] = [];
    for (const item of facts) {
      try {
        // No project: the server files the fact where the capture belongs, and refuses any other.
        const written = await this.client.call("memory_write", {
          content: item.content,
          type: "memory",
          tags: [...new Set([...base, ...item.tags])],
          source: { kind: "capture", capture_id: capture.id },
        });
        if (!ids.includes(written.id)) ids.push(written.id);
        counts.facts++;
        if (written.duplicate_of !== undefined) counts.reinforced++;
      } catch (error) {
        // A 409 is a lost lease: nothing more may be written, and the run ends.
        if (!(error instanceof ApiError) || error.status === 409) throw error;
        return { error: `writing a fact was refused (${error.status} ${error.code})` };
      }
    }
    return { ids };
  }

  private async report(capture: Capture, result: { ids: string[] } | { error: string }, dropped: number, counts: DigestCounts): Promise<void> {
    const body =
      "ids" in result ? { id: capture.id, outcome: "digested" as const, memory_ids: result.ids } : { id: capture.id, outcome: "failed" as const, error: result.error };
    const answer = await this.client.call("capture_digest", { results: [body] });
    counts.digested += answer.digested;
    counts.failed += answer.failed;
    counts.dead += answer.dead;
    // Unknown: the capture expired while it was being digested; its facts stand all the same.
    const details = { capture_id: capture.id, author: capture.agent_id, project: capture.project, unknown: answer.unknown.length > 0 };
    if ("ids" in result) {
      await this.client.log("info", "capture.digested", `digested a capture into ${result.ids.length} entries`, { ...details, memory_ids: result.ids, dropped });
    } else {
      this.log.warn("capture not digested", { ...details, error: result.error, dead: answer.dead > 0 });
      await this.client.log("warn", "capture.failed", result.error, { ...details, dead: answer.dead > 0 });
    }
  }

  private preambleFor(project: string | null, cache: RunCache): Promise<string> {
    const key = project ?? "";
    let text = cache.preambles.get(key);
    if (text === undefined) {
      cache.names ??= projectNames(this.client);
      const names = cache.names;
      text = (async () => preamble(await loadDirectives(this.client, project), [], await names))();
      cache.preambles.set(key, text);
    }
    return text;
  }
}

/**
 * Starts a digest run soon after each `capture.added` (read from the event stream after `seq`),
 * and once at start for whatever was queued before. A run that stops at its bound is followed by
 * another; one that found the budget spent waits for the next capture or the scheduled pass.
 */
export class CaptureTrigger extends StreamTrigger {
  constructor(
    private readonly client: CairnClient,
    private readonly digester: CaptureDigester,
    private readonly log: Logger,
    private seq: number,
  ) {
    super(DEBOUNCE_MS);
  }

  /** Follows the stream and runs once at once, for what queued while no archivist ran. */
  override start(): void {
    super.start();
    this.request();
  }

  protected async work(): Promise<void> {
    do {
      this.again = false;
      let counts: DigestCounts;
      try {
        counts = await this.digester.run(false);
      } catch (error) {
        // The next capture or the scheduled pass tries again.
        this.log.warn("capture digest run failed", { error });
        await this.client.log("error", "capture.run.failed", error instanceof Error ? error.message : String(error)).catch(noop);
        return;
      }
      if (counts.budgetExhausted) return;
      if (counts.more) this.again = true;
    } while (this.again && !this.stopped);
  }

  protected follow(): Promise<void> {
    return followEventStream({
      url: `${this.client.url}/events/stream?type=capture.added`,
      headers: () => ({ ...this.client.headers(), "last-event-id": String(this.seq) }),
      signal: this.abort.signal,
      log: this.log,
      what: "capture event stream",
      onEvent: (message) => {
        // Pruned before it was read: the queue itself is the truth, so one run covers whatever was lost.
        if (message.event === "reset") {
          this.request();
          return false;
        }
        if (message.event !== "capture.added" || message.id === null) return false;
        this.seq = Math.max(this.seq, Number(message.id));
        this.request();
        return true;
      },
    });
  }
}
