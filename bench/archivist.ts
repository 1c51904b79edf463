// The archivist against a real server process: how soon a conflicting pair is merged in immediate
// mode, and what one scheduled pass over a day's entries costs (time, model calls, tokens). The
// archivist runs in this process (as `cairn archivist` would run beside the server) and talks to
// a fake LLM on loopback that answers at once, so the numbers are the archivist's and the server's
// own work; a real model adds its latency per call on top.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Archivist, PASS_CURSOR_KEY } from "../archivist/archivist.js";
import { BudgetedModel, createModel, TokenBudget, type Completion, type CompletionRequest, type LanguageModel } from "../archivist/llm/index.js";
import type { PassReport } from "../archivist/pass.js";
import { archivistSettings, type ArchivistSettings } from "../archivist/settings.js";
import { loadConfig } from "../src/core/config.js";
import { createLogger, type Logger } from "../src/core/log.js";
import { startFakeLlm, type FakeLlm } from "../test/helpers/fake-llm.js";
import { noteStream } from "./corpus.js";
import { subscribe } from "./events.js";
import {
  judge,
  latencyStats,
  newDataDir,
  progress,
  round,
  runClients,
  withServer,
  type Credentials,
  type LatencyStats,
  type Row,
  type Section,
  type ServerProcess,
} from "./lib.js";

export interface MergeOptions {
  pairs: number;
  /** Pairs merged before the timed ones (JIT, first directive read), not counted. */
  warmup: number;
  /** How long one pair may take before it is counted as not merged. */
  timeoutMs: number;
}

export interface PassOptions {
  entries: number;
  agents: number;
  /** Projects besides global; entries are spread over global and these. */
  projects: number;
  seedClients: number;
}

/** The hash embedder: no model to load, and identical text is similarity 1.0, above CONFLICT_THRESHOLD. */
export const SERVER_ENV = { EMBEDDING_MODEL: "hash" };
/** The configured default of ARCHIVIST_TOKEN_BUDGET_PER_HOUR. */
const DEFAULT_BUDGET = loadConfig({}).ARCHIVIST_TOKEN_BUDGET_PER_HOUR;
/** The largest budget the setting allows: the full pass is never cut short by it. */
const UNLIMITED_BUDGET = 100_000_000;
const MERGE_STREAM = 4001;
const PASS_STREAM = 4002;
const SYNTHESIS_REPLY = JSON.stringify({ summary: "ok", recommended_actions: [], suggested_directives: [], operations: [] });

// ---- the archivist and its model ----

interface ModelCall {
  startedAt: number;
  endedAt: number;
}

/** Wraps the configured model (the real OpenAI client, pointed at the fake) and times each call. */
class TimedModel implements LanguageModel {
  readonly calls: ModelCall[] = [];

  constructor(private readonly inner: LanguageModel) {}

  get provider(): LanguageModel["provider"] {
    return this.inner.provider;
  }

  get model(): string {
    return this.inner.model;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    const startedAt = performance.now();
    try {
      return await this.inner.complete(request);
    } finally {
      this.calls.push({ startedAt, endedAt: performance.now() });
    }
  }

  totalMs(): number {
    return this.calls.reduce((sum, call) => sum + (call.endedAt - call.startedAt), 0);
  }
}

/** The archivist's credentials from the server's credentials.json. */
function archivistCredentials(server: ServerProcess): Credentials {
  const file = JSON.parse(readFileSync(join(server.dataDir, "credentials.json"), "utf8")) as {
    agents: Record<string, { agent_id: string; api_key: string }>;
  };
  const archivist = file.agents.archivist;
  if (!archivist) throw new Error("credentials.json has no archivist agent");
  return { agentId: archivist.agent_id, apiKey: archivist.api_key };
}

/**
 * The settings `cairn archivist` would read, with its model pointed at the fake LLM over the
 * OpenAI API (as test/helpers/archivist.ts `llmEnv` does; that module is not imported because it
 * pulls the whole in-process server into the benchmark process).
 */
