// The web UI against a real server process holding 10,000 memory entries and 2,000 tasks: time to
// interactive for the Overview and Memory tabs in Debian's Chromium (a fresh browser context per
// run, so nothing is cached), and the size of what the browser downloads.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium, type Browser } from "playwright-core";
import { packageRoot } from "../src/core/paths.js";
import { noteStream } from "./corpus.js";
import { judge, latencyStats, newDataDir, progress, round, runClients, withServer, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface UiOptions {
  entries: number;
  tasks: number;
  runs: number;
  seedClients: number;
}

const PASSWORD = "bench-ui-password";
const UI_STREAM = 5001;
const TTI_TARGET_MS = 1000;
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

/**
 * What "interactive" means per tab: its first data is on screen and nothing is still loading.
 * Functions, not strings: the UI's CSP forbids evaluating strings in the page.
 */
const READY: Record<"overview" | "memory", () => boolean> = {
  overview: () => {
    const { document } = globalThis as unknown as PageDom;
    const values = Array.from(document.querySelectorAll("main .stat-value"));
    return document.querySelector(".app-header") !== null && values.length > 0 && values.every((el) => el.textContent !== "…") && document.querySelectorAll("main .loading").length === 0;
  },
  memory: () => {
    const { document } = globalThis as unknown as PageDom;
    return document.querySelectorAll("main article.memory-card").length > 0 && document.querySelectorAll("main .loading").length === 0;
  },
};

/** The little of the DOM the predicates use (the project compiles without the DOM library). */
interface PageDom {
  document: { querySelector(selector: string): unknown; querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> };
}

async function seed(server: ServerProcess, options: UiOptions): Promise<void> {
  const agents: Credentials[] = [];
  for (let index = 1; index <= 6; index++) agents.push(await server.client.registerAgent(`ui-agent-${index}`));
  const next = noteStream(UI_STREAM);
  progress(`ui: seeding ${options.entries.toLocaleString("en")} entries and ${options.tasks.toLocaleString("en")} tasks (POST, ${options.seedClients} clients)`);
  await runClients(server, options.seedClients, options.entries, async (index) => {
    const note = next();
    const reply = await server.client.post("/memory", { content: note.content, tags: note.tags, project: null, allow_duplicate: true }, agents[index % agents.length]);
    if (reply.status !== 201) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
  });
  await runClients(server, options.seedClients, options.tasks, async (index) => {
    const agent = agents[index % agents.length] as Credentials;
    const reply = await server.client.post("/tasks", { title: `Task ${index}: follow up on note ${index % 97}`, project: null }, agent);
    if (reply.status !== 201) throw new Error(`POST /tasks: ${reply.status} ${reply.body}`);
    // A fifth of the tasks are claimed, as on a busy board.
    if (index % 5 === 0) {
      const id = (JSON.parse(reply.body) as { id: string }).id;
      const claimed = await server.client.post(`/tasks/${id}/claim`, {}, agent);
      if (claimed.status !== 200) throw new Error(`POST /tasks/${id}/claim: ${claimed.status} ${claimed.body}`);
    }
  });
}

async function sessionCookie(server: ServerProcess): Promise<string> {
  const reply = await server.client.post("/ui/login", { password: PASSWORD });
  if (reply.status !== 200) throw new Error(`POST /ui/login: ${reply.status} ${reply.body}`);
  return (JSON.parse(reply.body) as { session: string }).session;
}

/** Milliseconds from navigation to the tab being interactive, once per run, each in a fresh context. */
async function timeToInteractive(browser: Browser, server: ServerProcess, tab: keyof typeof READY, runs: number): Promise<{ samples: number[]; requests: number; external: string[] }> {
  const samples: number[] = [];
  let requests = 0;
  const external: string[] = [];
  const paths = new Map<string, number>();
  const origin = new URL(server.url).origin;
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // A signed-in human opening the tab: the session is set beforehand, so the time is the tab's own.
    await context.addCookies([{ name: "cairn_ui_session", value: await sessionCookie(server), url: origin }]);
    const page = await context.newPage();
    page.on("request", (request) => {
      requests++;
      const path = request.url().replace(/\?.*$/, "");
      paths.set(path, (paths.get(path) ?? 0) + 1);
      if (!request.url().startsWith(origin)) external.push(request.url());
    });
    const started = performance.now();
    await page.goto(`${server.url}/ui/#/${tab}`);
    await page.waitForFunction(READY[tab], undefined, { timeout: 30_000, polling: "raf" });
    samples.push(performance.now() - started);
    await context.close();
  }
  progress(`ui: ${tab} requests per load: ${[...paths].map(([path, count]) => `${path.slice(origin.length)} ×${count / runs}`).join(", ")}`);
  return { samples, requests: Math.round(requests / runs), external };
}

