import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { request, startTestServer, tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";
import { onPostgres, withDatabase } from "../helpers/database.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/src/cli.js");

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const dirs: string[] = [];
const servers: TestServer[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = tempDir("cairn-cli-");
  dirs.push(dir);
  return dir;
}

const cliEnv = (dir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, ...testEnv(dir, env) });

function launch(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return child;
}

function finished(child: ChildProcess, output: { stdout: string; stderr: string }): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolveRun({ code, signal, ...output }));
  });
}

function collect(child: ChildProcess): { stdout: string; stderr: string } {
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  return output;
}

/** Runs `cairn ARGS` to completion (killed after 60 s so a hang fails instead of stalling). */
async function cairn(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const child = launch(args, env);
  const output = collect(child);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    return await finished(child, output);
  } finally {
    clearTimeout(timer);
  }
}

/** `agent add`/`rotate-key` print the key on a line of its own form; this finds it. */
function keyFrom(stdout: string): string {
  const key = /(cairn_[A-Za-z0-9_-]{43,})/.exec(stdout)?.[1];
  if (key === undefined) throw new Error(`no key in: ${stdout}`);
  return key;
}

async function addAgent(dir: string, id: string, extra: string[] = []): Promise<Credentials> {
  const run = await cairn(["agent", "add", id, ...extra], cliEnv(dir));
  expect(run.code, run.stderr).toBe(0);
  return { agentId: id, apiKey: keyFrom(run.stdout) };
}

async function serverOn(dir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({ DATA_DIR: dir, ...env });
  servers.push(server);
  return server;
}

async function closeServer(server: TestServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

interface Served {
  child: ChildProcess;
  url: string;
  output: { stdout: string; stderr: string };
  exit: Promise<Run>;
}

/** Spawns `cairn serve` and waits for its first line, `cairn http://127.0.0.1:PORT`. */
async function serve(dir: string, env: Record<string, string> = {}): Promise<Served> {
  const child = launch(["serve"], cliEnv(dir, env));
  const output = collect(child);
  const exit = finished(child, output);
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL: ${output.stdout} ${output.stderr}`)), 30_000);
    const check = (): void => {
      const match = /^cairn (http:\/\/\S+)\n/.exec(output.stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout?.on("data", check);
    void exit.then((run) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${run.code}: ${run.stderr}`));
    });
  });
  return { child, url, output, exit };
}

const memoryOf = (dbFile: string): { content: string; agent_id: string }[] => {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT content, agent_id FROM memory").all() as { content: string; agent_id: string }[];
  } finally {
    db.close();
  }
};

describe("cairn help and usage", () => {
  const env = (): NodeJS.ProcessEnv => cliEnv(dataDir());

  it("--help prints usage naming every subcommand and exits 0", async () => {
    const run = await cairn(["--help"], env());
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: cairn/);
    for (const command of ["serve", "mcp", "agent add", "agent rotate-key", "ui-link", "backup", "reindex", "doctor"]) expect(run.stdout).toContain(command);
  });

  it.each(["serve", "mcp", "agent", "agent add", "agent rotate-key", "ui-link", "backup", "reindex", "doctor"])(
    "%s --help prints its usage and exits 0",
    async (command) => {
      const run = await cairn([...command.split(" "), "--help"], env());
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^usage: cairn /);
      expect(run.stdout).toContain(`cairn ${command}`);
      expect(run.stderr).toBe("");
    },
  );

  it("an unknown command exits 2 with a message on stderr", async () => {
    const run = await cairn(["frobnicate"], env());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command frobnicate");
    expect((await cairn(["frobnicate", "--help"], env())).code).toBe(2);
  });

  it("an unknown option, or an option without its value, exits 2 naming it", async () => {
    const unknown = await cairn(["backup", "--frce", "x.db"], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--frce");
    const valueless = await cairn(["migrate-store", "--from"], env());
    expect(valueless.code).toBe(2);
    expect(valueless.stderr).toContain("--from");
  });

  it("no command prints usage and exits 2", async () => {
    const run = await cairn([], env());
    expect(run.code).toBe(2);
    expect(run.stdout + run.stderr).toContain("usage: cairn");
  });

  it("--help does not touch DATA_DIR", async () => {
    const dir = join(dataDir(), "never-created");
    expect((await cairn(["doctor", "--help"], cliEnv(dir))).code).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });
});

