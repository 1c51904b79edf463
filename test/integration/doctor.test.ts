import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/log.js";
import { packageVersion } from "../../src/core/paths.js";
import { cliEnv, runCli, startServe } from "../helpers/cli.js";
import { databaseUrl, dumpDatabase, onPostgres, POSTGRES_URL, restoreDatabase, withDatabase } from "../helpers/database.js";
import { startTestServer, tempDir, type Credentials, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";
import { closedUrl } from "../helpers/ports.js";

/** CONTRACT §10a: `cairn doctor` checks the server as well as the files, creates nothing, and notices a restored backup. */

const servers: TestServer[] = [];
const stubs: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const stub of stubs.splice(0)) await new Promise((resolveClose) => stub.close(resolveClose));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = tempDir("cairn-doctor-");
  dirs.push(dir);
  return dir;
}

async function serverOn(dataDir: string, env: Record<string, string> = {}, lines?: string[]): Promise<TestServer> {
  const options = lines ? { log: createLogger("warn", {}, (line: string) => lines.push(line)) } : {};
  const server = await startTestServer({ DATA_DIR: dataDir, ...env }, options);
  servers.push(server);
  return server;
}

async function closeServer(server: TestServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

/** A loopback HTTP server answering every request with `status` and `body`: something at CAIRN_URL that is not this cairn. */
async function stub(status: number, body: unknown): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  stubs.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback URL where nothing listens. */
/** A data directory a server has created and closed. */
async function healthyDir(env: Record<string, string> = {}): Promise<string> {
  const dir = scratch();
  await closeServer(await serverOn(dir, env));
  return dir;
}

describe("cairn doctor and missing files", () => {
  it("on a missing DATA_DIR creates nothing, says what is missing and exits 1", async () => {
    const dir = join(scratch(), "never-started");
    for (const model of ["hash", "bge-small-en-v1.5"]) {
      const run = await runCli(["doctor"], cliEnv(dir, { AUDIT_LOG: "on", EMBEDDING_MODEL: model, CAIRN_URL: await closedUrl() }));
      expect(run.code, run.stdout).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`^FAIL\\s+data dir: ${dir} does not exist; nothing was created`, "m"));
      expect(existsSync(dir)).toBe(false);
    }
  });

  it("on a data directory without a database creates none and exits 1", async () => {
    const dir = scratch();
    // On PostgreSQL: a DATABASE_URL naming a database the server does not have.
    const missing = onPostgres ? { DATABASE_URL: databaseUrl(POSTGRES_URL as string, "cairn_test_no_such_database") } : {};
    const run = await runCli(["doctor"], cliEnv(dir, { AUDIT_LOG: "on", CAIRN_URL: await closedUrl(), ...missing }));
    expect(run.code, run.stdout).toBe(1);
    const said = onPostgres ? `database "cairn_test_no_such_database" does not exist` : `no database at ${join(dir, "cairn.db")}; nothing was created`;
    expect(run.stdout).toMatch(new RegExp(`^FAIL\\s+database: .*${said}`, "m"));
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("cairn doctor and the server at CAIRN_URL", () => {
  it("reports a running server's health and version", async () => {
    const dir = scratch();
    const server = await serverOn(dir);
    const run = await runCli(["doctor"], cliEnv(dir, { CAIRN_URL: server.url }));
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain(`ok    server: cairn ${packageVersion} answers at ${server.url} (embeddings ready, database ok)`);
  });

  it("finds the server running for DATA_DIR when CAIRN_URL is unset, as the owner's commands and ui-link do", async () => {
    const dir = scratch();
    const serve = await startServe(cliEnv(dir));
    try {
      // CAIRN_URL's default, port 8470, is not this server's: PORT=0 gave it another.
      const unset = cliEnv(dir, { CAIRN_URL: "" });
      const run = await runCli(["doctor"], unset);
      expect(run.stdout).toContain(`ok    server: cairn ${packageVersion} answers at ${serve.url}, the server running for DATA_DIR (`);
      const agents = await runCli(["agent", "list", "--json"], unset);
      expect(agents.code, agents.stderr).toBe(0);
      expect((JSON.parse(agents.stdout) as { agent_id: string }[]).map((agent) => agent.agent_id)).toContain("human");
      // The sign-in link is for the server whose database holds it, not for HOST and PORT's address.
      const linked = await runCli(["ui-link"], unset);
      const token = new RegExp(`^${serve.url}/ui/#login=(cairn_login_[A-Za-z0-9_-]+)$`, "m").exec(linked.stdout)?.[1];
      expect(token, linked.stdout).toBeDefined();
      const login = await fetch(`${serve.url}/ui/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
      expect(login.status).toBe(200);
    } finally {
      await serve.stop();
    }
  });

  it("is content when nothing answers: the server may be stopped", async () => {
    const url = await closedUrl();
    const run = await runCli(["doctor"], cliEnv(await healthyDir(), { CAIRN_URL: url }));
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain(`ok    server: nothing answers at ${url}`);
  });

  it("fails on another version of cairn, or on something that is not cairn", async () => {
    const dir = await healthyDir();
    const older = await stub(200, { status: "ok", version: "0.0.1-elsewhere", embeddings: "ready", database: "ok" });
    const otherVersion = await runCli(["doctor"], cliEnv(dir, { CAIRN_URL: older }));
    expect(otherVersion.code).toBe(1);
    expect(otherVersion.stdout).toContain(`FAIL  server: cairn 0.0.1-elsewhere answers at ${older}, but this is cairn ${packageVersion}`);
    const stranger = await stub(404, { error: "no such page" });
    const notCairn = await runCli(["doctor"], cliEnv(dir, { CAIRN_URL: stranger }));
    expect(notCairn.code).toBe(1);
    expect(notCairn.stdout).toMatch(/^FAIL\s+server: .* answers \/health with status 404/m);
  });

  it("warns, without failing, that an exposed HOST lacks PUBLIC_URL and REGISTRATION_KEY", async () => {
    const dir = await healthyDir();
    const run = await runCli(["doctor"], cliEnv(dir, { HOST: "0.0.0.0", CAIRN_URL: await closedUrl() }));
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^WARN\s+exposure: HOST 0\.0\.0\.0 is not a loopback address and PUBLIC_URL is not set/m);
    expect(run.stdout).toMatch(/^WARN\s+exposure: HOST 0\.0\.0\.0 is not a loopback address and REGISTRATION_KEY is not set/m);
    const configured = await runCli(["doctor"], cliEnv(dir, { HOST: "0.0.0.0", PUBLIC_URL: "https://cairn.example.com", REGISTRATION_KEY: "a-registration-key-0123", CAIRN_URL: await closedUrl() }));
    expect(configured.stdout).not.toMatch(/^WARN/m);
  });

  it("warns that an exposed HOST has a UI_PASSWORD under 12 characters, and not on loopback or at 12", async () => {
    const dir = await healthyDir();
    const exposed = { HOST: "0.0.0.0", PUBLIC_URL: "https://cairn.example.com", REGISTRATION_KEY: "a-registration-key-0123", CAIRN_URL: await closedUrl() };
    const short = await runCli(["doctor"], cliEnv(dir, { ...exposed, UI_PASSWORD: "hunter2hunt" }));
    expect(short.code, short.stdout).toBe(0);
    expect(short.stdout).toMatch(/^WARN\s+exposure: HOST 0\.0\.0\.0 is not a loopback address and UI_PASSWORD is 11 characters/m);
    expect(short.stdout).not.toContain("hunter2hunt");
    const long = await runCli(["doctor"], cliEnv(dir, { ...exposed, UI_PASSWORD: "hunter2hunte" }));
    expect(long.stdout).not.toMatch(/^WARN/m);
    const loopback = await runCli(["doctor"], cliEnv(dir, { UI_PASSWORD: "pw", CAIRN_URL: exposed.CAIRN_URL }));
    expect(loopback.stdout).not.toMatch(/^WARN/m);
  });
});

describe("a restored backup and the audit log", () => {
  const env = { AUDIT_LOG: "on", AUDIT_COMMIT_SECONDS: "3600" };

  const write = async (server: TestServer, as: Credentials, content: string): Promise<void> => {
    expect((await server.request("/memory", { as, body: { content, project: null } })).status).toBe(201);
  };
  const eventsOf = (server: TestServer): Promise<{ seq: number; id: string }[]> =>
    withDatabase(server.dataDir, (db) => db.all<{ seq: number; id: string }>("SELECT seq, id FROM events ORDER BY seq"));
  const auditText = (dir: string): string =>
    readdirSync(join(dir, "audit", "events"))
      .map((file) => readFileSync(join(dir, "audit", "events", file), "utf8"))
      .join("");

  it("is reported by doctor, and serve continues the audit log from the database's events", async () => {
    const dir = scratch();
    const first = await serverOn(dir, env);
    const ann = await first.agent("ann");
    for (const index of [1, 2, 3]) await write(first, ann, `before the backup ${index}`);
    const backupDir = scratch();
    const backup = join(backupDir, "cairn-backup.db");
    if (onPostgres) dumpDatabase(dir, backup);
    else {
      const backedUp = await runCli(["backup", backup], cliEnv(dir, env));
      expect(backedUp.code, backedUp.stderr).toBe(0);
    }
    for (const index of [1, 2, 3]) await write(first, ann, `after the backup ${index}, lost by the restore`);
    const beforeRestore = await eventsOf(first);
    await closeServer(first);

    // The documented restore: the server stopped, the copy put in place of the database.
    if (onPostgres) restoreDatabase(dir, backup);
    else {
      copyFileSync(backup, join(dir, "cairn.db"));
      for (const suffix of ["-wal", "-shm"]) rmSync(join(dir, `cairn.db${suffix}`), { force: true });
    }
    const doctorEnv = cliEnv(dir, { ...env, CAIRN_URL: await closedUrl() });
    const noticed = await runCli(["doctor"], doctorEnv);
    expect(noticed.code, noticed.stdout).toBe(0);
    const ahead = /^WARN\s+audit log position: the audit log's last event \(seq (\d+)\) is ahead of the database's \(seq (\d+)\)/m.exec(noticed.stdout);
    expect(ahead, noticed.stdout).not.toBeNull();
    expect(Number(ahead?.[1])).toBe(beforeRestore.at(-1)?.seq);
    expect(Number(ahead?.[2])).toBeLessThan(Number(ahead?.[1]));
    expect(noticed.stdout).toMatch(/^ok\s+audit log: /m);

    const lines: string[] = [];
    const second = await serverOn(dir, env, lines);
    expect(await eventually(() => lines.some((line) => line.includes("the audit log is ahead of the database")))).toBe(true);
    const restoredLast = Number(ahead?.[2]);
    for (const index of [1, 2]) await write(second, ann, `after the restore ${index}`);
    // These reuse seqs the lost events had: each is appended all the same, and the lost ones stay.
    const fresh = (await eventsOf(second)).filter((event) => event.seq > restoredLast);
    expect(fresh.length).toBeGreaterThanOrEqual(2);
    expect(fresh.some((event) => beforeRestore.some((old) => old.seq === event.seq))).toBe(true);
    expect(await eventually(() => fresh.every((event) => auditText(dir).includes(event.id)))).toBe(true);
    for (const old of beforeRestore) expect(auditText(dir)).toContain(old.id);
    await closeServer(second);

    // Once continued, a restart resumes where the continued log ends, and doctor is content.
    const third = await serverOn(dir, env);
    await write(third, ann, "after a restart");
    const latest = (await eventsOf(third)).at(-1);
    expect(await eventually(() => auditText(dir).includes(latest?.id ?? "none"))).toBe(true);
    await closeServer(third);
    expect(readFileSync(join(dir, "audit", "restores.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    const settled = await runCli(["doctor"], doctorEnv);
    expect(settled.code, settled.stdout).toBe(0);
    expect(settled.stdout).toMatch(/^ok\s+audit log: \d+ events committed through seq \d+; every retained one is there/m);
    expect(settled.stdout).not.toMatch(/^WARN/m);
  });
});
