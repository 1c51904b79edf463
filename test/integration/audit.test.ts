import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET_LINES } from "../fixtures/secrets.js";
import { withDatabase } from "../helpers/database.js";
import type { Logger } from "../../src/core/log.js";
import { gitMissing } from "../../src/events/audit.js";
import { startTestServer, tempDir, type Credentials, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

interface AuditLine {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  resource: Record<string, unknown> | null;
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function auditedServer(dataDir: string): Promise<TestServer> {
  const server = await startTestServer({ DATA_DIR: dataDir, AUDIT_LOG: "on", AUDIT_COMMIT_SECONDS: "1" });
  servers.push(server);
  return server;
}

function freshDir(): string {
  const dir = tempDir("cairn-audit-");
  dirs.push(dir);
  return dir;
}

// git's complaints (no commits yet, while a test waits for the first) are the test's to read, not the run's output.
const gitIn = (dir: string, args: string[]): string => execFileSync("git", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

function commitList(audit: string): string[] {
  try {
    return gitIn(audit, ["log", "--format=%H"]).split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** The last seq the newest commit holds, from its trailer; undefined before the first commit. */
function committedThrough(audit: string): number | undefined {
  if (commitList(audit).length === 0) return undefined;
  const trailer = /^Last-Seq: (\d+)$/m.exec(gitIn(audit, ["log", "-1", "--format=%B"]));
  return trailer === null ? undefined : Number(trailer[1]);
}

function auditLines(audit: string): AuditLine[] {
  const dir = join(audit, "events");
  return readdirSync(dir)
    .sort()
    .flatMap((file) => readFileSync(join(dir, file), "utf8").split("\n").filter(Boolean))
    .map((line) => JSON.parse(line) as AuditLine);
}

const allSeqs = async (server: TestServer): Promise<number[]> =>
  (await withDatabase(server.dataDir, (db) => db.all<{ seq: number }>("SELECT seq FROM events ORDER BY seq"))).map((row) => row.seq);

async function someChanges(server: TestServer, as: Credentials, tag: string): Promise<{ privateId: string; messageBody: string }> {
  await server.request("/memory", { as, body: { content: `audited note ${tag}: the cache is warmed at boot` } });
  const secret = await server.request<{ id: string }>("/memory", { as, body: { content: `private ${tag}: my own shortcut`, scope: "agent" } });
  const task = await server.request<{ id: string }>("/tasks", { as, body: { title: `audited task ${tag}` } });
  await server.request(`/tasks/${task.body.id}/claim`, { as, method: "POST" });
  const messageBody = `confidential message ${tag}`;
  await server.request("/messages", { as, body: { to: server.owner.agentId, body: messageBody } });
  return { privateId: secret.body.id, messageBody };
}

describe("the git audit log", () => {
  it("commits every event as one JSON line, never rewrites a line, and keeps private content out", async () => {
    const server = await auditedServer(freshDir());
    const audit = join(server.dataDir, "audit");
    const agent = await server.agent("audited");
    // Committed, not only written: a round's lines can reach the files a tick before their commit.
    const allCommitted = async (): Promise<boolean> => committedThrough(audit) === (await allSeqs(server)).at(-1);
    const first = await someChanges(server, agent, "one");
    expect(await eventually(allCommitted, 10_000)).toBe(true);
    const firstCommit = commitList(audit)[0] as string;

    const second = await someChanges(server, agent, "two");
    expect(await eventually(allCommitted, 10_000)).toBe(true);
    expect(commitList(audit).length).toBeGreaterThanOrEqual(2);
    const lines = auditLines(audit);
    expect(lines.map((line) => line.seq)).toEqual(await allSeqs(server));
    // Later commits only add: no line of the first commit changed or went away.
    const numstat = gitIn(audit, ["diff", "--numstat", firstCommit, "HEAD"]).trim().split("\n").filter(Boolean);
    expect(numstat.length).toBeGreaterThan(0);
    for (const row of numstat) expect(row.split("\t")[1]).toBe("0");

    const text = readdirSync(join(audit, "events"))
      .map((file) => readFileSync(join(audit, "events", file), "utf8"))
      .join("");
    for (const changes of [first, second]) {
      expect(text).toContain(changes.privateId);
      expect(text).not.toContain(changes.messageBody);
    }
    expect(text).not.toContain("my own shortcut");
    const privateLine = lines.find((line) => line.payload.memory_id === first.privateId);
    expect(privateLine?.resource).toMatchObject({ id: first.privateId, scope: "agent", content_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string });
    expect(privateLine?.resource).not.toHaveProperty("content");
    const publicLine = lines.find((line) => line.type === "memory.written" && line.resource?.scope === "project");
    expect(publicLine?.resource?.content).toMatch(/^audited note one/);
    const taskLine = lines.find((line) => line.type === "task.claimed");
    expect(taskLine?.resource).toMatchObject({ status: "claimed", assigned_to: agent.agentId });
  });

  it("commits every line it counts as committed while git is slower than the appends", async () => {
    // A git whose commits take a second: the appends (every 250 ms) come while one runs.
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    const bin = freshDir();
    writeFileSync(join(bin, "git"), `#!/bin/sh\ncase " $* " in *" commit "*) sleep 1;; esac\nexec ${realGit} "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const server = await auditedServer(freshDir());
      const audit = join(server.dataDir, "audit");
      const agent = await server.agent("steady");
      for (let index = 0; index < 25; index++) {
        expect((await server.request("/events", { as: agent, body: { type: "audit.tick", payload: { index } } })).status).toBeLessThan(300);
        await sleep(100);
      }
      const seqs = await allSeqs(server);
      expect(await eventually(() => committedThrough(audit) === seqs.at(-1), 20_000)).toBe(true);
      // In the commit itself, not only in the files beside it.
      const files = gitIn(audit, ["ls-tree", "-r", "--name-only", "HEAD", "events"]).split("\n").filter(Boolean);
      const committed = files.flatMap((file) => gitIn(audit, ["show", `HEAD:${file}`]).split("\n").filter(Boolean)).map((line) => (JSON.parse(line) as AuditLine).seq);
      expect(committed.sort((a, b) => a - b)).toEqual(seqs);
    } finally {
      process.env.PATH = path;
    }
  });

  it("holds no secret an agent wrote into a task, a decision, an entry or a custom event", async () => {
    const server = await auditedServer(freshDir());
    const audit = join(server.dataDir, "audit");
    const agent = await server.agent("leaky");
    const [taskSecret, decisionSecret, memorySecret, eventSecret] = ["stripe", "github", "openai", "slack"].map(
      (kind) => (SECRET_LINES.find((line) => line.kind === kind) as { secrets: string[] }).secrets[0] as string,
    );
    const task = await server.request<{ id: string }>("/tasks", { as: agent, body: { title: "rotate the billing key", description: `the old key was ${taskSecret}` } });
    expect(task.status, task.text).toBe(201);
    const decision = await server.request("/decisions", { as: agent, body: { decision: "rotate keys monthly", rationale: `one leaked: ${decisionSecret}`, task_id: task.body.id } });
    expect(decision.status, decision.text).toBe(201);
    await server.request("/memory", { as: agent, body: { content: `the model is called with ${memorySecret}` } });
    await server.request("/events", { as: agent, body: { type: "keys.rotated", payload: { old: eventSecret } } });
    const allCommitted = async (): Promise<boolean> => committedThrough(audit) === (await allSeqs(server)).at(-1);
    expect(await eventually(allCommitted, 10_000)).toBe(true);
    const text = readdirSync(join(audit, "events"))
      .map((file) => readFileSync(join(audit, "events", file), "utf8"))
      .join("");
    for (const secret of [taskSecret, decisionSecret, memorySecret, eventSecret]) expect(text).not.toContain(secret);
    const lines = auditLines(audit);
    expect(lines.find((line) => line.type === "task.created")?.resource?.description).toMatch(/^the old key was \[REDACTED:[a-z_]+\]$/);
    expect(lines.find((line) => line.type === "decision.recorded")?.resource?.rationale).toMatch(/^one leaked: \[REDACTED:[a-z_]+\]$/);
  });

  it("serves normally when the audit directory is deleted, and rebuilds it from the event log", async () => {
    const dataDir = freshDir();
    const server = await auditedServer(dataDir);
    const audit = join(dataDir, "audit");
    const agent = await server.agent("survivor");
    await someChanges(server, agent, "before");
    expect(await eventually(() => commitList(audit).length >= 1, 10_000)).toBe(true);

    rmSync(audit, { recursive: true, force: true });
    await someChanges(server, agent, "while gone");
    expect((await server.request("/memory?limit=5", { as: agent })).status).toBe(200);
    expect(await eventually(async () => existsSync(join(audit, "events")) && commitList(audit).length >= 1 && auditLines(audit).length === (await allSeqs(server)).length, 10_000)).toBe(true);
    servers.splice(servers.indexOf(server), 1);
    await server.close();

    // And at a start without it.
    rmSync(audit, { recursive: true, force: true });
    const restarted = await auditedServer(dataDir);
    expect((await restarted.request("/health")).status).toBe(200);
    expect((await restarted.request("/memory?limit=5", { as: agent })).status).toBe(200);
    expect(await eventually(async () => commitList(audit).length >= 1 && auditLines(audit).length === (await allSeqs(restarted)).length, 10_000)).toBe(true);
    expect(auditLines(audit).map((line) => line.seq)).toEqual(await allSeqs(restarted));
  });

  it("commits the rebuilt log after the directory is deleted, with no event since", async () => {
    const dataDir = freshDir();
    const server = await auditedServer(dataDir);
    const audit = join(dataDir, "audit");
    const agent = await server.agent("quiet");
    await someChanges(server, agent, "once");
    const seqs = await allSeqs(server);
    expect(await eventually(() => committedThrough(audit) === seqs.at(-1), 10_000)).toBe(true);

    rmSync(audit, { recursive: true, force: true });
    // Nothing happens after the deletion: the rebuilt files still get their commit.
    expect(await eventually(() => committedThrough(audit) === seqs.at(-1), 10_000)).toBe(true);
    expect(auditLines(audit).map((line) => line.seq)).toEqual(seqs);
  });

  it("tells git's absence from a spawn in a directory deleted under it", async () => {
    const failure = (file: string, cwd: string): Promise<unknown> => new Promise((resolve) => execFile(file, ["--version"], { cwd }, (error) => resolve(error)));
    const here = freshDir();
    const gone = join(here, "deleted");
    // Both fail with ENOENT; only the first means there is no git. The directory is made again
    // before the second is judged, as the next append makes a deleted audit directory again.
    const path = process.env.PATH;
    // An empty directory as the whole PATH: no git there, for the spawn and for the check.
    process.env.PATH = freshDir();
    try {
      expect(await gitMissing(await failure("git", here))).toBe(true);
    } finally {
      process.env.PATH = path;
    }
    const spawnedInGone = await failure("git", gone);
    mkdirSync(gone);
    expect(await gitMissing(spawnedInGone)).toBe(false);
    expect(await failure("git", gone)).toBeNull();
  });

  it("commits what is left at shutdown", async () => {
    const dataDir = freshDir();
    const server = await startTestServer({ DATA_DIR: dataDir, AUDIT_LOG: "on", AUDIT_COMMIT_SECONDS: "3600" });
    const agent = await server.agent("closing");
    await someChanges(server, agent, "last");
    const seqs = await allSeqs(server);
    await server.close();
    const audit = join(dataDir, "audit");
    expect(commitList(audit)).toHaveLength(1);
    expect(gitIn(audit, ["log", "-1", "--format=%B"])).toContain(`Last-Seq: ${seqs.at(-1)}`);
    expect(auditLines(audit).map((line) => line.seq)).toEqual(seqs);
  });

  it("writes the lines without git, and says once that it cannot commit them", async () => {
    const dataDir = freshDir();
    const warnings: string[] = [];
    const logger: Logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (msg) => void warnings.push(msg), child: () => logger };
    const path = process.env.PATH;
    // An empty directory as the whole PATH: the server finds no git there.
    process.env.PATH = freshDir();
    try {
      const server = await startTestServer({ DATA_DIR: dataDir, AUDIT_LOG: "on", AUDIT_COMMIT_SECONDS: "1" }, { log: logger });
      servers.push(server);
      const agent = await server.agent("gitless");
      await someChanges(server, agent, "no git");
      const audit = join(dataDir, "audit");
      expect(await eventually(async () => existsSync(join(audit, "events")) && auditLines(audit).length === (await allSeqs(server)).length, 10_000)).toBe(true);
      // Two commit rounds pass; the warning is given once.
      expect(await eventually(() => warnings.includes("git not found: audit lines are written but not committed"), 10_000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2_200));
      servers.splice(servers.indexOf(server), 1);
      await server.close();
      expect(warnings.filter((warning) => warning.startsWith("git not found"))).toHaveLength(1);
      expect(existsSync(join(audit, ".git"))).toBe(false);
    } finally {
      process.env.PATH = path;
    }
  });
});