describe("invalid settings", () => {
  it.each([
    ["PORT", "99999"],
    ["EMBEDDING_MODEL", "nope"],
    ["DUPLICATE_THRESHOLD", "2"],
    ["AGENT_KEYS", "ci:short"],
    ["LOG_LEVEL", "loud"],
  ])("serve with %s=%s exits non-zero and names the setting on stderr", async (setting, value) => {
    const dir = join(dataDir(), "data");
    const run = await cairn(["serve"], cliEnv(dir, { [setting]: value }));
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stderr).toContain(setting);
    expect(run.stdout).not.toMatch(/^cairn http/);
    // Nothing was started, so nothing was created.
    expect(existsSync(dir)).toBe(false);
  });

  it("other commands refuse an invalid setting too", async () => {
    const run = await cairn(["agent", "add", "someone"], cliEnv(dataDir(), { EMBEDDING_MODEL: "nope" }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("EMBEDDING_MODEL");
    expect(run.stdout).not.toContain("cairn_");
  });
});

describe("cairn serve", () => {
  it("prints its URL and credentials path, serves, and exits 0 on SIGTERM", async () => {
    const dir = dataDir();
    const served = await serve(dir);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const health = await request<{ database: string }>(served.url, "/health");
    expect(health.status).toBe(200);
    expect(health.body.database).toBe("ok");
    const file = JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8")) as { agents: Record<string, { api_key: string }> };
    const owner = { agentId: "human", apiKey: file.agents.human?.api_key ?? "" };
    const written = await request<{ id: string }>(served.url, "/memory", { as: owner, body: { content: "written before SIGTERM" } });
    expect(written.status).toBe(201);

    served.child.kill("SIGTERM");
    const run = await served.exit;
    expect(run.code).toBe(0);
    expect(run.signal).toBeNull();
    expect(run.stdout).toContain(join(dir, "credentials.json"));
    for (const entry of Object.values(file.agents)) expect(run.stdout + run.stderr).not.toContain(entry.api_key);

    // Closed cleanly: the next start finds the entry.
    const again = await serverOn(dir);
    expect((await again.request<{ content: string }>(`/memory/${written.body.id}`, { as: again.owner })).body.content).toBe(
      "written before SIGTERM",
    );
  });

  it("exits non-zero when its port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolveListen) => blocker.listen(0, "127.0.0.1", resolveListen));
    try {
      const address = blocker.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const run = await cairn(["serve"], cliEnv(dataDir(), { PORT: String(port) }));
      expect(run.code).not.toBe(0);
      expect(run.code).not.toBeNull();
      expect(run.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(run.stderr).toMatch(/cairn status.*PORT=0/);
    } finally {
      await new Promise((resolveClose) => blocker.close(resolveClose));
    }
  });

  it("says plainly when DATA_DIR cannot be a directory, and never spins on a path the kernel refuses", async () => {
    const file = join(dataDir(), "a-file");
    writeFileSync(file, "not a directory");
    const onFile = await cairn(["serve"], cliEnv(file));
    expect(onFile.code).toBe(1);
    expect(onFile.stderr).toContain(`DATA_DIR ${file} exists and is not a directory`);
    expect(onFile.stderr).not.toMatch(/readable by other users/);
    const inProc = await cairn(["serve"], cliEnv("/proc/cairn-cannot-be-here/data"));
    expect(inProc.code).toBe(1);
    expect(inProc.stderr).toContain("cannot create DATA_DIR /proc/cairn-cannot-be-here/data: creating /proc/cairn-cannot-be-here failed (ENOENT)");
  });
});

describe("cairn agent add", () => {
  it("prints a key that works against a server started on that DATA_DIR", async () => {
    const dir = dataDir();
    const run = await cairn(["agent", "add", "cli-made", "--name", "Made By CLI"], cliEnv(dir));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("cli-made");
    const made = { agentId: "cli-made", apiKey: keyFrom(run.stdout) };
    expect(run.stderr).not.toContain(made.apiKey);
    const server = await serverOn(dir);
    const me = await server.request<{ agent_id: string; role: string; display_name: string }>("/agents/me", { as: made });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ agent_id: "cli-made", role: "agent", display_name: "Made By CLI" });
    expect((await server.request("/memory", { as: made, body: { content: "hello from a cli agent" } })).status).toBe(201);
  });

  it("works while the server runs", async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const live = await addAgent(dir, "added-live");
    expect((await server.request<{ role: string }>("/agents/me", { as: live })).body.role).toBe("agent");
  });

  it("of an existing id fails non-zero and prints no key", async () => {
    const dir = dataDir();
    const first = await addAgent(dir, "dupe");
    for (const id of ["dupe", "human", "archivist"]) {
      const run = await cairn(["agent", "add", id], cliEnv(dir));
      expect(run.code, id).not.toBe(0);
      expect(run.stdout).not.toContain("cairn_");
      expect(run.stderr).toContain("taken");
    }
    const server = await serverOn(dir);
    expect((await server.request("/agents/me", { as: first })).status).toBe(200);
  });

  it("rejects an invalid id or role with exit 2", async () => {
    const dir = dataDir();
    expect((await cairn(["agent", "add", "Bad-Id"], cliEnv(dir))).code).toBe(2);
    expect((await cairn(["agent", "add", "fine", "--role", "archivist"], cliEnv(dir))).code).toBe(2);
    expect((await cairn(["agent", "add", "fine", "--role", "superuser"], cliEnv(dir))).code).toBe(2);
    expect((await cairn(["agent", "add"], cliEnv(dir))).code).toBe(2);
    expect((await cairn(["agent", "remove", "fine"], cliEnv(dir))).code).toBe(2);
  });

  it("--role viewer makes an agent that can read but not write", async () => {
    const dir = dataDir();
    const viewer = await addAgent(dir, "v1", ["--role", "viewer"]);
    const server = await serverOn(dir);
    const author = await server.agent("author");
    expect((await server.request("/memory", { as: author, body: { content: "something to look at" } })).status).toBe(201);

    const me = await server.request<{ role: string }>("/agents/me", { as: viewer });
    expect(me.body.role).toBe("viewer");
    const list = await server.request<{ content: string }[]>("/memory", { as: viewer });
    expect(list.status).toBe(200);
    expect(list.body.map((entry) => entry.content)).toEqual(["something to look at"]);
    const refused = await server.request("/memory", { as: viewer, body: { content: "a viewer trying to write" } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "FORBIDDEN" });
    expect((await server.request<unknown[]>("/memory", { as: author })).body).toHaveLength(1);
  });

  it("--role owner makes an agent that can administer agents", async () => {
    const dir = dataDir();
    const boss = await addAgent(dir, "boss", ["--role", "owner"]);
    const server = await serverOn(dir);
    await server.agent("underling");
    expect((await server.request("/agents/underling", { as: boss, method: "DELETE" })).status).toBe(204);
  });
});

