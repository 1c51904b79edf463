import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../core/log.js";
import { agentSnapshotById, eventSeqsThrough, eventsAfter, handoffById, memoryById, messageById, projectSnapshotById, taskSnapshotById } from "../store/audit.js";
import type { Db } from "../store/db.js";
import type { EventRow } from "../store/events.js";

const run = promisify(execFile);

/** Events per read; a pass reads pages until it has used its time slice. */
const PAGE = 100;
/** A pass yields the event loop after this long, so auditing never shows in request latency. */
const SLICE_MS = 8;
const APPEND_INTERVAL_MS = 250;
const TAIL_BYTES = 65_536;

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const isId = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** The git used for the audit repo: no user config, hooks or signing can change what it does. */
export function git(dir: string, args: string[]): Promise<{ stdout: string }> {
  return run(
    "git",
    ["-c", "user.name=cairn", "-c", "user.email=cairn@localhost", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", ...args],
    { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" }, maxBuffer: 256 * 2 ** 20 },
  );
}

/** The last-seq trailer every audit commit carries; `cairn doctor` checks the log up to it. */
export const LAST_SEQ_TRAILER = "Last-Seq";

/**
 * The resource an event is about, as it is now. Content nobody but its parties may read — a
 * private entry, a message, a handoff — is reduced to ids and SHA-256 hashes: the audit repo is
 * read by humans with file access, not through the API's visibility rules.
 */
export function resourceSnapshot(db: Db, event: EventRow, payload: Record<string, unknown>): Record<string, unknown> | null {
  const family = event.type.split(".")[0];
  if (family === "memory" && isId(payload.memory_id)) {
    const row = memoryById(db, payload.memory_id);
    if (!row) return null;
    if (row.scope === "agent") {
      return { id: row.id, type: row.type, scope: row.scope, agent_id: row.agent_id, project: row.project, version: row.version, deleted_at: row.deleted_at, content_sha256: sha256(row.content) };
    }
    const { pk: _pk, content_key: _key, ...rest } = row as typeof row & { content_key?: string };
    return rest;
  }
  if (family === "task" && isId(payload.task_id)) return taskSnapshotById(db, payload.task_id) ?? null;
  if (event.type === "message.received" && isId(payload.message_id)) {
    const row = messageById(db, payload.message_id);
    if (!row) return null;
    return {
      id: row.id,
      from: row.sender,
      to: row.recipient,
      project: row.project,
      reply_to: row.reply_to,
      created_at: row.created_at,
      recipients: JSON.parse(row.recipients) as string[],
      subject_sha256: sha256(row.subject),
      body_sha256: sha256(row.body),
    };
  }
  if (family === "project" && isId(payload.project)) return projectSnapshotById(db, payload.project) ?? null;
  if (family === "agent") {
    const agentId = isId(payload.to) ? payload.to : payload.agent_id;
    return isId(agentId) ? (agentSnapshotById(db, agentId) ?? null) : null;
  }
  if (event.type === "session.handoff_saved" && isId(payload.handoff_id)) {
    const row = handoffById(db, payload.handoff_id);
    return row ? { id: row.id, agent_id: row.agent_id, created_at: row.created_at, summary_sha256: sha256(row.summary) } : null;
  }
  return null;
}

/** The highest seq in the last line of each file: where appending resumes after a restart. */
function lastAuditedSeq(eventsDir: string): number {
  if (!existsSync(eventsDir)) return 0;
  let last = 0;
  for (const name of readdirSync(eventsDir).filter((file) => file.endsWith(".jsonl"))) {
    const fd = openSync(join(eventsDir, name), "r");
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      const lines = buffer.toString("utf8").split("\n").filter((line) => line.trim() !== "");
      for (const line of lines.reverse()) {
        try {
          last = Math.max(last, (JSON.parse(line) as { seq: number }).seq);
          break;
        } catch {
          // A line cut short by a crash: the one before it is whole.
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  return last;
}

/**
 * The append-only audit log: every event, with a snapshot of its resource, appended as JSON Lines
 * to `audit/events/YYYY-MM-DD.jsonl` (by the event's UTC date) and committed to git every
 * `commitSeconds` and at close. It reads the event table from where the files end, so a restart
 * (or a deleted audit directory) picks up every event still retained. It is never read back as a
 * source of truth.
 */
export class AuditLog {
  private cursor = -1;
  private appendTimer: NodeJS.Timeout | null = null;
  private pumping = false;
  private commitTimer: NodeJS.Timeout | null = null;
  private committing: Promise<void> = Promise.resolve();
  private gitAvailable = true;
  private lastCommitted = 0;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly dir: string,
    private readonly commitSeconds: number,
    private readonly log: Logger,
  ) {}

  private get eventsDir(): string {
    return join(this.dir, "events");
  }

  async start(): Promise<void> {
    try {
      await run("git", ["--version"]);
    } catch {
      this.gitAvailable = false;
      this.log.warn("git not found: audit lines are written but not committed");
    }
    await this.ensureRepo();
    this.appendTimer = setInterval(() => this.pump(), APPEND_INTERVAL_MS);
    this.appendTimer.unref();
    this.commitTimer = setInterval(() => void this.commit(), this.commitSeconds * 1000);
    this.commitTimer.unref();
  }

  /** A missing directory (deleted by hand) is recreated and refilled from the event table. */
  private async ensureRepo(): Promise<void> {
    if (existsSync(join(this.dir, ".git")) && this.cursor >= 0) return;
    mkdirSync(this.eventsDir, { recursive: true, mode: 0o700 });
    if (this.gitAvailable && !existsSync(join(this.dir, ".git"))) await git(this.dir, ["init", "-q", "-b", "main"]);
    this.cursor = lastAuditedSeq(this.eventsDir);
  }

  /** Appends in time slices until caught up, yielding between them. */
  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    const slice = (): void => {
      if (this.closed || this.appendPass(SLICE_MS)) this.pumping = false;
      else setImmediate(slice);
    };
    slice();
  }

  /** Appends what the database committed since the last pass, for up to `budgetMs`; true when caught up. */
  appendPass(budgetMs = Number.POSITIVE_INFINITY): boolean {
    if (this.cursor < 0 || !existsSync(this.eventsDir)) {
      // Deleted under a running server: start over once the repo is back.
      this.cursor = -1;
      void this.ensureRepo().catch((error: unknown) => this.log.error("audit log unavailable", { error }));
      return false;
    }
    const started = performance.now();
    while (performance.now() - started < budgetMs) {
      const rows = eventsAfter(this.db, this.cursor, PAGE);
      if (rows.length === 0) return true;
      const byFile = new Map<string, string[]>();
      for (const row of rows) {
        const payload = JSON.parse(row.payload) as Record<string, unknown>;
        const line = JSON.stringify({
          seq: row.seq,
          id: row.id,
          type: row.type,
          agent_id: row.agent_id,
          project: row.project,
          payload,
          created_at: row.created_at,
          resource: resourceSnapshot(this.db, row, payload),
        });
        const file = `${row.created_at.slice(0, 10)}.jsonl`;
        byFile.set(file, [...(byFile.get(file) ?? []), line]);
      }
      for (const [file, lines] of byFile) appendFileSync(join(this.eventsDir, file), `${lines.join("\n")}\n`, { mode: 0o600 });
      this.cursor = (rows.at(-1) as EventRow).seq;
    }
    return false;
  }

  /** Appends everything outstanding, then commits it (one commit at a time). */
  commit(): Promise<void> {
    this.committing = this.committing.then(async () => {
      try {
        await this.ensureRepo();
        while (!this.appendPass(SLICE_MS)) await new Promise((resolve) => setImmediate(resolve));
        if (!this.gitAvailable || this.cursor <= this.lastCommitted) return;
        await git(this.dir, ["add", "-A", "events"]);
        const status = await git(this.dir, ["status", "--porcelain", "events"]);
        if (status.stdout.trim() === "") {
          this.lastCommitted = this.cursor;
          return;
        }
        await git(this.dir, ["commit", "-q", "-m", `events through ${this.cursor}`, "-m", `${LAST_SEQ_TRAILER}: ${this.cursor}`]);
        this.lastCommitted = this.cursor;
      } catch (error) {
        this.log.error("audit commit failed", { error });
      }
    });
    return this.committing;
  }

  /** Stops the timers and commits what is left. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.appendTimer) clearInterval(this.appendTimer);
    if (this.commitTimer) clearInterval(this.commitTimer);
    await this.commit();
  }
}

/**
 * `cairn doctor`'s check: the last audit commit names the seq it reaches, and every event up to it
 * that the database still holds must be in the committed files exactly once.
 */
export async function verifyAudit(db: Db, dir: string): Promise<{ ok: boolean; detail: string }> {
  if (!existsSync(join(dir, ".git"))) return { ok: true, detail: "no audit repository yet" };
  let message: string;
  try {
    message = (await git(dir, ["log", "-1", "--format=%B"])).stdout;
  } catch {
    return { ok: true, detail: "no audit commit yet" };
  }
  const through = Number(new RegExp(`^${LAST_SEQ_TRAILER}: (\\d+)$`, "m").exec(message)?.[1] ?? Number.NaN);
  if (!Number.isSafeInteger(through)) return { ok: false, detail: `the last audit commit has no ${LAST_SEQ_TRAILER} trailer` };
  const files = (await git(dir, ["ls-tree", "-r", "--name-only", "HEAD", "events"])).stdout.split("\n").filter((name) => name.endsWith(".jsonl"));
  const seen = new Set<number>();
  let duplicates = 0;
  for (const file of files) {
    for (const line of (await git(dir, ["show", `HEAD:${file}`])).stdout.split("\n")) {
      if (line.trim() === "") continue;
      const seq = (JSON.parse(line) as { seq: number }).seq;
      if (seen.has(seq)) duplicates++;
      seen.add(seq);
    }
  }
  const missing = eventSeqsThrough(db, through).filter((seq) => !seen.has(seq));
  if (missing.length > 0) {
    const count = missing.length === 1 ? "1 event" : `${missing.length} events`;
    return { ok: false, detail: `${count} through seq ${through} missing from the audit repository (first: ${missing[0]})` };
  }
  if (duplicates > 0) return { ok: false, detail: `${duplicates} events appear more than once in the audit repository` };
  return { ok: true, detail: `${seen.size} events committed through seq ${through}; every retained one is there` };
}