function assetSizes(): { files: { name: string; bytes: number; gzipBytes: number }[]; totalGzip: number } {
  const dir = join(packageRoot, "dist", "ui");
  const files = readdirSync(dir)
    .filter((name) => !name.endsWith(".map"))
    .map((name) => {
      const path = join(dir, name);
      return { name, bytes: statSync(path).size, gzipBytes: gzipSync(readFileSync(path), { level: 9 }).length };
    });
  return { files, totalGzip: files.reduce((sum, file) => sum + file.gzipBytes, 0) };
}

function ttiRow(scenario: string, samples: number[], requests: number): Row {
  const stats = latencyStats(samples);
  return { scenario, n: stats.n, p50Ms: round(stats.p50), p95Ms: round(stats.p95), opsPerSec: null, cpuMsPerOp: null, rssMb: null, note: `max ${round(stats.max)} ms; ${requests} requests per load` };
}

export async function runUiBench(options: UiOptions): Promise<Section> {
  const sizes = assetSizes();
  return withServer(
    newDataDir(),
    options.seedClients,
    async (server) => {
      await server.waitForHealth((health) => health.embeddings === "ready");
      await seed(server, options);
      const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ARGS, headless: true });
      try {
        progress(`ui: time to interactive, ${options.runs} loads per tab`);
        const overview = await timeToInteractive(browser, server, "overview", options.runs);
        const memory = await timeToInteractive(browser, server, "memory", options.runs);
        const p50 = (samples: number[]) => latencyStats(samples).p50;
        const atSize = options.entries === 10_000 ? "" : ` (this run: ${options.entries.toLocaleString("en")} entries, ${options.tasks.toLocaleString("en")} tasks)`;
        const external = [...overview.external, ...memory.external];
        return {
          name: "ui",
          title: `Web UI — ${options.entries.toLocaleString("en")} entries and ${options.tasks.toLocaleString("en")} tasks; Chromium, fresh context per load, 1280×800, EMBEDDING_MODEL=hash`,
          rows: [ttiRow("Overview: navigation → interactive", overview.samples, overview.requests), ttiRow("Memory: navigation → interactive", memory.samples, memory.requests)],
          targets: [
            { what: `Overview time to interactive, p50${atSize}`, goal: `≤ ${TTI_TARGET_MS} ms`, measured: `${round(p50(overview.samples))} ms`, met: judge(p50(overview.samples), (value) => value <= TTI_TARGET_MS) },
            { what: `Memory time to interactive, p50${atSize}`, goal: `≤ ${TTI_TARGET_MS} ms`, measured: `${round(p50(memory.samples))} ms`, met: judge(p50(memory.samples), (value) => value <= TTI_TARGET_MS) },
            { what: "UI assets, gzipped (what a first load downloads)", goal: "informational", measured: `${round(sizes.totalGzip / 1024)} KiB (${sizes.files.map((file) => `${file.name} ${round(file.gzipBytes / 1024)} KiB`).join(", ")})`, met: null },
            { what: "requests that left loopback", goal: "none", measured: external.length === 0 ? "none" : external.slice(0, 3).join(", "), met: external.length === 0 },
          ],
          details: { options, assets: sizes.files, overview_ms: overview.samples.map((value) => round(value)), memory_ms: memory.samples.map((value) => round(value)) },
        };
      } finally {
        await browser.close();
      }
    },
    { EMBEDDING_MODEL: "hash", UI_PASSWORD: PASSWORD },
  );
}
