// Compile (CONTRACT §18): `cairn compile --all` over this repository against a fresh server — the
// first run (every unit parsed, checked, described and sent), then a run with nothing changed (every
// unit parsed and checked, nothing sent), and a dry run without a server (parsing alone). The CLI
// runs as a child process, as a person or the post-commit hook runs it. Measured, never judged.
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { expectStatus, newDataDir, progress, round, withServer, type Row, type Section } from "./lib.js";

const PROJECT = "bench-compile";

interface Counts {
  files: number;
  units: number;
  sent: number;
  requests: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
}

interface Timed {
  ms: number;
  counts: Counts;
}

/** `cairn compile ARGS --json` in this repository; its wall time from spawn to exit, and what it printed. */
function compileRun(args: string[], env: Record<string, string>): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(packageRoot, "dist", "src", "cli.js"), "compile", ...args, "--json"], { cwd: packageRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = performance.now() - started;
      if (code !== 0) reject(new Error(`cairn compile ${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve({ ms, counts: JSON.parse(stdout) as Counts });
    });
  });
}

const row = (scenario: string, run: Timed, note: string): Row => ({
  scenario,
  n: 1,
  p50Ms: round(run.ms, 0),
  p95Ms: null,
  opsPerSec: round((run.counts.units * 1000) / run.ms, 0),
  cpuMsPerOp: null,
  rssMb: null,
  note,
});

export async function runCompileBench(): Promise<Section> {
  return withServer(newDataDir(), 4, async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const agent = await server.client.registerAgent("bench-compiler");
    expectStatus("POST /projects", await server.client.post("/projects", { name: PROJECT }, agent), 201);
    const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir(), DATA_DIR: server.dataDir, LOG_LEVEL: "warn" };
    const env = { ...base, CAIRN_URL: server.url, CAIRN_AGENT_ID: agent.agentId, CAIRN_API_KEY: agent.apiKey };

    progress("compile: parsing alone (a dry run with no server)");
    const parse = await compileRun(["--all", "--dry-run"], { ...base, CAIRN_URL: "http://127.0.0.1:9" });
    progress(`compile: cold, ${parse.counts.units} units of ${parse.counts.files} files into an empty project`);
    const cpuBefore = server.cpuMs();
    const cold = await compileRun(["--all", "--project", PROJECT], env);
    const coldCpu = server.cpuMs() - cpuBefore;
    progress("compile: again, with nothing changed");
    const warmCpuBefore = server.cpuMs();
    const warm = await compileRun(["--all", "--project", PROJECT], env);
    const warmCpu = server.cpuMs() - warmCpuBefore;
    const { files, units } = cold.counts;
    return {
      name: "compile",
      title: `Compile — \`cairn compile --all\` over this repository (${files} files, ${units} units) against a fresh server`,
      rows: [
        row("parse only (dry run, no server)", parse, `units/s in ops/s; extraction and process start, nothing sent`),
        row("cold: every unit sent", cold, `${cold.counts.created} created in ${cold.counts.requests} requests; server CPU ${round(coldCpu, 0)} ms`),
        row("nothing changed: every unit checked", warm, `${warm.counts.sent} sent; server CPU ${round(warmCpu, 0)} ms`),
      ],
      targets: [],
      details: {
        measurement: "wall time of `node dist/src/cli.js compile --all --json` from spawn to exit, cwd the repository root; the server's embedding model as in serverEnv",
        files,
        units,
        skipped: (cold.counts as Counts & { skipped?: unknown }).skipped ?? null,
        ms: { parse_only: round(parse.ms, 0), cold: round(cold.ms, 0), nothing_changed: round(warm.ms, 0) },
        server_cpu_ms: { cold: round(coldCpu, 0), nothing_changed: round(warmCpu, 0) },
        cold: cold.counts,
        nothing_changed: warm.counts,
      },
    };
  });
}
