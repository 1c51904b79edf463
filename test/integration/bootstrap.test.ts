import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { createLogger } from "../../src/core/log.js";
import { startApp } from "../../src/app.js";
import { withDatabase } from "../helpers/database.js";
import { request, tempDir, testEnv, type Credentials, type RequestOptions } from "../helpers/server.js";

interface CredentialsFile {
  server: string;
  agents: Record<string, { agent_id: string; role: string; api_key: string }>;
}

interface Started {
  url: string;
  logs: string[];
  request: <T = unknown>(path: string, options?: RequestOptions) => Promise<{ status: number; body: T; text: string }>;
  close(): Promise<void>;
}

// Every data directory a test made; removed after each test.
const dirs: string[] = [];
const open: Started[] = [];

function freshDataDir(): string {
  const parent = tempDir("cairn-bootstrap-");
  dirs.push(parent);
  // A directory that does not exist yet, so the server has to create it.
  return join(parent, "data");
}

/**
 * Starts a server in-process on `dataDir` with a logger that records its lines. The shared
 * helper cannot be used here: it insists on finding both bootstrap keys in credentials.json.
 */
async function start(dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const logs: string[] = [];
  const config = loadConfig(testEnv(dataDir, { LOG_LEVEL: "debug", ...env }));
  const server = await startApp(config, { log: createLogger("debug", {}, (line) => logs.push(line)) });
  const started: Started = {
    url: server.url,
    logs,
    request: (path, options) => request(server.url, path, options),
    close: async () => {
      open.splice(open.indexOf(started), 1);
      await server.close();
    },
  };
  open.push(started);
  return started;
}

afterEach(async () => {
  for (const server of [...open]) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const credentialsFile = (dataDir: string): string => join(dataDir, "credentials.json");
const readCredentials = (dataDir: string): CredentialsFile => JSON.parse(readFileSync(credentialsFile(dataDir), "utf8")) as CredentialsFile;
const credentialsOf = (file: CredentialsFile, id: string): Credentials => {
  const entry = file.agents[id];
  if (!entry) throw new Error(`no ${id} in credentials.json`);
  return { agentId: entry.agent_id, apiKey: entry.api_key };
};
const mode = (path: string): number => statSync(path).mode & 0o777;

async function roleOf(server: Started, as: Credentials): Promise<string | number> {
  const me = await server.request<{ role: string }>("/agents/me", { as });
  return me.status === 200 ? me.body.role : me.status;
}

describe("first start on a fresh DATA_DIR", () => {
  it("creates the directory 0700 and credentials.json 0600 with the owner and archivist keys", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(credentialsFile(dataDir))).toBe(0o600);

    const file = readCredentials(dataDir);
    expect(Object.keys(file.agents).sort()).toEqual(["archivist", "human"]);
    expect(file.agents.human).toMatchObject({ agent_id: "human", role: "owner" });
    expect(file.agents.archivist).toMatchObject({ agent_id: "archivist", role: "archivist" });
    const human = credentialsOf(file, "human");
    const archivist = credentialsOf(file, "archivist");
    expect(human.apiKey).toMatch(/^cairn_[A-Za-z0-9_-]{43,}$/);
    expect(archivist.apiKey).toMatch(/^cairn_[A-Za-z0-9_-]{43,}$/);
    expect(human.apiKey).not.toBe(archivist.apiKey);

    expect(await roleOf(server, human)).toBe("owner");
    expect(await roleOf(server, archivist)).toBe("archivist");
  });

  it("logs the credentials path but never a key", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir);
    const file = readCredentials(dataDir);
    const human = credentialsOf(file, "human");
    await server.request("/agents/me", { as: human });
    await server.request("/agents/me", { as: { agentId: "human", apiKey: "cairn_a-wrong-key-for-the-log" } });
    await server.close();
    const logText = server.logs.join("");
    expect(logText).toContain(credentialsFile(dataDir));
    for (const entry of Object.values(file.agents)) expect(logText).not.toContain(entry.api_key);
    expect(logText).not.toContain("cairn_a-wrong-key-for-the-log");
  });

  it("uses UI_AGENT_ID and ARCHIVIST_AGENT_ID for the bootstrap identities", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir, { UI_AGENT_ID: "boss", ARCHIVIST_AGENT_ID: "keeper" });
    const file = readCredentials(dataDir);
    expect(Object.keys(file.agents).sort()).toEqual(["boss", "keeper"]);
    expect(await roleOf(server, credentialsOf(file, "boss"))).toBe("owner");
    expect(await roleOf(server, credentialsOf(file, "keeper"))).toBe("archivist");
    const ids = (await server.request<{ agent_id: string }[]>("/agents", { as: credentialsOf(file, "boss") })).body.map((a) => a.agent_id);
    expect(ids.sort()).toEqual(["boss", "keeper"]);
  });
});

