import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../src/core/log.js";
import { backoffDelay, type Backoff } from "../src/core/retry.js";
import type { EventRecord } from "../src/wire/events.js";
import type { SearchHit } from "../src/wire/memory.js";
import { ApiError } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";
import { followEventStream } from "./sse.js";
import { StreamTrigger } from "./trigger.js";

/**
 * The seq of the last `compile.completed` whose grounding is done. The next shift resumes the
 * stream from it, so a compile made while no archivist ran is still looked at. Stored data: the
 * string never changes.
 */
export const GROUNDING_CURSOR_KEY = "grounding_cursor";

/** Changed files one compile has looked at; a compile changing more has the rest skipped (logged). */
export const MAX_PATHS_PER_COMPILE = 50;
/** Edges one run records; a run that reaches it stops and another follows. */
const MAX_EDGES_PER_RUN = 200;
/** Edges suggested for one path, however many entries mention it. */
const MAX_EDGES_PER_PATH = 5;
/** Hits each search asks for: entries that only share the path's words fill a few places. */
const SEARCH_LIMIT = 20;
/**
 * The kinds of entry a path's code may ground: never compiled ones (the server refuses) and never
 * directives (the archivist never touches one, and a stale mark is a change to it).
 */
const GROUNDED_TYPES = ["memory", "doc", "skill"] as const;
/** A compile writes at most 2,000 entries, each with one event, besides its stale marks. */
const MAX_EVENTS_PER_COMPILE = 5000;
/** Compiled entries read (newest first) to find a compile's ones among them. */
const MAX_COMPILED_LISTED = 2500;
/** A file with more symbols than this has the rest left out of the "already grounded" check. */
const MAX_ANCHORS_PER_PATH = 500;
/** Compiles waiting while a run is under way; the stream is read no further until one is done. */
const MAX_QUEUED = 500;
/** A burst of compiles (`cairn compile` sends large sets in parts) makes one run. */
const DEBOUNCE_MS = 250;
/** Runs that failed on one compile before it is skipped, so one bad compile cannot stall the rest. */
const MAX_TRIES = 3;
const RETRY: Backoff = { baseMs: 5000, capMs: 60_000 };

/** One `compile.completed`, as the stream delivered it. */
export interface CompileEvent {
  seq: number;
  /** The agent that compiled: its compile's `memory.*` events carry its id. */
  agent: string;
  project: string | null;
}

export interface GroundingCounts {
  /** Compiles whose grounding is done. */
  compiles: number;
  /** Paths searched. */
  paths: number;
  /** Changed paths beyond MAX_PATHS_PER_COMPILE, not searched. */
  skippedPaths: number;
  /** Paths without a module (or file) anchor to ground from. */
  unanchored: number;
  edges: number;
  /** Entries that named a path but were already grounded by that path's code. */
  alreadyGrounded: number;
  /** Edges the server refused (an entry deleted or moved meanwhile). */
  refused: number;
  /** The run stopped at MAX_EDGES_PER_RUN with compiles waiting. */
  more: boolean;
}

const emptyCounts = (): GroundingCounts => ({ compiles: 0, paths: 0, skippedPaths: 0, unanchored: 0, edges: 0, alreadyGrounded: 0, refused: 0, more: false });

const noop = (): void => undefined;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether `content` names `path` as a file: the path itself, or with a leading `./`, not as part of
 * a longer path (`lib/src/a.ts`, `src/a.tsx`, `src/a.ts.map`). A line or symbol may follow
 * (`src/a.ts:12`, `src/a.ts::main`), and so may the punctuation that ends a sentence.
 */
export function mentionsPath(content: string, path: string): boolean {
  if (!content.includes(path)) return false;
  return new RegExp(`(?<![\\w./-])(?:\\./)?${escapeRegExp(path)}(?![\\w/-]|\\.\\w)`, "u").test(content);
}

/** A `memory.*` event of a compiled entry that compile wrote or rewrote (not a stale mark on one). */
function compiledChange(event: EventRecord, project: string | null): string | null {
  const payload = event.payload;
  if (payload.source_kind !== "compile" || payload.type !== "compiled" || payload.project !== project) return null;
  const written = event.type === "memory.written" || (event.type === "memory.updated" && payload.reason === undefined);
  return written && typeof payload.memory_id === "string" ? payload.memory_id : null;
}

/**
 * Suggests `grounds` edges after a compile (CONTRACT §18): for each file whose compiled entries
 * the compile wrote, a keyword search in the compile's project finds entries that name the file,
 * and the file's module entry grounds them, so they are marked stale when the code changes. Reads
 * only what the compile touched and what each search returns; no model is involved.
 */
