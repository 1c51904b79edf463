// Capture digestion: how fast the archivist turns queued session text into memory. A backlog of
// captures is waiting when the archivist starts (it finds them without an event), then captures
// arrive one at a time while it runs. The archivist runs in this process, as `cairn archivist`
// would beside the server, and its model is a fake on loopback that answers at once, so the
// numbers are the archivist's and the server's own work: a real model adds its latency per capture.
import { Archivist } from "../archivist/archivist.js";
import { startFakeLlm, type FakeLlm } from "../test/helpers/fake-llm.js";
import { countingLogger, SERVER_ENV, settingsFor } from "./archivist.js";
import { noteStream } from "./corpus.js";
import { subscribe } from "./events.js";
import { latencyStats, newDataDir, progress, round, withServer, type LatencyStats, type Row, type Section, type ServerProcess } from "./lib.js";

export interface CaptureOptions {
  /** Captures queued before the archivist starts. */
  backlog: number;
  /** Captures then sent one at a time, each waited for. */
  live: number;
  /** Notes in one capture's text; the fake turns `facts` of them into facts. */
  notesPerCapture: number;
  facts: number;
  timeoutMs: number;
}

/** The largest budget the setting allows: the default (200,000 tokens/h) pays for about 65 captures of this size. */
const UNLIMITED_BUDGET = 100_000_000;
const CAPTURE_STREAM = 4003;
const PROJECT = "bench-captures";

interface Digested {
  at: number;
  outcome: string;
  memoryIds: number;
}

/** The facts the fake answers with: the first `count` lines of the capture's text, numbered so they stay distinct. */
function factsReply(user: string, count: number): string {
  const json = user.slice(user.indexOf("\n") + 1, user.lastIndexOf("\n"));
  let text = "";
  try {
    text = (JSON.parse(json) as { text?: string }).text ?? "";
  } catch {
    // an unexpected data block: no facts
  }
  const lines = text.split("\n").filter((line) => line.startsWith("- "));
  const facts = lines.slice(0, count).map((line) => ({ content: line.slice(2), tags: ["bench"] }));
  return JSON.stringify({ facts });
}


/** An archivist with its model pointed at the fake over the OpenAI API; warnings counted, the first few shown. */
function newArchivist(server: ServerProcess, fake: FakeLlm): { archivist: Archivist; warnings: () => number; stop: () => Promise<void> } {
  // No scheduled pass fires while the benchmark runs: only the capture trigger works.
  const settings = settingsFor(server, fake, { ARCHIVIST_TOKEN_BUDGET_PER_HOUR: String(UNLIMITED_BUDGET) });
  const logger = countingLogger();
  const archivist = new Archivist(settings, logger.log);
  const stop = (): Promise<void> => {
    logger.stopping();
    return archivist.stop();
  };
  return { archivist, warnings: logger.count, stop };
}