describe("one-shot commands and the server's identities", () => {
  it("leave AGENT_KEYS agents of a running server alone when their environment lacks AGENT_KEYS", async () => {
    const dir = dataDir();
    const ci = { agentId: "ci", apiKey: "ci-static-key-0123456789" };
    const server = await serverOn(dir, { AGENT_KEYS: `${ci.agentId}:${ci.apiKey}` });
    await server.agent("rotated");
    expect((await server.request("/agents/me", { as: ci })).status).toBe(200);

    // On PostgreSQL `cairn backup` is pg_dump's job (below).
    const backup = onPostgres ? [] : [["backup", join(dir, "copy.db")]];
    const commands = [["agent", "add", "helper"], ["agent", "rotate-key", "rotated"], ...backup, ["doctor"], ["reindex"]];
    for (const args of commands) {
      const run = await cairn(args, cliEnv(dir));
      expect(run.code, `${args.join(" ")}: ${run.stdout}${run.stderr}`).toBe(0);
      expect((await server.request("/agents/me", { as: ci })).status, args.join(" ")).toBe(200);
    }
  });

  it("agent add before the first start: the server still creates the owner and archivist", async () => {
    const dir = dataDir();
    const early = await addAgent(dir, "early-bird");
    expect(existsSync(join(dir, "credentials.json"))).toBe(false);
    for (const id of ["human", "archivist"]) {
      const run = await cairn(["agent", "add", id], cliEnv(dir));
      expect(run.code, id).not.toBe(0);
      expect(run.stdout).not.toContain("cairn_");
    }
    const server = await serverOn(dir);
    expect((await server.request<{ role: string }>("/agents/me", { as: server.owner })).body.role).toBe("owner");
    expect((await server.request<{ role: string }>("/agents/me", { as: server.archivist })).body.role).toBe("archivist");
    expect((await server.request<{ role: string }>("/agents/me", { as: early })).body.role).toBe("agent");
  });
});