describe("later starts", () => {
  it("reuse the keys: credentials.json is unchanged and the old keys still work", async () => {
    const dataDir = freshDataDir();
    await (await start(dataDir)).close();
    const before = readFileSync(credentialsFile(dataDir), "utf8");
    const file = readCredentials(dataDir);

    const second = await start(dataDir);
    expect(readFileSync(credentialsFile(dataDir), "utf8")).toBe(before);
    expect(mode(credentialsFile(dataDir))).toBe(0o600);
    expect(await roleOf(second, credentialsOf(file, "human"))).toBe("owner");
    expect(await roleOf(second, credentialsOf(file, "archivist"))).toBe("archivist");
    await second.close();

    const third = await start(dataDir);
    expect(readFileSync(credentialsFile(dataDir), "utf8")).toBe(before);
    expect(await roleOf(third, credentialsOf(file, "human"))).toBe("owner");
  });

  it("keep registered agents and their keys", async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const registered = await first.request<{ api_key: string }>("/agents/self-register", { body: { agent_id: "keeper-of-keys" } });
    expect(registered.status).toBe(201);
    await first.close();
    const second = await start(dataDir);
    expect(await roleOf(second, { agentId: "keeper-of-keys", apiKey: registered.body.api_key })).toBe("agent");
  });
});

describe("keys at rest", () => {
  it("are stored as SHA-256 hashes, never in plain text", async () => {
    const dataDir = freshDataDir();
    const staticKey = "static-key-for-hash-test-01";
    const server = await start(dataDir, { AGENT_KEYS: `ci:${staticKey}` });
    const registered = await server.request<{ api_key: string }>("/agents/self-register", { body: { agent_id: "hashed" } });
    const file = readCredentials(dataDir);
    const keys = [staticKey, registered.body.api_key, ...Object.values(file.agents).map((entry) => entry.api_key)];
    expect(keys).toHaveLength(4);
    // Authenticate once with each, so every code path that touches a key has run.
    for (const [agentId, apiKey] of [
      ["ci", staticKey],
      ["hashed", registered.body.api_key],
      ["human", file.agents.human?.api_key ?? ""],
    ] as const) {
      expect((await server.request("/agents/me", { as: { agentId, apiKey } })).status).toBe(200);
    }

    const rows = await withDatabase(dataDir, (db) => db.all("SELECT * FROM agents"));
    expect(rows.length).toBeGreaterThanOrEqual(4);
    const stored = rows.flatMap((row) =>
      Object.values(row).map((value) => (Buffer.isBuffer(value) ? value.toString("latin1") + value.toString("hex") : String(value))),
    );
    const digests = rows.flatMap((row) => Object.values(row).filter((value): value is Buffer => Buffer.isBuffer(value)));
    for (const key of keys) {
      for (const value of stored) expect(value).not.toContain(key);
      const digest = createHash("sha256").update(key, "utf8").digest();
      expect(digests.some((value) => value.equals(digest))).toBe(true);
    }

    // Nothing else in the data directory (database, WAL, logs) holds a key either.
    await server.close();
    for (const name of readdirSync(dataDir)) {
      if (name === "credentials.json") continue;
      const path = join(dataDir, name);
      if (!statSync(path).isFile()) continue;
      const content = readFileSync(path).toString("latin1");
      for (const key of keys) expect(content.includes(key), `${name} contains a key`).toBe(false);
    }
  });
});

