import type { Logger } from "../src/core/log.js";
import { retry, type RetryOptions } from "../src/core/retry.js";
import { STATUS_KEYS } from "../src/wire/archivist.js";
import { CaptureDigester, CaptureTrigger } from "./captures.js";
import { CairnClient } from "./client.js";
import { CURSOR_KEY, WriteFollower } from "./follower.js";
import { GROUNDING_CURSOR_KEY, GroundingTrigger } from "./grounding.js";
import { ConflictWatcher } from "./immediate.js";
import { LeaseKeeper } from "./lease.js";
import { createModel, type BudgetedModel } from "./llm/index.js";
import { scheduledPass, type PassReport } from "./pass.js";
import type { ArchivistSettings } from "./settings.js";

/**
 * The archivist's own cursor for scheduled passes: when the last one started. The next is due
 * SYNTHESIS_INTERVAL_SECONDS after it, and a project counts as active when something changed since.
 * Not for humans: what they see of a pass is the report under STATUS_KEYS.lastPassReport. The
 * string is stored data and never changes.
 */
export const PASS_CURSOR_KEY = "last_pass_at";

/** setTimeout takes a signed 32-bit count of ms and fires at once when given more. */
const MAX_TIMER_MS = 2_147_000_000;
const SHIFT_START: RetryOptions = { attempts: Infinity, baseMs: 2000, capMs: 30_000 };
/** How long a stop waits for the capture being digested before it lets the lease go. */
const CAPTURE_GRACE_MS = 5000;
/** How long a stop waits for the file being grounded. */
const GROUNDING_GRACE_MS = 5000;

export interface ArchivistOptions {
  /** The clock passes judge age by (decay, promotion, staleness); tests move it forward. */
  now?: () => Date;
  /** Replaces the model the settings select (benchmarks count its calls). */
  model?: BudgetedModel | null;
}

/**
 * The archivist agent: holds the lease, and while it holds it follows `memory.written` (immediate
 * mode), digests captures as they arrive (with a model), suggests `grounds` edges after each
 * compile, and runs the scheduled pass every `SYNTHESIS_INTERVAL_SECONDS`. Everything goes
 * through the server's HTTP API as the archivist agent, fenced by the lease token.
 */
export class Archivist {
  readonly client: CairnClient;
  readonly model: BudgetedModel | null;
  readonly watcher: ConflictWatcher;
  private readonly lease: LeaseKeeper;
  private follower: WriteFollower | null = null;
  /** This shift's capture digestion; null without a model, and between shifts. */
  private captures: CaptureDigester | null = null;
  private captureTrigger: CaptureTrigger | null = null;
  /** This shift's grounding suggestions after compiles (no model needed); null between shifts. */
  private grounding: GroundingTrigger | null = null;
  private passTimer: NodeJS.Timeout | null = null;
  private passing: Promise<PassReport | null> | null = null;
  private shift = 0;
  /** Aborted when the shift ends, which stops retrying its start. */
  private shiftEnded = new AbortController();
  private leasedWaiters: (() => void)[] = [];
  private readonly now: () => Date;
  lastPass: PassReport | null = null;

  constructor(
    readonly settings: ArchivistSettings,
    private readonly log: Logger,
    options: ArchivistOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.client = new CairnClient({ url: settings.url, agentId: settings.agentId, apiKey: settings.apiKey, leaseToken: () => this.lease.token });
    this.model = options.model === undefined ? createModel(settings.llm) : options.model;
    this.watcher = new ConflictWatcher(this.client, this.model, settings.conflictThreshold, log.child({ mode: "immediate" }));
    this.lease = new LeaseKeeper(this.client, settings.holder, settings.leaseSeconds, log.child({ component: "lease" }), {
      acquired: (token) => this.startShift(token),
      lost: () => void this.endShift(false),
    });
  }

  get holdsLease(): boolean {
    return this.lease.token !== null;
  }

  /** Every `memory.written` up to this seq has been checked, and merged or reported. */
  get cursor(): number | null {
    return this.follower?.cursor ?? null;
  }

  start(): void {
    this.log.info("archivist starting", { holder: this.settings.holder, llm: this.settings.llm.provider });
    this.lease.start();
  }

  /** Resolves once this archivist holds the lease and follows the stream. */
  leased(): Promise<void> {
    if (this.follower) return Promise.resolve();
    return new Promise((resolve) => this.leasedWaiters.push(resolve));
  }

  private startShift(token: number): void {
    const shift = ++this.shift;
    this.shiftEnded.abort();
    const ended = new AbortController();
    this.shiftEnded = ended;
    // Tried until the shift ends, and only that end rejects: there is nothing to report.
    void retry(() => this.beginShift(token, shift), {
      ...SHIFT_START,
      signal: ended.signal,
      onRetry: (error, delayMs) => this.log.error("could not start work under the lease", { error, retry_in_ms: delayMs }),
    }).catch(() => undefined);
  }

