import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../core/log.js";
import type { EventRow } from "../store/events.js";
import type { Store } from "../store/store.js";

const run = promisify(execFile);

/** Events per read; a pass reads pages until it has used its time slice. */
const PAGE = 100;
/** A pass yields the event loop after this long, so auditing never shows in request latency. */
const SLICE_MS = 8;
const APPEND_INTERVAL_MS = 250;
const TAIL_BYTES = 65_536;

/** Lets requests run between two slices of appending. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const isId = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/** The git used for the audit repo: no user config, hooks or signing can change what it does. */
function git(dir: string, args: string[]): Promise<{ stdout: string }> {
  return run(
    "git",
    ["-c", "user.name=cairn", "-c", "user.email=cairn@localhost", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", ...args],
    { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" }, maxBuffer: 256 * 2 ** 20 },
  );
}

/**
 * Whether a failed git call means there is no git to run. A spawn whose working directory is gone
 * fails with the same ENOENT as a missing binary, and the audit directory deleted while a commit
 * spawned git (then made again by the next append) must not turn commits off for the rest of the
 * process: on ENOENT git is asked for its version from the temp directory.
 */
export async function gitMissing(error: unknown): Promise<boolean> {
  const notFound = (failure: unknown): boolean => (failure as { code?: unknown } | null)?.code === "ENOENT";
  if (!notFound(error)) return false;
  try {
    await git(tmpdir(), ["--version"]);
    return false;
  } catch (again) {
    return notFound(again);
  }
}

/** The last-seq trailer every audit commit carries; `cairn doctor` checks the log up to it. */
const LAST_SEQ_TRAILER = "Last-Seq";

/**
 * The resource an event is about, as it is now. Content nobody but its parties may read — a
 * private entry, a message, a handoff — is reduced to ids and SHA-256 hashes: the audit repo is
 * read by humans with file access, not through the API's visibility rules.
 */
async function resourceSnapshot(store: Store, event: EventRow, payload: Record<string, unknown>): Promise<Record<string, unknown> | null> {
  const { audit, reader } = store;
  const family = event.type.split(".")[0];
  if (family === "memory" && isId(payload.memory_id)) {
    const row = await audit.memoryById(reader, payload.memory_id);
    if (!row) return null;
    if (row.scope === "agent") {
      return { id: row.id, type: row.type, scope: row.scope, agent_id: row.agent_id, project: row.project, version: row.version, deleted_at: row.deleted_at, content_sha256: sha256(row.content) };
    }
    const { pk: _pk, content_key: _key, ...rest } = row as typeof row & { content_key?: string };
    return rest;
  }
  if (family === "task" && isId(payload.task_id)) return (await audit.taskById(reader, payload.task_id)) ?? null;
  if (event.type === "message.received" && isId(payload.message_id)) {
    const row = await audit.messageById(reader, payload.message_id);
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
  if (family === "decision" && isId(payload.decision_id)) {
    const row = await store.decisions.byId(reader, payload.decision_id);
    if (!row) return null;
    const { pk: _pk, ...rest } = row;
    return rest;
  }
  if (family === "project" && isId(payload.project)) return (await audit.projectById(reader, payload.project)) ?? null;
  if (family === "agent") {
    const agentId = isId(payload.to) ? payload.to : payload.agent_id;
    return isId(agentId) ? ((await audit.agentById(reader, agentId)) ?? null) : null;
  }
  if (event.type === "session.handoff_saved" && isId(payload.handoff_id)) {
    const row = await audit.handoffById(reader, payload.handoff_id);
    return row ? { id: row.id, agent_id: row.agent_id, created_at: row.created_at, summary_sha256: sha256(row.summary) } : null;
  }
  return null;
}

interface AuditedLine {
  seq: number;
  id: string;
}

/** The last whole line of each file: where appending ended in it. */
function fileTails(eventsDir: string): AuditedLine[] {
  if (!existsSync(eventsDir)) return [];
  const tails: AuditedLine[] = [];
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
          const { seq, id } = JSON.parse(line) as AuditedLine;
          tails.push({ seq, id });
          break;
        } catch {
          // A line cut short by a crash: the one before it is whole.
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  return tails;
}

/** Whether an event is among the lines of its day's file already. */
function isAudited(eventsDir: string, event: { id: string; created_at: string }): boolean {
  const file = join(eventsDir, `${event.created_at.slice(0, 10)}.jsonl`);
  // An event id is a UUID that appears in its own line only.
  return existsSync(file) && readFileSync(file, "utf8").includes(`"id":${JSON.stringify(event.id)}`);
}

interface Restore {
  /** The highest seq of the audit log's events that the database does not hold. */
  audit_last_seq: number;
  /** The database's last event when the audit log was continued from it. */
  database_last_seq: number;
}

export interface AuditPosition {
  /** Appending resumes after this seq of the database's events. */
  resumeAfter: number;
  /** Set when the audit log has run ahead of the database: a backup was restored over it. */
  restore: (Restore & { recorded: boolean }) | null;
}

/** Where the audit log in `dir` stands against the database: `serve` resumes from it, `cairn doctor` reports it. */
export async function auditPosition(store: Store, dir: string): Promise<AuditPosition> {
  const { audit, reader } = store;
  const eventsDir = join(dir, "events");
  const databaseLast = await store.events.maxSeq(reader);
  let resumeAfter = 0;
  let ahead: number | null = null;
  // A file's last line is the current history when the database holds that very event. A seq the
  // database lacks or gives to another event was written before a backup was restored.
  for (const tail of fileTails(eventsDir).sort((a, b) => b.seq - a.seq)) {
    const id = await audit.eventIdAt(reader, tail.seq);
    if (id === tail.id) {
      resumeAfter = tail.seq;
      break;
    }
    if (id !== undefined || tail.seq > databaseLast) {
      ahead ??= tail.seq;
      continue;
    }
    // Audited, then pruned from the database with everything before it.
    resumeAfter = tail.seq;
    break;
  }
  if (ahead === null) return { resumeAfter, restore: null };
  // Continued from the restored database before: resume where that left off, or later.
  const recorded = recordedRestore(dir, ahead);
  if (recorded) return { resumeAfter: Math.max(resumeAfter, recorded.database_last_seq), restore: { ...recorded, recorded: true } };
  // The database's next event already audited: the log went on past the backup, so it holds every
  // event the database has; only new ones are appended, after the old history.
  const next = (await audit.eventsAfter(reader, resumeAfter, 1))[0];
  if (next === undefined || !isAudited(eventsDir, next)) return { resumeAfter, restore: null };
  return { resumeAfter: databaseLast, restore: { audit_last_seq: ahead, database_last_seq: databaseLast, recorded: false } };
}

/** Each time the audit log was continued from a restored database: one JSON line, kept in the repo. */
export const RESTORES_FILE = "restores.jsonl";

function recordedRestore(dir: string, auditLastSeq: number): Restore | undefined {
  const file = join(dir, RESTORES_FILE);
  if (!existsSync(file)) return undefined;
  const restores = readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line) => {
      try {
        const { audit_last_seq, database_last_seq } = JSON.parse(line) as Restore;
        return [{ audit_last_seq, database_last_seq }];
      } catch {
        return [];
      }
    });
  return restores.findLast((restore) => restore.audit_last_seq === auditLastSeq);
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
  /** The repo check, append pass or commit in progress: one at a time, so no event is appended twice or committed unseen. */
  private working: Promise<unknown> = Promise.resolve();
  private gitAvailable = true;
  private lastCommitted = 0;
  private closed = false;

  /**
   * `scrub`: a JSON value with every secret in its strings replaced (the services' redaction). The
   * audit repo must never hold a secret (CONTRACT §1.1), and what it snapshots was written by
   * agents: a task's description, a decision's rationale, a custom event's payload.
   */
  constructor(
    private readonly store: Store,
    private readonly dir: string,
    private readonly commitSeconds: number,
    private readonly log: Logger,
    private readonly scrub: (value: unknown) => Promise<unknown>,
  ) {}

  private get eventsDir(): string {
    return join(this.dir, "events");
  }

  /**
   * Whether git ran, judged by its first use rather than a `git --version` at start: spawning a
   * child forks the whole server, which cost its main thread ~30 ms while it was starting.
   */
  private async withGit(work: () => Promise<unknown>): Promise<void> {
    if (!this.gitAvailable) return;
    try {
      await work();
    } catch (error) {
      if (!(await gitMissing(error))) throw error;
      this.gitAvailable = false;
      this.log.warn("git not found: audit lines are written but not committed");
    }
  }

  async start(): Promise<void> {
    await this.ensureRepo();
    this.appendTimer = setInterval(() => this.pump(), APPEND_INTERVAL_MS);
    this.appendTimer.unref();
    this.commitTimer = setInterval(() => void this.commit(), this.commitSeconds * 1000);
    this.commitTimer.unref();
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const done = this.working.then(work);
    this.working = done.catch(() => undefined);
    return done;
  }

  /** A missing directory (deleted by hand) is recreated and refilled from the event table. */
  private ensureRepo(): Promise<void> {
    return this.exclusive(async () => {
      if (existsSync(join(this.dir, ".git")) && this.cursor >= 0) return;
      mkdirSync(this.eventsDir, { recursive: true, mode: 0o700 });
      if (!existsSync(join(this.dir, ".git"))) {
        await this.withGit(() => git(this.dir, ["init", "-q", "-b", "main"]));
        // A new repository holds no commit: what was committed into a deleted one is committed again.
        this.lastCommitted = 0;
      }
      const { resumeAfter, restore } = await auditPosition(this.store, this.dir);
      if (restore !== null && !restore.recorded) {
        const { audit_last_seq, database_last_seq } = restore;
        this.log.warn("the audit log is ahead of the database (a restored backup?): continuing it from the database's events", { audit_last_seq, database_last_seq });
        const line = JSON.stringify({ at: new Date().toISOString(), audit_last_seq, database_last_seq });
        appendFileSync(join(this.dir, RESTORES_FILE), `${line}\n`, { mode: 0o600 });
      }
      this.cursor = resumeAfter;
    });
  }

  /** Appends in time slices until caught up, yielding between them. */
  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    const slices = async (): Promise<void> => {
      while (!this.closed && !(await this.appendPass(SLICE_MS))) await nextTurn();
    };
    slices()
      // The next interval tries again (a deleted directory is recreated by then).
      .catch((error: unknown) => this.log.error("audit append failed", { error }))
      .finally(() => {
        this.pumping = false;
      });
  }

  /** Appends what the database committed since the last pass, for up to `budgetMs`; true when caught up. */
  appendPass(budgetMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.exclusive(async () => {
      if (this.cursor < 0 || !existsSync(this.eventsDir)) {
        // Deleted under a running server: start over once the repo is back (queued after this pass).
        this.cursor = -1;
        void this.ensureRepo().catch((error: unknown) => this.log.error("audit log unavailable", { error }));
        return false;
      }
      const started = performance.now();
      while (performance.now() - started < budgetMs) {
        const rows = await this.store.audit.eventsAfter(this.store.reader, this.cursor, PAGE);
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
            payload: await this.scrub(payload),
            created_at: row.created_at,
            resource: await this.scrub(await resourceSnapshot(this.store, row, payload)),
          });
          const file = `${row.created_at.slice(0, 10)}.jsonl`;
          byFile.set(file, [...(byFile.get(file) ?? []), line]);
        }
        for (const [file, lines] of byFile) appendFileSync(join(this.eventsDir, file), `${lines.join("\n")}\n`, { mode: 0o600 });
        this.cursor = (rows.at(-1) as EventRow).seq;
      }
      return false;
    });
  }

  /** Appends everything outstanding, then commits it (one commit at a time). */
  commit(): Promise<void> {
    this.committing = this.committing.then(async () => {
      try {
        await this.ensureRepo();
        while (!(await this.appendPass(SLICE_MS))) await nextTurn();
        // Appends wait for git: a line appended between `git add` and the commit would be counted
        // as committed (and named by the trailer) without being in the commit.
        await this.exclusive(async () => {
          const through = this.cursor;
          if (through <= this.lastCommitted) return;
          await this.withGit(async () => {
            await git(this.dir, ["add", "-A", "."]);
            const status = await git(this.dir, ["status", "--porcelain"]);
            if (status.stdout.trim() !== "") await git(this.dir, ["commit", "-q", "-m", `events through ${through}`, "-m", `${LAST_SEQ_TRAILER}: ${through}`]);
            this.lastCommitted = through;
          });
        });
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
export async function verifyAudit(store: Store, dir: string): Promise<{ ok: boolean; detail: string }> {
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
  // After a restored backup one seq can name two events, one on each side of the restore.
  const seen = new Set<string>();
  let duplicates = 0;
  for (const file of files) {
    for (const line of (await git(dir, ["show", `HEAD:${file}`])).stdout.split("\n")) {
      if (line.trim() === "") continue;
      const { seq, id } = JSON.parse(line) as AuditedLine;
      const key = `${seq} ${id}`;
      if (seen.has(key)) duplicates++;
      seen.add(key);
    }
  }
  const missing = (await store.audit.eventIdsThrough(store.reader, through)).filter(({ seq, id }) => !seen.has(`${seq} ${id}`));
  if (missing.length > 0) {
    const count = missing.length === 1 ? "1 event" : `${missing.length} events`;
    return { ok: false, detail: `${count} through seq ${through} missing from the audit repository (first: ${missing[0]?.seq})` };
  }
  if (duplicates > 0) return { ok: false, detail: `${duplicates} events appear more than once in the audit repository` };
  return { ok: true, detail: `${seen.size} events committed through seq ${through}; every retained one is there` };
}