describe("cairn agent rotate-key", () => {
  it("prints a new key; the old one stops working at once, even on a running server", async () => {
    const dir = dataDir();
    const agent = await addAgent(dir, "spinner");
    const server = await serverOn(dir);
    expect((await server.request("/agents/me", { as: agent })).status).toBe(200);

    const run = await cairn(["agent", "rotate-key", "spinner"], cliEnv(dir));
    expect(run.code).toBe(0);
    const newKey = keyFrom(run.stdout);
    expect(newKey).not.toBe(agent.apiKey);
    expect((await server.request("/agents/me", { as: agent })).status).toBe(401);
    expect((await server.request("/agents/me", { as: { agentId: "spinner", apiKey: newKey } })).status).toBe(200);
  });

  it("of the archivist updates credentials.json", async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const run = await cairn(["agent", "rotate-key", "archivist"], cliEnv(dir));
    expect(run.code).toBe(0);
    const newKey = keyFrom(run.stdout);
    const file = JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8")) as { agents: Record<string, { api_key: string }> };
    expect(file.agents.archivist?.api_key).toBe(newKey);
    expect(file.agents.human?.api_key).toBe(server.owner.apiKey);
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect((await server.request("/agents/me", { as: server.archivist })).status).toBe(401);
    expect((await server.request("/agents/me", { as: { agentId: "archivist", apiKey: newKey } })).status).toBe(200);
  });

  it("of an unknown agent fails non-zero", async () => {
    const run = await cairn(["agent", "rotate-key", "nobody"], cliEnv(dataDir()));
    expect(run.code).not.toBe(0);
    expect(run.stdout).not.toContain("cairn_");
    expect(run.stderr).toContain("not found");
  });
});

describe("cairn backup", () => {
  it.runIf(onPostgres)("on PostgreSQL copies nothing, exits 1 and names pg_dump", async () => {
    const dir = dataDir();
    const target = join(dir, "backup.db");
    const run = await cairn(["backup", target], cliEnv(dir));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/pg_dump/);
    expect(existsSync(target)).toBe(false);
  });

  it.skipIf(onPostgres)("copies a running server's database consistently, and refuses to overwrite without --force", async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const agent = await server.agent("backed-up");
    const contents = ["first entry to back up", "second entry to back up", "third entry to back up"];
    for (const content of contents) expect((await server.request("/memory", { as: agent, body: { content } })).status).toBe(201);

    const target = join(dataDir(), "backup.db");
    const run = await cairn(["backup", target], cliEnv(dir));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(target);
    // As private as the database it copies.
    expect(statSync(target).mode & 0o777).toBe(0o600);

    const copy = new Database(target, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      copy.close();
    }
    expect(memoryOf(target).map((row) => row.content).sort()).toEqual([...contents].sort());
    expect(memoryOf(target).every((row) => row.agent_id === "backed-up")).toBe(true);

    // The server kept running and writing through it.
    expect((await server.request("/memory", { as: agent, body: { content: "written after the backup" } })).status).toBe(201);

    const before = readFileSync(target);
    const refused = await cairn(["backup", target], cliEnv(dir));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("--force");
    expect(readFileSync(target).equals(before)).toBe(true);

    chmodSync(target, 0o644);
    const forced = await cairn(["backup", target, "--force"], cliEnv(dir));
    expect(forced.code, forced.stderr).toBe(0);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(memoryOf(target).map((row) => row.content)).toContain("written after the backup");
  });

  it("without a FILE exits 2", async () => {
    expect((await cairn(["backup"], cliEnv(dataDir()))).code).toBe(2);
  });
});