export function settingsFor(server: ServerProcess, fake: FakeLlm, env: Record<string, string>): ArchivistSettings {
  const config = loadConfig({
    DATA_DIR: server.dataDir,
    ...SERVER_ENV,
    ARCHIVIST_HOLDER: "bench-archivist",
    // No scheduled pass fires by itself while a benchmark runs; `pass` calls runPass().
    SYNTHESIS_INTERVAL_SECONDS: String(7 * 86400),
    ARCHIVIST_LLM_PROVIDER: "openai",
    ARCHIVIST_LLM_BASE_URL: fake.openaiBaseUrl,
    ARCHIVIST_LLM_MODEL: "fake-model",
    ARCHIVIST_LLM_API_KEY: "sk-fake-key",
    ARCHIVIST_LLM_TIMEOUT_SECONDS: "30",
    ...env,
  });
  const credentials = archivistCredentials(server);
  return archivistSettings(config, { url: server.url, ...credentials });
}

/**
 * Warnings and errors of the in-process archivist: counted, and the first few shown. Once the
 * benchmark stops it, the "lease lost" its stop logs is expected and left out.
 */
export function countingLogger(): { log: Logger; count: () => number; stopping: () => void } {
  let lines = 0;
  let stopping = false;
  const log = createLogger("warn", { component: "archivist" }, (line) => {
    if (stopping && line.includes('"msg":"lease lost"')) return;
    if (++lines <= 5) process.stderr.write(`  · archivist: ${line}`);
  });
  return {
    log,
    count: () => lines,
    stopping: () => {
      stopping = true;
    },
  };
}

interface RunningArchivist {
  archivist: Archivist;
  model: TimedModel;
  budgeted: BudgetedModel;
  warnings: () => number;
  stop(): Promise<void>;
}

/** An archivist holding the lease and following the stream, with its model calls timed. */
async function startArchivist(server: ServerProcess, fake: FakeLlm, env: Record<string, string> = {}): Promise<RunningArchivist> {
  const settings = settingsFor(server, fake, env);
  const configured = createModel(settings.llm);
  if (!configured) throw new Error("the archivist has no model configured");
  const model = new TimedModel(configured.inner);
  const budgeted = new BudgetedModel(model, new TokenBudget(settings.llm.tokenBudgetPerHour));
  const logger = countingLogger();
  const archivist = new Archivist(settings, logger.log, { model: budgeted });
  archivist.start();
  await archivist.leased();
  const stop = async (): Promise<void> => {
    logger.stopping();
    await archivist.stop();
  };
  return { archivist, model, budgeted, warnings: logger.count, stop };
}

// ---- merge: immediate mode ----

interface MergeEvent {
  type: string;
  payload: { memory_id?: string; superseded_by?: string };
}

interface PairTiming {
  /** B's 201 → the merged entry's memory.written delivered on the stream. */
  fromAck: number;
  /** B's request sent → the same. */
  fromSend: number;
  /** B's 201 → the archivist's model call began (detection: stream delivery, two reads, directives). */
  toModel: number | null;
  /** The model call's end → the merged entry on the stream (POST /archivist/merge and delivery). */
  afterModel: number | null;
}

const SIMPLE_WORDS = ["amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel", "lumen"];

/** Pair `index`'s content: a corpus note made unique by its number and two words, so pairs never resemble each other. */
function pairContent(note: string, index: number): string {
  const words = `${SIMPLE_WORDS[index % SIMPLE_WORDS.length]} ${SIMPLE_WORDS[Math.floor(index / SIMPLE_WORDS.length) % SIMPLE_WORDS.length]}`;
  return `${note} (observation ${index}, ${words})`;
}

/** The merge reply: the first entry's content marked as merged. */
function mergeReply(user: string): string {
  const json = user.slice(user.indexOf("\n") + 1, user.lastIndexOf("\n"));
  let first = "merged";
  try {
    const rows = JSON.parse(json) as { content?: string }[];
    first = rows[0]?.content ?? first;
  } catch {
    // an unexpected data block: a fixed text merges just as well
  }
  return JSON.stringify({ action: "merge", content: `Merged: ${first}` });
}

const statsRow = (scenario: string, stats: LatencyStats, extra: Partial<Row> = {}): Row => ({
  scenario,
  n: stats.n,
  p50Ms: round(stats.p50, 2),
  p95Ms: round(stats.p95, 2),
  opsPerSec: null,
  cpuMsPerOp: null,
  rssMb: null,
  note: `p99 ${round(stats.p99, 1)} ms, max ${round(stats.max, 1)} ms`,
  ...extra,
});