export class CompileGrounder {
  constructor(
    private readonly client: CairnClient,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Grounds what one compile changed, the events of which lie between `after` and the compile's
   * own seq. False when the run's edge budget ran out first (the compile is then done again by the
   * next run, which finds the edges made so far and skips them).
   */
  async ground(compile: CompileEvent, after: number, counts: GroundingCounts, done: Set<string>): Promise<boolean> {
    const ids = await this.changedEntries(compile, after);
    if (ids.length === 0) return true;
    const paths = await this.pathsOf(compile.project, ids);
    counts.skippedPaths += Math.max(0, paths.length - MAX_PATHS_PER_COMPILE);
    for (const path of paths.slice(0, MAX_PATHS_PER_COMPILE)) {
      // The same file in several compiles of one run (a large compile sent in parts) is searched once.
      const key = `${compile.project ?? ""}\n${path}`;
      if (done.has(key)) continue;
      if (this.signal.aborted || counts.edges >= MAX_EDGES_PER_RUN) return false;
      if (!(await this.groundPath(compile.project, path, counts))) return false;
      done.add(key);
    }
    return true;
  }

  /**
   * The compiled entries the compile wrote, in the order it wrote them: its agent's `memory.*`
   * events just before its own, read newest first from the compile down to `after`.
   */
  private async changedEntries(compile: CompileEvent, after: number): Promise<string[]> {
    const ids: string[] = [];
    let read = 0;
    let cursor: string | undefined;
    while (read < MAX_EVENTS_PER_COMPILE) {
      const page = await this.client.page("event_list", { since: `seq:${after}`, order: "desc", type: "memory.*", agent: compile.agent, limit: 500, cursor });
      for (const event of page.items) {
        read++;
        if (event.seq >= compile.seq) continue;
        const id = compiledChange(event, compile.project);
        if (id !== null && !ids.includes(id)) ids.push(id);
      }
      if (page.nextCursor === null || page.items.length === 0) break;
      cursor = page.nextCursor;
    }
    return ids.reverse();
  }

  /** The distinct files of those entries, in the compile's order; entries deleted since are passed over. */
  private async pathsOf(project: string | null, ids: string[]): Promise<string[]> {
    const wanted = new Set(ids);
    const pathOf = new Map<string, string>();
    let listed = 0;
    let cursor: string | undefined;
    // Newest change first: the compile's entries are at the top, below those of any later compile.
    while (pathOf.size < wanted.size && listed < MAX_COMPILED_LISTED) {
      const page = await this.client.page("memory_list", { source_kind: "compile", project, limit: Math.min(500, Math.max(50, wanted.size)), cursor });
      for (const entry of page.items) {
        listed++;
        if (wanted.has(entry.id) && entry.source?.kind === "compile") pathOf.set(entry.id, entry.source.path);
      }
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    return [...new Set(ids.flatMap((id) => pathOf.get(id) ?? []))];
  }

  /** Suggests edges from one file's module entry; false when the run's edge budget ran out. */
  private async groundPath(project: string | null, path: string, counts: GroundingCounts): Promise<boolean> {
    // Null when the project is gone since the compile.
    const anchors = await this.client.find("compile_anchors", { project, path, limit: MAX_ANCHORS_PER_PATH });
    const module = anchors?.find((anchor) => anchor.symbol === "");
    if (!anchors || !module) {
      counts.unanchored++;
      return true;
    }
    counts.paths++;
    const pathEntries = new Set(anchors.map((anchor) => anchor.memory_id));
    let made = 0;
    for (const entry of await this.mentioning(project, path)) {
      if (made === MAX_EDGES_PER_PATH) break;
      if (counts.edges >= MAX_EDGES_PER_RUN) return false;
      const node = await this.client.find("graph_node", { node_id: entry.id });
      if (node === null) continue;
      // Grounded by any of the file's code already (its author's own choice of symbol, say): a
      // module edge besides would mark it stale for changes to code it is not about.
      if (node.edges.in.some((edge) => edge.rel === "grounds" && pathEntries.has(edge.src))) {
        counts.alreadyGrounded++;
        continue;
      }
      try {
        await this.client.call("graph_link", { src: module.memory_id, dst: entry.id, rel: "grounds", note: `suggested by the archivist: mentions ${path}` });
      } catch (error) {
        // A 409 is a lost lease: nothing more may be written, and the run ends.
        if (!(error instanceof ApiError) || error.status === 409 || error.status >= 500) throw error;
        counts.refused++;
        await this.client.log("warn", "grounding.refused", `a suggested grounds edge was refused (${error.status} ${error.code})`, { src: module.memory_id, dst: entry.id });
        continue;
      }
      made++;
      counts.edges++;
    }
    return true;
  }

  /**
   * The entries of the project that name the path, best match first: one search per groundable
   * type (so the file's many compiled entries, which all name it, never crowd the others out),
   * keeping only entries by other agents whose content holds the path itself. The
   * archivist's own (synthesis docs, merges) are left out: only an entry's author clears its mark.
   */
  private async mentioning(project: string | null, path: string): Promise<SearchHit[]> {
    const found = new Map<string, SearchHit>();
    for (const type of GROUNDED_TYPES) {
      const hits = await this.client.call("memory_search", { q: path, project, type, limit: SEARCH_LIMIT });
      for (const hit of hits) {
        if (hit.agent_id !== this.client.agentId && mentionsPath(hit.content, path)) found.set(hit.id, hit);
      }
    }
    return [...found.values()];
  }
}

/**
 * Runs the grounder soon after each `compile.completed` (followed on the event stream from the
 * saved cursor, so the compiles of a time without an archivist are replayed), one compile at a
 * time in stream order, saving the cursor after each. A run that stops at its edge budget is
 * followed by another; one that fails is tried again after a while, and a compile that fails
 * MAX_TRIES times is skipped and logged.
 */
export class GroundingTrigger extends StreamTrigger {
  private readonly grounder: CompileGrounder;
  private readonly queue: CompileEvent[] = [];
  /** The last compile whose grounding is done (and saved). */
  private cursor: number;
  /** The last compile read from the stream. */
  private received: number;
  private failures = { seq: -1, count: 0 };

