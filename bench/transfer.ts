// Moving a team (issue 30, item 5): a store of 100,000 entries (with edges, tasks, messages and
// handoffs around them) exported with `cairn export` and imported into an empty server with
// `cairn import --dry-run` and `cairn import` — the built CLI as a child process, against real
// server processes with the hash embedder, so that embedding does not dominate what is measured.
// The source store is made by importing a generated file (timed too). Measured, never judged.
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { once } from "node:events";
import { newId } from "../src/core/ids.js";
import { packageRoot } from "../src/core/paths.js";
import { noteStream } from "./corpus.js";
import { newDataDir, progress, round, withServer, type Row, type Section, type ServerProcess } from "./lib.js";

export interface TransferOptions {
  entries: number;
  projects: number;
  edges: number;
  tasks: number;
  messages: number;
  handoffs: number;
}

const AGENTS = ["planner", "coder", "reviewer", "tester"];
const HISTORY_MS = 90 * 86_400_000;
/** The embedder of both servers: feature hashing, no model. */
const EMBEDDER = "hash";

interface Answer {
  imported: Record<string, number>;
  skipped: number;
  errors: { line: number; detail: string }[];
  dry_run: boolean;
}

interface Run {
  ms: number;
  stdout: string;
  /** The server's resident memory at its highest while the command ran. */
  peakRssMb: number;
}

/** Writes a file in the export's own format: what `cairn import` reads and a team's export holds. */
async function writeSource(file: string, options: TransferOptions): Promise<void> {
  const out = createWriteStream(file);
  const write = async (value: object): Promise<void> => {
    if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, "drain");
  };
  const firstAt = Date.now() - HISTORY_MS;
  const at = (position: number, of: number): string => new Date(firstAt + Math.floor((position / of) * HISTORY_MS)).toISOString();
  const projects = Array.from({ length: options.projects }, (_, index) => `team-${index + 1}`);
  await write({ kind: "header", format: 2, instance: "bench", url: "http://127.0.0.1", server_version: "bench", exported_at: new Date().toISOString(), project: null, since: null });
  for (const project of projects) {
    await write({ kind: "project", id: project, name: project, description: "", owner: "human", created_at: at(0, 1), members: AGENTS.map((agent) => ({ agent_id: agent, joined_at: at(0, 1) })) });
  }
  for (const agent of AGENTS) {
    await write({ kind: "agent", agent_id: agent, display_name: null, role: "agent", created_at: at(0, 1), last_seen_at: at(1, 1), current_project: projects[0] ?? null, deleted_at: null });
  }
  const next = noteStream(3003);
  const ids: string[] = [];
  for (let index = 0; index < options.entries; index++) {
    const note = next();
    const id = newId();
    ids.push(id);
    const when = at(index, options.entries);
    await write({
      kind: "entry",
      id,
      type: "memory",
      agent_id: AGENTS[index % AGENTS.length],
      project: projects[index % projects.length],
      scope: "project",
      content: note.content,
      confidence: 1,
      parents: [],
      tags: note.tags,
      headline: null,
      created_at: when,
      updated_at: when,
      version: 1,
      expires_at: null,
      read_count: 0,
      distinct_readers: 0,
      reinforcement_count: 0,
      last_reinforced_at: null,
      superseded_by: null,
      embedding_model: EMBEDDER,
      source: null,
      stale_since: null,
      stale_reason: null,
      anchor: null,
    });
  }
  // Edges within a project: entry i and the entry `projects` places earlier share it.
  for (let index = 0; index < options.edges; index++) {
    const src = ids[(index + projects.length) % ids.length] as string;
    const dst = ids[index % ids.length] as string;
    const when = at(index, options.edges);
    await write({ kind: "edge", id: newId(), src, dst, rel: "relates_to", note: null, project: projects[index % projects.length], agent_id: "planner", created_at: when, updated_at: when });
  }
  const tasks: string[] = [];
  for (let index = 0; index < options.tasks; index++) {
    const id = newId();
    const when = at(index, options.tasks);
    // Every tenth task waits for the one before it.
    const dependsOn = index % 10 === 9 && tasks.length > 0 ? [tasks.at(-1) as string] : [];
    tasks.push(id);
    await write({
      kind: "task",
      id,
      title: `Task ${index}`,
      description: "",
      status: "open",
      created_by: "planner",
      assigned_to: null,
      reserved: false,
      project: projects[index % projects.length],
      priority: "normal",
      tags: [],
      depends_on: dependsOn,
      due_at: null,
      expected_outcome: null,
      result: null,
      created_at: when,
      updated_at: when,
      claimed_at: null,
      completed_at: null,
      lease_expires_at: null,
      comments: [],
      outcomes: [],
      run_id: null,
      node_key: null,
      gate: null,
    });
  }
  for (let index = 0; index < options.messages; index++) {
    const when = at(index, options.messages);
    const to = AGENTS[(index + 1) % AGENTS.length] as string;
    await write({
      kind: "message",
      id: newId(),
      from: AGENTS[index % AGENTS.length],
      to,
      project: null,
      subject: "",
      body: `Message ${index}`,
      reply_to: null,
      created_at: when,
      // Half were read there.
      recipients: [{ agent_id: to, read_at: index % 2 === 0 ? when : null }],
    });
  }
  for (let index = 0; index < options.handoffs; index++) {
    await write({ kind: "handoff", id: newId(), agent_id: AGENTS[index % AGENTS.length], host: null, summary: `Session ${index}`, in_progress: [], next_steps: [], memory_refs: [], created_at: at(index, options.handoffs) });
  }
  out.end();
  await once(out, "finish");
}