export async function runMergeBench(options: MergeOptions): Promise<Section> {
  const fake = await startFakeLlm();
  fake.respond((call) => mergeReply(call.user));
  try {
    return await withServer(
      newDataDir(),
      4,
      async (server) => {
        await server.waitForHealth((health) => health.embeddings === "ready");
        const owner = server.owner();
        const alice = await server.client.registerAgent("bench-author-a");
        const bob = await server.client.registerAgent("bench-author-b");
        const running = await startArchivist(server, fake);
        const { archivist, model } = running;

        // Every change the archivist makes to memory, as the stream delivers it to the owner.
        const writtenAt = new Map<string, number>();
        const waiters = new Map<string, (merged: { id: string; at: number }) => void>();
        const stream = await subscribe(server, owner, `/events/stream?type=memory.*&agent=${encodeURIComponent(archivist.settings.agentId)}`, (data, at) => {
          const event = JSON.parse(data) as MergeEvent;
          const id = event.payload.memory_id;
          if (typeof id !== "string") return;
          if (event.type === "memory.written") writtenAt.set(id, at);
          const merged = event.payload.superseded_by;
          if (event.type === "memory.deleted" && typeof merged === "string") {
            // The merged entry's memory.written comes first in the same transaction's events.
            waiters.get(id)?.({ id: merged, at: writtenAt.get(merged) ?? at });
            waiters.delete(id);
          }
        });
        let streamClosed = false;
        stream.response.on("close", () => {
          streamClosed = true;
        });

        const next = noteStream(MERGE_STREAM);
        const timings: PairTiming[] = [];
        let missing = 0;
        let mergedBeforeAck = 0;
        let unconfirmed = 0;
        const total = options.warmup + options.pairs;
        progress(`merge: ${options.warmup} warm-up + ${options.pairs} timed conflicting pairs (A by one agent, then B by another)`);
        let cpuBefore = server.cpuMs();
        let wallStarted = performance.now();
        let firstTimedCall = 0;
        for (let index = 0; index < total; index++) {
          if (index === options.warmup) {
            cpuBefore = server.cpuMs();
            wallStarted = performance.now();
            firstTimedCall = model.calls.length;
          }
          const content = pairContent(next().content, index);
          const a = await server.client.post("/memory", { content, project: null, allow_duplicate: true }, alice);
          if (a.status !== 201) throw new Error(`POST /memory (A): ${a.status} ${a.body}`);
          const aId = (JSON.parse(a.body) as { id: string }).id;
          const callsBefore = model.calls.length;
          const sent = performance.now();
          // The waiter listens before B is written: the merge may be delivered before B's 201.
          const mergedPromise = new Promise<{ id: string; at: number } | null>((resolve) => {
            const timer = setTimeout(() => resolve(null), options.timeoutMs);
            waiters.set(aId, (merged) => {
              clearTimeout(timer);
              resolve(merged);
            });
          });
          const b = await server.client.post("/memory", { content, project: null, allow_duplicate: true }, bob);
          const acked = performance.now();
          if (b.status !== 201) throw new Error(`POST /memory (B): ${b.status} ${b.body}`);
          const bId = (JSON.parse(b.body) as { id: string }).id;
          const merged = await mergedPromise;
          waiters.delete(aId);
          if (!merged) {
            missing++;
            progress(`merge: pair ${index} not merged within ${options.timeoutMs} ms`);
            continue;
          }
          // Outside the timing: the merged entry exists, by the archivist, with both sources as parents.
          const read = await server.client.get(`/memory/${merged.id}`, owner);
          const entry = read.status === 200 ? (JSON.parse(read.body) as { agent_id: string; parents: string[] }) : null;
          if (!entry || entry.agent_id !== archivist.settings.agentId || [...entry.parents].sort().join() !== [aId, bId].sort().join()) unconfirmed++;
          // The merge's messages and log lines finish before the next pair, so pairs do not overlap.
          await archivist.drained();
          if (index < options.warmup) continue;
          if (merged.at < acked) mergedBeforeAck++;
          const call = model.calls.length > callsBefore ? model.calls[model.calls.length - 1] : undefined;
          timings.push({
            fromAck: Math.max(0, merged.at - acked),
            fromSend: merged.at - sent,
            toModel: call ? call.startedAt - acked : null,
            afterModel: call ? merged.at - call.endedAt : null,
          });
        }
        const wallMs = performance.now() - wallStarted;
        const serverCpuMs = server.cpuMs() - cpuBefore;
        const streamDropped = streamClosed;
        stream.close();
        const counts = { ...archivist.watcher.counts };
        await running.stop();

        const fromAck = latencyStats(timings.map((timing) => timing.fromAck));
        const fromSend = latencyStats(timings.map((timing) => timing.fromSend));
        const toModel = latencyStats(timings.flatMap((timing) => (timing.toModel === null ? [] : [timing.toModel])));
        const afterModel = latencyStats(timings.flatMap((timing) => (timing.afterModel === null ? [] : [timing.afterModel])));
        const modelMs = latencyStats(model.calls.slice(firstTimedCall).map((call) => call.endedAt - call.startedAt));
        const judged = options.pairs >= 100;
        return {
          name: "merge",
          title: `Immediate-mode merge — ${options.pairs} conflicting pairs, sequential; in-process archivist, fake LLM answering at once, EMBEDDING_MODEL=hash`,
          rows: [
            statsRow("B's 201 → merged entry on the stream", fromAck, {
              opsPerSec: round((timings.length * 1000) / wallMs, 1),
              cpuMsPerOp: round(serverCpuMs / Math.max(1, timings.length), 2),
              rssMb: server.memory().rssMb,
              note: `p99 ${round(fromAck.p99, 1)} ms, max ${round(fromAck.max, 1)} ms; ops/s: pairs/s incl. both writes`,
            }),
            statsRow("B's request sent → merged entry", fromSend),
            statsRow("  B's 201 → model call starts", toModel, { note: "stream delivery, GET entry, search, directives" }),
            statsRow("  model call (fake, instant)", modelMs, { note: "HTTP round trip to the fake only" }),
            statsRow("  model reply → merged entry on the stream", afterModel, { note: "POST /archivist/merge, event delivery" }),
          ],
          targets: [
            {
              what: "p50 from B's 201 to the merged entry",
              goal: "≤ 2000 ms",
              measured: `${round(fromAck.p50, 1)} ms (p95 ${round(fromAck.p95, 1)}, max ${round(fromAck.max, 1)})`,
              met: judged ? judge(fromAck.p50, (p50) => p50 <= 2000) : null,
            },
            { what: "pairs merged", goal: `${options.pairs}`, measured: `${timings.length} (${missing} not merged in time)`, met: missing === 0 && timings.length === options.pairs },
          ],
          details: {
            measurement:
              "GET /events/stream?type=memory.*&agent=archivist as the owner; the merge's memory.deleted of source A (superseded_by) names the merged entry, " +
              "whose memory.written (same transaction) gives the time; then GET /memory/{merged} confirms author and parents outside the timing",
            embedding_model: "hash",
            warmup_pairs: options.warmup,
            not_merged_in_time: missing,
            merged_before_ack: mergedBeforeAck,
            unconfirmed_merges: unconfirmed,
            stream_dropped: streamDropped,
            archivist_counts: counts,
            archivist_warnings: running.warnings(),
            model_calls_including_warmup: model.calls.length,
            model_prompt_tokens: running.budgeted.promptTokens,
            model_completion_tokens: running.budgeted.completionTokens,
            server_cpu_ms_per_pair: round(serverCpuMs / Math.max(1, timings.length), 2),
            bench_process_rss_mb: round(process.memoryUsage().rss / 2 ** 20),
            ms: {
              from_ack: { p50: round(fromAck.p50, 2), p95: round(fromAck.p95, 2), p99: round(fromAck.p99, 2), max: round(fromAck.max, 2), mean: round(fromAck.mean, 2) },
              to_model: { p50: round(toModel.p50, 2), p95: round(toModel.p95, 2) },
              model: { p50: round(modelMs.p50, 2), p95: round(modelMs.p95, 2) },
              after_model: { p50: round(afterModel.p50, 2), p95: round(afterModel.p95, 2) },
            },
          },
        };
      },
      SERVER_ENV,
    );
  } finally {
    await fake.close();
  }
}