  constructor(
    private readonly client: CairnClient,
    private readonly log: Logger,
    cursor: number,
  ) {
    super(DEBOUNCE_MS);
    this.cursor = cursor;
    this.received = cursor;
    this.grounder = new CompileGrounder(client, this.abort.signal);
  }

  protected async work(): Promise<void> {
    do {
      this.again = false;
      const counts = emptyCounts();
      const done = new Set<string>();
      try {
        for (let compile = this.queue[0]; compile !== undefined && !this.stopped; compile = this.queue[0]) {
          if (!(await this.grounder.ground(compile, this.cursor, counts, done))) {
            counts.more = !this.stopped;
            break;
          }
          await this.finish(compile);
          counts.compiles++;
        }
      } catch (error) {
        await this.failed(error, counts);
        return;
      }
      await this.report(counts);
      if (counts.more) this.again = true;
    } while (this.again && !this.stopped);
  }

  /** The compile is done: the cursor moves past it, here and in the server's keeping. */
  private async finish(compile: CompileEvent): Promise<void> {
    this.queue.shift();
    this.cursor = compile.seq;
    await this.client.setState(GROUNDING_CURSOR_KEY, compile.seq);
  }

  private async failed(error: unknown, counts: GroundingCounts): Promise<void> {
    if (this.stopped) return;
    const head = this.queue[0];
    if (head === undefined) return;
    if (this.failures.seq !== head.seq) this.failures = { seq: head.seq, count: 0 };
    this.failures.count++;
    // The server's detail can quote what it refused; the log names the status and the compile.
    const reason = error instanceof ApiError ? `${error.status} ${error.code}` : error instanceof Error ? error.name : "unknown error";
    const details = { seq: head.seq, project: head.project, attempt: this.failures.count, ...counts };
    this.log.warn("grounding run failed", { ...details, error: reason });
    if (this.failures.count >= MAX_TRIES) {
      await this.client.log("error", "grounding.skipped", `grounding a compile failed ${MAX_TRIES} times (${reason}); it is skipped`, details).catch(noop);
      await this.finish(head).catch(noop);
      this.request();
    } else {
      await this.client.log("warn", "grounding.failed", `grounding a compile failed (${reason}); it is tried again`, details).catch(noop);
      this.request(backoffDelay(RETRY, this.failures.count));
    }
  }

  private async report(counts: GroundingCounts): Promise<void> {
    if (counts.compiles === 0 && counts.edges === 0) return;
    this.log.info("grounding run done", { ...counts });
    await this.client.log("info", "grounding", `grounding: ${counts.edges} edges suggested for ${counts.paths} files of ${counts.compiles} compiles`, { ...counts }).catch(noop);
  }

  protected follow(): Promise<void> {
    return followEventStream({
      url: `${this.client.url}/events/stream?type=compile.completed`,
      headers: () => ({ ...this.client.headers(), "last-event-id": String(this.received) }),
      signal: this.abort.signal,
      log: this.log,
      what: "compile event stream",
      onEvent: async (message) => {
        if (message.event === "reset") {
          this.log.warn("event stream reset: compiles after the grounding cursor were pruned before they were read");
          return false;
        }
        if (message.event !== "compile.completed" || message.id === null) return false;
        const event = JSON.parse(message.data) as EventRecord;
        if (event.seq <= this.received) return false;
        // The stream waits while the queue is full; the server cuts a reader too far behind, and it resumes.
        while (this.queue.length >= MAX_QUEUED && !this.stopped) await sleep(100);
        this.received = event.seq;
        const project = event.payload.project;
        this.queue.push({ seq: event.seq, agent: event.agent_id, project: typeof project === "string" ? project : null });
        this.request();
        return true;
      },
    });
  }
}