  private async beginShift(token: number, shift: number): Promise<void> {
    let cursor = await this.client.state<number>(CURSOR_KEY);
    const started = await this.client.call("event_emit", { type: "archivist.started", payload: { holder: this.settings.holder, lease: token, llm: this.model !== null } });
    // The first archivist on a store starts at its own start; a later one resumes where the last stopped.
    if (typeof cursor !== "number") {
      cursor = started.seq;
      await this.client.setState(CURSOR_KEY, cursor);
    }
    if (shift !== this.shift || !this.holdsLease) return;
    await this.client.setState(STATUS_KEYS.process, {
      holder: this.settings.holder,
      llm: this.model !== null,
      provider: this.settings.llm.provider,
      started_at: new Date().toISOString(),
    });
    const last = await this.client.state<string>(PASS_CURSOR_KEY);
    let grounded = await this.client.state<number>(GROUNDING_CURSOR_KEY);
    // Saved at once: compiles made before the next shift starts are then replayed to it.
    if (typeof grounded !== "number") {
      grounded = started.seq;
      await this.client.setState(GROUNDING_CURSOR_KEY, grounded);
    }
    // Nothing below may fail: a retried start would leave this follower running beside the next.
    this.follower = new WriteFollower(this.client, this.watcher, this.log.child({ mode: "immediate" }), cursor);
    this.follower.start();
    this.grounding = new GroundingTrigger(this.client, this.log.child({ mode: "grounding" }), grounded);
    this.grounding.start();
    if (this.model) {
      const log = this.log.child({ mode: "captures" });
      this.captures = new CaptureDigester(this.client, this.model, log, this.shiftEnded.signal);
      // From this shift's start: what was queued before is found by the first run, not the stream.
      this.captureTrigger = new CaptureTrigger(this.client, this.captures, log, started.seq);
      this.captureTrigger.start();
    }
    const due = typeof last === "string" ? Date.parse(last) + this.settings.synthesisIntervalSeconds * 1000 : Date.now() + this.settings.synthesisIntervalSeconds * 1000;
    this.schedulePass(Math.max(0, due - Date.now()), shift);
    for (const waiter of this.leasedWaiters.splice(0)) waiter();
  }

  private schedulePass(delayMs: number, shift: number): void {
    if (this.passTimer) clearTimeout(this.passTimer);
    this.passTimer = setTimeout(() => {
      this.passTimer = null;
      if (shift !== this.shift || !this.holdsLease) return;
      void this.runPass().finally(() => {
        if (shift === this.shift && this.holdsLease) this.schedulePass(this.settings.synthesisIntervalSeconds * 1000, shift);
      });
    }, Math.min(delayMs, MAX_TIMER_MS));
  }

  /** Runs one scheduled pass now (never two at once); null when this archivist does not hold the lease. */
  runPass(): Promise<PassReport | null> {
    this.passing ??= this.pass().finally(() => {
      this.passing = null;
    });
    return this.passing;
  }

  private async pass(): Promise<PassReport | null> {
    if (!this.holdsLease) return null;
    try {
      const startedAt = new Date().toISOString();
      const previous = await this.client.state<string>(PASS_CURSOR_KEY);
      const report = await scheduledPass({
        client: this.client,
        model: this.model,
        settings: this.settings,
        log: this.log.child({ mode: "scheduled" }),
        now: this.now(),
        previousPass: typeof previous === "string" ? previous : null,
        captures: this.captures,
      });
      this.lastPass = report;
      // The start, not the end: an entry written during this pass counts as activity for the next.
      await this.client.setState(PASS_CURSOR_KEY, startedAt);
      const counts = { ...report, docs: report.docs.length };
      await this.client.setState(STATUS_KEYS.lastPassReport, { at: startedAt, ...counts });
      await this.client.log("info", "pass", `scheduled pass: ${report.entries} entries in ${report.projects} projects, ${report.calls} model calls`, counts);
      await this.client.call("event_emit", { type: "archivist.pass", payload: counts });
      this.log.info("scheduled pass done", counts);
      return report;
    } catch (error) {
      this.log.error("scheduled pass failed", { error });
      await this.client.log("error", "pass.failed", error instanceof Error ? error.message : String(error)).catch(() => undefined);
      return null;
    }
  }

  private async endShift(save: boolean): Promise<void> {
    this.shift++;
    this.shiftEnded.abort();
    if (this.passTimer) clearTimeout(this.passTimer);
    this.passTimer = null;
    const follower = this.follower;
    this.follower = null;
    const trigger = this.captureTrigger;
    this.captureTrigger = null;
    this.captures = null;
    const grounding = this.grounding;
    this.grounding = null;
    await Promise.all([follower?.stop({ graceMs: 5000, save }), trigger?.stop(CAPTURE_GRACE_MS), grounding?.stop(GROUNDING_GRACE_MS)]);
  }

  /** Resolves once every merge queued so far has finished. */
  async drained(): Promise<void> {
    await this.follower?.drained();
  }

  /** Stops work, saves where the stream was read to, and gives the lease up (unless `release` is false). */
  async stop(release = true): Promise<void> {
    // The cursor is saved while the lease (and so the fencing token) is still ours.
    await this.endShift(true);
    await this.passing;
    await this.lease.stop(release);
    this.log.info("archivist stopped");
  }
}