// ---- pass: the scheduled pass ----

interface Seeded {
  entries: number;
  byProject: Record<string, number>;
  agents: number;
  wallMs: number;
  writesPerSecond: number;
}

/**
 * `options.entries` memory entries written through POST /memory by `options.agents` agents, spread
 * evenly over global and the projects (every agent is a member of every project), all just now.
 */
async function seedEntries(server: ServerProcess, options: PassOptions): Promise<Seeded> {
  const agents: Credentials[] = [];
  for (let index = 1; index <= options.agents; index++) agents.push(await server.client.registerAgent(`bench-agent-${index}`));
  const projects: (string | null)[] = [null];
  for (let index = 1; index <= options.projects; index++) {
    const name = `bench-project-${index}`;
    const created = await server.client.post("/projects", { name }, agents[0]);
    if (created.status !== 201) throw new Error(`POST /projects: ${created.status} ${created.body}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    for (const agent of agents.slice(1)) {
      const joined = await server.client.post(`/projects/${id}/join`, {}, agent);
      if (joined.status >= 300) throw new Error(`POST /projects/${id}/join: ${joined.status} ${joined.body}`);
    }
    projects.push(id);
  }
  const next = noteStream(PASS_STREAM);
  const byProject: Record<string, number> = {};
  progress(`pass: seeding ${options.entries.toLocaleString("en")} entries by ${options.agents} agents over global and ${options.projects} projects (POST /memory, ${options.seedClients} clients)`);
  const run = await runClients(server, options.seedClients, options.entries, async (index) => {
    const agent = agents[index % agents.length] as Credentials;
    const project = projects[Math.floor(index / agents.length) % projects.length] ?? null;
    const note = next();
    const reply = await server.client.post("/memory", { content: note.content, tags: note.tags, project, allow_duplicate: true }, agent);
    if (reply.status !== 201) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
    byProject[project ?? "global"] = (byProject[project ?? "global"] ?? 0) + 1;
  });
  return { entries: options.entries, byProject, agents: options.agents, wallMs: run.wallMs, writesPerSecond: round((options.entries * 1000) / run.wallMs, 1) };
}

interface PassRun {
  report: PassReport;
  wallMs: number;
  serverCpuMs: number;
  benchCpuMs: number;
  modelMs: number;
  fakeCalls: number;
  warnings: number;
}

/** One scheduled pass by a fresh archivist with `budget` tokens an hour. */
async function timedPass(server: ServerProcess, fake: FakeLlm, budget: number): Promise<PassRun> {
  const running = await startArchivist(server, fake, { ARCHIVIST_TOKEN_BUDGET_PER_HOUR: String(budget) });
  try {
    // As on the first pass over a busy day: every entry counts as new since the last pass.
    await running.archivist.client.setState(PASS_CURSOR_KEY, null);
    const fakeBefore = fake.calls.length;
    const cpuBefore = server.cpuMs();
    const benchCpuBefore = process.cpuUsage();
    const started = performance.now();
    const report = await running.archivist.runPass();
    const wallMs = performance.now() - started;
    const benchCpu = process.cpuUsage(benchCpuBefore);
    if (!report) throw new Error("the scheduled pass did not run (lease lost, or it failed: see the archivist's log above)");
    return {
      report,
      wallMs,
      serverCpuMs: server.cpuMs() - cpuBefore,
      benchCpuMs: (benchCpu.user + benchCpu.system) / 1000,
      modelMs: running.model.totalMs(),
      fakeCalls: fake.calls.length - fakeBefore,
      warnings: running.warnings(),
    };
  } finally {
    await running.stop();
  }
}

function passRow(scenario: string, run: PassRun, rssMb: number): Row {
  const { report } = run;
  return {
    scenario,
    n: report.entries,
    p50Ms: report.durationMs,
    p95Ms: null,
    opsPerSec: round((report.entries * 1000) / Math.max(1, report.durationMs), 0),
    // Per entry it rounds to 0.0 in the table; the server's CPU for the whole pass is in the note.
    cpuMsPerOp: null,
    rssMb,
    note:
      `${report.calls} calls / ${report.batches} batches, ${report.promptTokens.toLocaleString("en")} prompt + ` +
      `${report.completionTokens.toLocaleString("en")} completion tokens${report.budgetExhausted ? " (budget exhausted)" : ""}; server CPU ${Math.round(run.serverCpuMs)} ms`,
  };
}

const passDetails = (run: PassRun): Record<string, unknown> => ({
  duration_ms: run.report.durationMs,
  run_pass_wall_ms: round(run.wallMs, 0),
  entries: run.report.entries,
  projects_with_entries: run.report.projects,
  batches: run.report.batches,
  llm_calls: run.report.calls,
  fake_llm_requests: run.fakeCalls,
  failed_calls: run.report.failedCalls,
  prompt_tokens: run.report.promptTokens,
  completion_tokens: run.report.completionTokens,
  prompt_tokens_per_call: run.report.calls > 0 ? round(run.report.promptTokens / run.report.calls, 0) : null,
  entries_per_batch: run.report.batches > 0 && !run.report.budgetExhausted ? round(run.report.entries / run.report.batches, 1) : null,
  budget_exhausted: run.report.budgetExhausted,
  docs_written: run.report.docs.length,
  dropped: run.report.dropped,
  decayed: run.report.decayed,
  promoted: run.report.promotedScratch + run.report.promotedDocs,
  model_round_trips_ms: round(run.modelMs, 0),
  outside_model_ms: round(run.report.durationMs - run.modelMs, 0),
  server_cpu_ms: round(run.serverCpuMs, 0),
  bench_process_cpu_ms: round(run.benchCpuMs, 0),
  archivist_warnings: run.warnings,
});

export async function runPassBench(options: PassOptions): Promise<Section> {
  const fake = await startFakeLlm();
  fake.respond(() => SYNTHESIS_REPLY);
  try {
    return await withServer(
      newDataDir(),
      options.seedClients,
      async (server) => {
        await server.waitForHealth((health) => health.embeddings === "ready");
        const seeded = await seedEntries(server, options);
        progress(`pass: one scheduled pass over ${seeded.entries.toLocaleString("en")} entries, budget ${UNLIMITED_BUDGET.toLocaleString("en")} tokens/h`);
        const full = await timedPass(server, fake, UNLIMITED_BUDGET);
        const fullRss = server.memory().rssMb;
        progress(`pass: the same pass by a new archivist under the default budget (${DEFAULT_BUDGET.toLocaleString("en")} tokens/h)`);
        const limited = await timedPass(server, fake, DEFAULT_BUDGET);
        const limitedRss = server.memory().rssMb;
        const { report } = full;
        const atSize = options.entries === 10_000 ? "" : ` (this run: ${options.entries.toLocaleString("en")} entries)`;
        return {
          name: "pass",
          title: `Scheduled pass — ${options.entries.toLocaleString("en")} entries of the last 24 h by ${options.agents} agents in global + ${options.projects} projects; fake LLM answering at once, EMBEDDING_MODEL=hash`,
          rows: [
            passRow(`pass, budget ${UNLIMITED_BUDGET.toLocaleString("en")}/h`, full, fullRss),
            passRow(`pass, default budget ${DEFAULT_BUDGET.toLocaleString("en")}/h`, limited, limitedRss),
          ],
          targets: [
            {
              what: `LLM calls of one pass over 10,000 entries${atSize}`,
              goal: "one per batch",
              measured: `${report.calls} calls, ${report.batches} batches, ${report.promptTokens.toLocaleString("en")} prompt tokens`,
              met: report.calls === report.batches && report.failedCalls === 0 ? true : report.batches > 0 ? false : null,
            },
            {
              what: `calls the default budget (${DEFAULT_BUDGET.toLocaleString("en")} tokens/h) allows`,
              goal: "informational",
              measured: `${limited.report.calls} of ${report.calls} calls (${limited.report.promptTokens.toLocaleString("en")} prompt tokens)${limited.report.budgetExhausted ? ", then budget exhausted" : ""}`,
              met: null,
            },
          ],
          details: {
            note:
              "p50 column: PassReport.durationMs of one pass (n = entries synthesised); ops/s = entries/s; server CPU of the whole pass in the note and in server_cpu_ms. " +
              "Token counts are the fake's usage: ceil(chars / 4) of system + user, and of the reply. A real model adds its latency per call " +
              "(the calls are sequential), so a real pass takes about outside_model_ms + calls × model latency.",
            embedding_model: "hash",
            seeding: { ...seeded, wallMs: round(seeded.wallMs, 0) },
            default_token_budget_per_hour: DEFAULT_BUDGET,
            full_budget: passDetails(full),
            default_budget: passDetails(limited),
            bench_process_rss_mb: round(process.memoryUsage().rss / 2 ** 20),
          },
        };
      },
      SERVER_ENV,
    );
  } finally {
    await fake.close();
  }
}