describe("AGENT_KEYS", () => {
  const ciKey = "ci-static-key-0123456789";
  const ci: Credentials = { agentId: "ci", apiKey: ciKey };

  it("agents authenticate with their configured key and role", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir, { AGENT_KEYS: `ci:${ciKey},ops:ops-static-key-0123456:owner,ro:ro-static-key-01234567:viewer` });
    expect(await roleOf(server, ci)).toBe("agent");
    expect(await roleOf(server, { agentId: "ops", apiKey: "ops-static-key-0123456" })).toBe("owner");
    expect(await roleOf(server, { agentId: "ro", apiKey: "ro-static-key-01234567" })).toBe("viewer");
    expect(await roleOf(server, { agentId: "ci", apiKey: "ops-static-key-0123456" })).toBe(401);
    // Static identities are not written to the credentials file.
    expect(Object.keys(readCredentials(dataDir).agents).sort()).toEqual(["archivist", "human"]);
  });

  it("agents cannot be renamed, deleted or have their key rotated through the API (422)", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir, { AGENT_KEYS: `ci:${ciKey}` });
    const owner = credentialsOf(readCredentials(dataDir), "human");

    const renameSelf = await server.request("/agents/me", { as: ci, method: "PATCH", body: { agent_id: "ci-renamed" } });
    expect(renameSelf.status).toBe(422);
    expect(renameSelf.body).toMatchObject({ code: "VALIDATION_FAILED" });
    expect((await server.request("/agents/ci", { as: owner, method: "PATCH", body: { agent_id: "ci-renamed" } })).status).toBe(422);
    expect((await server.request("/agents/me", { as: ci, method: "DELETE" })).status).toBe(422);
    expect((await server.request("/agents/ci", { as: owner, method: "DELETE" })).status).toBe(422);
    expect((await server.request("/agents/ci/rotate-key", { as: ci, method: "POST" })).status).toBe(422);

    expect(await roleOf(server, ci)).toBe("agent");
    expect(await roleOf(server, { agentId: "ci-renamed", apiKey: ciKey })).toBe(401);
    // A display name is not part of the identity: that may change.
    const named = await server.request<{ display_name: string }>("/agents/me", {
      as: ci,
      method: "PATCH",
      body: { display_name: "CI bot" },
    });
    expect(named.status).toBe(200);
    expect(named.body.display_name).toBe("CI bot");
  });

  it("an agent removed from AGENT_KEYS stops working on restart, and comes back when re-added", async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir, { AGENT_KEYS: `ci:${ciKey},stay:stay-static-key-012345` });
    const written = await first.request<{ id: string }>("/memory", { as: ci, body: { content: "written by a static agent" } });
    expect(written.status).toBe(201);
    await first.close();

    const second = await start(dataDir, { AGENT_KEYS: "stay:stay-static-key-012345" });
    expect(await roleOf(second, ci)).toBe(401);
    expect(await roleOf(second, { agentId: "stay", apiKey: "stay-static-key-012345" })).toBe("agent");
    // Its id stays taken and what it wrote stays attributed to it.
    expect((await second.request("/agents/self-register", { body: { agent_id: "ci" } })).status).toBe(409);
    const owner = credentialsOf(readCredentials(dataDir), "human");
    const entry = await second.request<{ agent_id: string }>(`/memory/${written.body.id}`, { as: owner });
    expect(entry.body.agent_id).toBe("ci");
    await second.close();

    const third = await start(dataDir, { AGENT_KEYS: `ci:${ciKey}` });
    expect(await roleOf(third, ci)).toBe("agent");
  });

  it("a changed key in AGENT_KEYS replaces the old one on restart", async () => {
    const dataDir = freshDataDir();
    await (await start(dataDir, { AGENT_KEYS: `ci:${ciKey}` })).close();
    const server = await start(dataDir, { AGENT_KEYS: "ci:ci-new-static-key-98765" });
    expect(await roleOf(server, ci)).toBe(401);
    expect(await roleOf(server, { agentId: "ci", apiKey: "ci-new-static-key-98765" })).toBe("agent");
  });

  it("naming UI_AGENT_ID means no key is generated for it, and it keeps the owner role", async () => {
    const dataDir = freshDataDir();
    const humanKey = "human-static-key-0123456";
    const server = await start(dataDir, { AGENT_KEYS: `human:${humanKey}` });
    const file = readCredentials(dataDir);
    expect(Object.keys(file.agents)).toEqual(["archivist"]);
    expect(JSON.stringify(file)).not.toContain(humanKey);
    expect(await roleOf(server, { agentId: "human", apiKey: humanKey })).toBe("owner");
    expect(await roleOf(server, credentialsOf(file, "archivist"))).toBe("archivist");
  });

  it("naming UI_AGENT_ID later drops its stale generated key from credentials.json", async () => {
    const dataDir = freshDataDir();
    const first = await start(dataDir);
    const generated = credentialsOf(readCredentials(dataDir), "human");
    await first.close();
    const humanKey = "human-static-key-0123456";
    const server = await start(dataDir, { AGENT_KEYS: `human:${humanKey}` });
    const file = readCredentials(dataDir);
    expect(Object.keys(file.agents)).toEqual(["archivist"]);
    expect(await roleOf(server, generated)).toBe(401);
    expect(await roleOf(server, { agentId: "human", apiKey: humanKey })).toBe("owner");
  });

  it("naming both bootstrap identities means no credentials file at all", async () => {
    const dataDir = freshDataDir();
    const server = await start(dataDir, { AGENT_KEYS: "human:human-static-key-0123456,archivist:archivist-static-key-01234" });
    expect(existsSync(credentialsFile(dataDir))).toBe(false);
    expect(await roleOf(server, { agentId: "human", apiKey: "human-static-key-0123456" })).toBe("owner");
    expect(await roleOf(server, { agentId: "archivist", apiKey: "archivist-static-key-01234" })).toBe("archivist");
  });
});