/** A session excerpt: a few notes of the corpus as a bulleted list, under a heading naming the capture. */
function captureText(next: () => { content: string }, index: number, notes: number): string {
  const lines = Array.from({ length: notes }, (_, line) => `- ${next().content} (capture ${index}, note ${line + 1})`);
  return [`Session ${index}: what was done and learned`, "", ...lines].join("\n");
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

/** Resolves once every id in `ids` has a capture.digested, or after `timeoutMs` with those that have. */
async function allDigested(digested: Map<string, Digested>, ids: string[], timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!ids.every((id) => digested.has(id))) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

export async function runCaptureBench(options: CaptureOptions): Promise<Section> {
  const fake = await startFakeLlm();
  fake.respond((call) => factsReply(call.user, options.facts));
  try {
    return await withServer(
      newDataDir(),
      4,
      async (server) => {
        await server.waitForHealth((health) => health.embeddings === "ready");
        const author = await server.client.registerAgent("bench-author");
        const created = await server.client.post("/projects", { name: PROJECT }, author);
        if (created.status !== 201) throw new Error(`POST /projects: ${created.status} ${created.body}`);

        // capture.digested goes to the author and the archivist only: the author listens.
        const digested = new Map<string, Digested>();
        const stream = await subscribe(server, author, "/events/stream?type=capture.digested", (data, at) => {
          const event = JSON.parse(data) as { payload: { capture_id?: string; outcome?: string; memory_ids?: string[] } };
          const id = event.payload.capture_id;
          if (typeof id === "string" && !digested.has(id)) digested.set(id, { at, outcome: event.payload.outcome ?? "?", memoryIds: event.payload.memory_ids?.length ?? 0 });
        });

        const next = noteStream(CAPTURE_STREAM);
        const post = async (index: number): Promise<{ id: string; acked: number }> => {
          const reply = await server.client.post("/captures", { content: captureText(next, index, options.notesPerCapture), project: PROJECT, session_id: `bench-session-${index % 20}`, host: "bench" }, author);
          if (reply.status !== 201) throw new Error(`POST /captures: ${reply.status} ${reply.body}`);
          return { id: (JSON.parse(reply.body) as { id: string }).id, acked: performance.now() };
        };

        progress(`captures: queueing ${options.backlog} captures of ${options.notesPerCapture} notes each`);
        const backlog: string[] = [];
        for (let index = 0; index < options.backlog; index++) backlog.push((await post(index)).id);

        progress(`captures: an archivist starts and digests the backlog (${options.facts} facts each)`);
        const { archivist, warnings, stop } = newArchivist(server, fake);
        const callsBefore = fake.calls.length;
        const cpuBefore = server.cpuMs();
        const started = performance.now();
        archivist.start();
        await archivist.leased();
        const leasedMs = performance.now() - started;
        const backlogDone = await allDigested(digested, backlog, options.timeoutMs * Math.max(1, options.backlog / 10));
        const arrivals = backlog.flatMap((id) => {
          const seen = digested.get(id);
          return seen ? [seen.at] : [];
        });
        const lastAt = Math.max(...arrivals);
        const backlogMs = lastAt - started;
        const backlogCpuMs = server.cpuMs() - cpuBefore;
        const ordered = [...arrivals].sort((a, b) => a - b);
        // One capture after another: the gap between two capture.digested is one capture's digest.
        const gaps = latencyStats(ordered.slice(1).map((at, index) => at - (ordered[index] as number)));
        const backlogCalls = fake.calls.length - callsBefore;

        progress(`captures: ${options.live} captures sent one at a time to the running archivist`);
        const liveLatencies: number[] = [];
        let liveMissing = 0;
        const liveCpuBefore = server.cpuMs();
        const liveStarted = performance.now();
        for (let index = 0; index < options.live; index++) {
          const sent = await post(options.backlog + index);
          if (!(await allDigested(digested, [sent.id], options.timeoutMs))) {
            liveMissing++;
            continue;
          }
          liveLatencies.push((digested.get(sent.id) as Digested).at - sent.acked);
        }
        const liveWallMs = performance.now() - liveStarted;
        const liveCpuMs = server.cpuMs() - liveCpuBefore;
        const live = latencyStats(liveLatencies);
        stream.close();
        await stop();

        const all = [...digested.values()];
        const outcomes = all.reduce<Record<string, number>>((counts, item) => ({ ...counts, [item.outcome]: (counts[item.outcome] ?? 0) + 1 }), {});
        const entries = all.reduce((sum, item) => sum + item.memoryIds, 0);
        const perSecond = round((arrivals.length * 1000) / Math.max(1, backlogMs), 1);
        const rssMb = server.memory().rssMb;
        return {
          name: "captures",
          title: `Capture digestion — ${options.backlog} queued captures, then ${options.live} sent one at a time; ${options.facts} facts each; in-process archivist, fake LLM answering at once, EMBEDDING_MODEL=hash`,
          rows: [
            statsRow("backlog: one capture (gap between capture.digested)", gaps, {
              opsPerSec: perSecond,
              cpuMsPerOp: round(backlogCpuMs / Math.max(1, arrivals.length), 2),
              rssMb,
              note: `ops/s: captures/s from the archivist's start to the last capture.digested (${round(backlogMs, 0)} ms, lease ${round(leasedMs, 0)} ms of it); p99 ${round(gaps.p99, 1)} ms`,
            }),
            statsRow("live: POST /captures 201 → capture.digested", live, {
              opsPerSec: round((liveLatencies.length * 1000) / Math.max(1, liveWallMs), 1),
              cpuMsPerOp: round(liveCpuMs / Math.max(1, liveLatencies.length), 2),
              rssMb,
              note: `includes the trigger's 100 ms debounce; p99 ${round(live.p99, 1)} ms, max ${round(live.max, 1)} ms`,
            }),
          ],
          targets: [
            {
              what: "captures digested",
              goal: `${options.backlog + options.live}`,
              measured: `${(outcomes.digested ?? 0).toString()} digested (${JSON.stringify(outcomes)}), ${liveMissing} live ones not in time${backlogDone ? "" : ", backlog not finished in time"}`,
              met: backlogDone && liveMissing === 0 && outcomes.digested === options.backlog + options.live,
            },
          ],
          details: {
            measurement:
              "the author's GET /events/stream?type=capture.digested gives each capture's time; backlog: captures posted before the archivist starts, " +
              "which finds them with its first run (50 a run, runs back to back); live: each capture posted and waited for before the next",
            embedding_model: "hash",
            token_budget_per_hour: UNLIMITED_BUDGET,
            backlog_ms: round(backlogMs, 0),
            lease_ms: round(leasedMs, 0),
            backlog_model_calls: backlogCalls,
            entries_written: entries,
            server_cpu_ms: { backlog: round(backlogCpuMs, 0), live: round(liveCpuMs, 0) },
            ms: {
              backlog_gap: { p50: round(gaps.p50, 2), p95: round(gaps.p95, 2), p99: round(gaps.p99, 2), max: round(gaps.max, 2) },
              live: { p50: round(live.p50, 2), p95: round(live.p95, 2), p99: round(live.p99, 2), max: round(live.max, 2) },
            },
            archivist_warnings: warnings(),
            model_prompt_tokens: archivist.model?.promptTokens ?? null,
            model_completion_tokens: archivist.model?.completionTokens ?? null,
          },
        };
      },
      SERVER_ENV,
    );
  } finally {
    await fake.close();
  }
}