describe("cairn doctor", () => {
  it("exits 0 on a healthy DATA_DIR and prints ok lines", async () => {
    const dir = dataDir();
    await closeServer(await serverOn(dir));
    const run = await cairn(["doctor"], cliEnv(dir));
    expect(run.code, run.stdout).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) expect(line).toMatch(/^ok\b/);
    expect(run.stdout).toMatch(/integrity/);
    expect(run.stdout).toMatch(/credentials/);
    expect(run.stdout).toMatch(/^ok +web UI: .*dist\/ui$/m);
  });

  it("checks that the audit repository holds every event up to its last commit", async () => {
    const dir = dataDir();
    const env = { AUDIT_LOG: "on", AUDIT_COMMIT_SECONDS: "3600" };
    const server = await serverOn(dir, env);
    const agent = await server.agent("audited-agent");
    for (let index = 0; index < 5; index++) await server.request("/memory", { as: agent, body: { content: `doctor audit note ${index} ${index * 13}` } });
    await closeServer(server);
    const healthy = await cairn(["doctor"], cliEnv(dir, env));
    expect(healthy.code, healthy.stdout).toBe(0);
    expect(healthy.stdout).toMatch(/^ok\s+audit log: \d+ events committed through seq \d+/m);

    // Someone drops a line from the history: doctor notices.
    const audit = join(dir, "audit");
    const git = (args: string[]): string => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: audit, encoding: "utf8" });
    const file = git(["ls-files", "events"]).trim().split("\n")[0] as string;
    const lines = readFileSync(join(audit, file), "utf8").trim().split("\n");
    writeFileSync(join(audit, file), `${lines.slice(1).join("\n")}\n`);
    git(["commit", "-q", "-am", `tampered\n\nLast-Seq: ${(JSON.parse(lines.at(-1) as string) as { seq: number }).seq}`]);
    const tampered = await cairn(["doctor"], cliEnv(dir, env));
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/^FAIL\s+audit log: 1 event through seq \d+ missing/m);
  });

  it("exits 1 and says FAIL when credentials.json is readable by others", async () => {
    const dir = dataDir();
    await closeServer(await serverOn(dir));
    chmodSync(join(dir, "credentials.json"), 0o644);
    const run = await cairn(["doctor"], cliEnv(dir));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\b.*credentials/m);
  });

  it("exits 1 when the data directory is readable by others", async () => {
    const dir = dataDir();
    await closeServer(await serverOn(dir));
    chmodSync(dir, 0o755);
    const run = await cairn(["doctor"], cliEnv(dir));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\b.*data dir/m);
  });

  it("exits 1 when the custom model folder is empty", async () => {
    const dir = dataDir();
    const modelDir = join(dataDir(), "empty-model");
    mkdirSync(modelDir);
    const run = await cairn(["doctor"], cliEnv(dir, { EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: modelDir }));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\b.*embedding model/m);
  });

  it("exits non-zero with EMBEDDING_MODEL=custom and no EMBEDDING_MODEL_DIR", async () => {
    const run = await cairn(["doctor"], cliEnv(dataDir(), { EMBEDDING_MODEL: "custom" }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("EMBEDDING_MODEL_DIR");
  });

  it.runIf(onPostgres)("exits 1 when the keyword index is missing, and names how to rebuild it", async () => {
    const dir = dataDir();
    await closeServer(await serverOn(dir));
    await withDatabase(dir, (db) => db.run("DROP INDEX memory_search"));
    const run = await cairn(["doctor"], cliEnv(dir));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL\b.*keyword index memory_search is missing/m);
  });

  // A database file is SQLite's; PostgreSQL checksums its own pages.
  it.skipIf(onPostgres)("exits 1 when the database file is corrupt", async () => {
    const dir = dataDir();
    await closeServer(await serverOn(dir));
    const file = join(dir, "cairn.db");
    const bytes = readFileSync(file);
    // Scribble over everything after the header page: the schema survives, the b-trees do not.
    bytes.fill(0x5a, 4096);
    writeFileSync(file, bytes);
    const run = await cairn(["doctor"], cliEnv(dir));
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stdout + run.stderr).toMatch(/malformed|integrity|FAIL/i);
  });
});

describe("cairn reindex", () => {
  it("embeds every entry with the configured model and reports the count", async () => {
    const dir = dataDir();
    const emptyModel = join(dataDir(), "no-model-here");
    mkdirSync(emptyModel);
    // A server whose model cannot load still takes writes; they wait unembedded.
    const first = await serverOn(dir, { EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: emptyModel });
    const agent = await first.agent("indexer");
    const contents = ["reindex entry about apples", "reindex entry about pears", "reindex entry about plums"];
    for (const content of contents) expect((await first.request("/memory", { as: agent, body: { content } })).status).toBe(201);
    const unembedded = await first.request<{ embedding_model: string | null }[]>("/memory", { as: agent });
    expect(unembedded.body.map((entry) => entry.embedding_model)).toEqual([null, null, null]);
    await closeServer(first);

    const run = await cairn(["reindex"], cliEnv(dir, { EMBEDDING_MODEL: "hash" }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/re-embedded 3 entries/);

    const second = await serverOn(dir);
    const embedded = await second.request<{ embedding_model: string | null }[]>("/memory", { as: second.owner });
    expect(embedded.body).toHaveLength(3);
    for (const entry of embedded.body) expect(entry.embedding_model).toMatch(/^hash/);
    const search = await second.request<{ content: string; similarity: number | null }[]>(
      `/memory/search?q=${encodeURIComponent("reindex entry about pears")}`,
      { as: second.owner },
    );
    expect(search.body[0]?.content).toBe("reindex entry about pears");
    expect(search.body[0]?.similarity).not.toBeNull();
  });

  it("on an empty database reports 0", async () => {
    const run = await cairn(["reindex"], cliEnv(dataDir()));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/re-embedded 0 entries/);
  });
});