/** `cairn ARGS` as the server's owner; its wall time, what it printed, and the server's peak memory meanwhile. */
function cairn(server: ServerProcess, args: string[]): Promise<Run> {
  const owner = server.owner();
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? tmpdir(),
    DATA_DIR: newDataDir(),
    CAIRN_URL: server.url,
    CAIRN_AGENT_ID: owner.agentId,
    CAIRN_API_KEY: owner.apiKey,
  };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let peak = server.memory().rssMb;
    const sampler = setInterval(() => (peak = Math.max(peak, server.memory().rssMb)), 250);
    const child = spawn(process.execPath, [join(packageRoot, "dist", "src", "cli.js"), ...args], { cwd: packageRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      clearInterval(sampler);
      rmSync(env.DATA_DIR, { recursive: true, force: true });
      const ms = performance.now() - started;
      if (code !== 0) reject(new Error(`cairn ${args.join(" ")} exited ${code}: ${stderr.slice(-2000)}`));
      else resolve({ ms, stdout, peakRssMb: round(Math.max(peak, server.memory().rssMb), 0) });
    });
  });
}

/** Lines of a file by kind, read as a stream. */
async function linesByKind(file: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line === "") continue;
    const kind = (JSON.parse(line) as { kind: string }).kind;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

const answerOf = (run: Run): Answer => JSON.parse(run.stdout) as Answer;

function row(scenario: string, run: Run, lines: number, note: string): Row {
  return { scenario, n: lines, p50Ms: round(run.ms, 0), p95Ms: null, opsPerSec: round((lines * 1000) / run.ms, 0), cpuMsPerOp: null, rssMb: run.peakRssMb, note };
}

const mb = (file: string): number => round(statSync(file).size / 2 ** 20, 1);

export async function runTransferBench(options: TransferOptions): Promise<Section> {
  const work = mkdtempSync(join(tmpdir(), "cairn-bench-transfer-"));
  const env = { EMBEDDING_MODEL: EMBEDDER };
  try {
    const sourceFile = join(work, "source.jsonl");
    progress(`writing a file of ${options.entries.toLocaleString("en")} entries, ${options.edges.toLocaleString("en")} edges, ${options.tasks} tasks, ${options.messages} messages`);
    await writeSource(sourceFile, options);
    const exportFile = join(work, "export.jsonl");
    const rows: Row[] = [];
    const details: Record<string, unknown> = { embedder: EMBEDDER, options, source_file_mb: mb(sourceFile) };

    const exported = await withServer(
      newDataDir(),
      4,
      async (source) => {
        await source.waitForHealth((health) => health.embeddings === "ready");
        progress("making the old server's store: cairn import of the generated file");
        const made = await cairn(source, ["import", sourceFile, "--json"]);
        const madeAnswer = answerOf(made);
        if (madeAnswer.errors.length > 0) throw new Error(`the generated file did not import: ${JSON.stringify(madeAnswer.errors.slice(0, 3))}`);
        const sourceLines = Object.values(await linesByKind(sourceFile)).reduce((sum, count) => sum + count, 0);
        rows.push(row("import: the old server's store, from a generated file", made, sourceLines, `${mb(sourceFile)} MB; RSS: the server's peak meanwhile`));
        progress("cairn export");
        const run = await cairn(source, ["export", "--output", exportFile]);
        details.source_import = madeAnswer;
        return run;
      },
      env,
    );
    const before = await linesByKind(exportFile);
    const exportLines = Object.values(before).reduce((sum, count) => sum + count, 0);
    rows.push(row("cairn export", exported, exportLines, `${mb(exportFile)} MB written; RSS: the server's peak`));
    details.export = { ms: round(exported.ms, 0), file_mb: mb(exportFile), lines_by_kind: before };

    await withServer(
      newDataDir(),
      4,
      async (target) => {
        await target.waitForHealth((health) => health.embeddings === "ready");
        progress("cairn import --dry-run into an empty server");
        const dry = await cairn(target, ["import", exportFile, "--dry-run", "--json"]);
        rows.push(row("cairn import --dry-run (empty server)", dry, exportLines, "one transaction, rolled back; RSS: the server's peak"));
        progress("cairn import");
        const real = await cairn(target, ["import", exportFile, "--json"]);
        rows.push(row("cairn import (empty server)", real, exportLines, `embedded with ${EMBEDDER}; RSS: the server's peak`));
        const againFile = join(work, "again.jsonl");
        const again = await cairn(target, ["export", "--output", againFile]);
        const after = await linesByKind(againFile);
        const dryAnswer = answerOf(dry);
        const realAnswer = answerOf(real);
        details.dry_run = { ms: round(dry.ms, 0), answer: dryAnswer };
        details.import = { ms: round(real.ms, 0), answer: realAnswer };
        details.export_after = { ms: round(again.ms, 0), file_mb: mb(againFile), lines_by_kind: after };
        details.dry_run_equals_import = JSON.stringify({ ...dryAnswer, dry_run: false }) === JSON.stringify(realAnswer);
        details.counts_equal = JSON.stringify(before) === JSON.stringify(after);
      },
      env,
    );
    return { name: "transfer", title: `Moving a team: export and import of ${options.entries.toLocaleString("en")} entries (${EMBEDDER} embedder)`, rows, targets: [], details };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
