import { fixtureDocument } from "../helpers/feed-fixtures.js";
import { startFeedServer } from "../helpers/feed-server.js";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { TABLES as COPIED_TABLES } from "../../src/store/copy.js";
import { PgDb } from "../../src/store/postgres/connection.js";
import { loadMigrations } from "../../src/store/migrations.js";
import { connect } from "../../src/store/sqlite/connection.js";
import { runMigrations as runSqliteMigrations, schemaVersion } from "../../src/store/sqlite/migrate.js";
import { runCli, cliEnv } from "../helpers/cli.js";
import { adminSql, databaseUrl, onPostgres, POSTGRES_URL } from "../helpers/database.js";
import { authorizeUrl, consent, pkce, register, tokenRequest } from "../helpers/oauth.js";
import { startTestServer, tempDir, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";

// `cairn migrate-store` copies a SQLite store into PostgreSQL: it needs a PostgreSQL server, so it
// runs only when the suite does (`npm run test:postgres`).

const PASSWORD = "correct horse battery staple";
// Agents with keys from configuration: one agent, and a second owner beside the bootstrapped human.
const AGENT_KEYS = "static-bot:static-bot-key-0123456789:agent,boss:boss-key-0123456789abcdef:owner";
const staticBot: Credentials = { agentId: "static-bot", apiKey: "static-bot-key-0123456789" };
const boss: Credentials = { agentId: "boss", apiKey: "boss-key-0123456789abcdef" };

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = tempDir("cairn-migrate-store-");
  dirs.push(dir);
  return dir;
}

/** A server on DATA_DIR=dir: on SQLite (DATABASE_URL empty means unset), or on the database `url`. */
async function server(dir: string, url = ""): Promise<TestServer> {
  const started = await startTestServer({ DATA_DIR: dir, DATABASE_URL: url, AGENT_KEYS, UI_PASSWORD: PASSWORD, FEEDS_ALLOW_PRIVATE: "true" });
  servers.push(started);
  return started;
}

async function stop(target: TestServer): Promise<void> {
  servers.splice(servers.indexOf(target), 1);
  await target.close();
}

let targets = 0;
/** A new, empty database under this run's prefix, so the global teardown drops it. */
function emptyDatabase(): string {
  const name = `${process.env.CAIRN_TEST_DATABASE_PREFIX ?? "cairn_test_"}migrate_${process.pid}_${++targets}`;
  adminSql(`CREATE DATABASE "${name}"`);
  return databaseUrl(POSTGRES_URL as string, name);
}

async function onTarget<T>(url: string, work: (db: PgDb) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(new PgDb(client));
  } finally {
    await client.end();
  }
}

function onSource<T>(file: string, work: (db: ReturnType<typeof connect>) => T): T {
  const db = connect(file, { readonly: true });
  try {
    return work(db);
  } finally {
    db.close();
  }
}

const HNSW_META = "'vector_generation', 'vector_changes_pruned'";

/**
 * The tables of the SQLite schema that hold a store's data: all but `schema_migrations`,
 * SQLite's own (`sqlite_sequence`, `sqlite_stat*`), and the keyword index and the vector index's
 * virtual tables with their shadow tables (PostgreSQL derives the one; the other's vectors are
 * `memory_embeddings`, copied with their filters).
 */
function dataTables(file: string): string[] {
  return onSource(file, (db) => {
    const tables = db.all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name");
    const virtual = tables.filter((table) => /^CREATE VIRTUAL TABLE/i.test(table.sql)).map((table) => table.name);
    return tables
      .map((table) => table.name)
      .filter((name) => name !== "schema_migrations" && !name.startsWith("sqlite_"))
      .filter((name) => !virtual.some((index) => name === index || name.startsWith(`${index}_`)));
  });
}

async function targetCounts(url: string, tables: string[]): Promise<Record<string, number>> {
  return onTarget(url, async (db) => {
    const counts: Record<string, number> = {};
    for (const table of tables) counts[table] = (await db.get<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))?.n ?? -1;
    return counts;
  });
}

const sourceCounts = (file: string, tables: string[]): Record<string, number> =>
  onSource(file, (db) => Object.fromEntries(tables.map((table) => [table, db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`)?.n ?? -1])));

const byText = (a: Record<string, unknown>, b: Record<string, unknown>): number => {
  const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

async function created<T = { id: string }>(target: TestServer, path: string, as: Credentials, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await target.request<T>(path, { as, body, headers });
  expect(response.status, `${path}: ${response.text}`).toBe(201);
  return response.body;
}

async function ok<T = unknown>(target: TestServer, path: string, as: Credentials | null, options: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
  const response = await target.request<T>(path, { ...options, as });
  expect(response.status, `${options.method ?? "GET"} ${path}: ${response.text}`).toBe(200);
  return response.body;
}

/** What each agent reads through the API that reading does not change. */
async function snapshot(target: TestServer, agents: Credentials[]): Promise<Record<string, unknown>> {
  const withoutLease = (tasks: Record<string, unknown>[]) => tasks.map(({ lease_expires_at: _lease, ...task }) => task);
  const views: Record<string, unknown> = {};
  for (const agent of agents) {
    views[agent.agentId] = {
      memory: await ok(target, "/memory?limit=500&include_code=true", agent),
      // Every authenticated request may renew the caller's claims: the lease is checked apart.
      tasks: withoutLease(await ok(target, "/tasks?limit=500", agent)),
      decisions: await ok(target, "/decisions?include_superseded=true&limit=500", agent),
      blueprints: await ok(target, "/blueprints?limit=200", agent),
      runs: await ok(target, "/blueprints/runs?limit=100", agent),
      messages: await ok(target, "/messages?limit=500", agent),
      unread: await ok(target, "/messages/inbox/count", agent),
      events: await ok(target, "/events?since=seq:0&limit=500", agent),
      projects: await ok(target, "/projects/mine", agent),
      feeds: await ok(target, "/feeds?limit=200", agent),
    };
  }
  views.shared = {
    graph: await ok(target, "/graph?limit=500", target.owner),
    handoffs: await ok(target, "/sessions/handoffs", target.owner),
    counts: await ok(target, "/tasks/counts", target.owner),
    projects: await ok(target, "/projects", target.owner),
    members: await ok(target, "/projects/web/members", target.owner),
    state: await ok(target, "/archivist/state/cursor", target.archivist),
    logs: await ok(target, "/logs?limit=500", target.owner),
    lease: await ok(target, "/archivist/status", target.owner),
    anchors: await ok(target, "/compile/anchors?project=web", target.owner),
    stale: await ok(target, "/compile/stale?project=web", target.owner),
  };
  return views;
}

interface Built {
  alice: Credentials;
  bob: Credentials;
  carol: Credentials;
  gone: Credentials;
  ids: Record<string, string>;
  bearer: string;
  /** The tokens of a grant (OAuth code flow), whose rows the copy must carry. */
  oauth: { clientId: string; refresh: string };
  uiSession: string;
  loginToken: string;
  leaseToken: number;
  snapshot: Record<string, unknown>;
}

/** A store with a row in every table, made through the API of a server on SQLite. */
async function buildSqliteStore(dir: string): Promise<Built> {
  const source = await server(dir);
  const [alice, bob, carol, gone] = [await source.agent("alice"), await source.agent("bob"), await source.agent("carol"), await source.agent("gone")];
  await created(source, "/projects", alice, { name: "web", description: "the web frontend" });
  await ok(source, "/projects/web/join", bob, { method: "POST" });
  expect((await source.request(`/agents/${gone.agentId}`, { as: source.owner, method: "DELETE" })).status).toBe(204);

  const ids: Record<string, string> = {};
  ids.global = (await created(source, "/memory", alice, { content: "Deploys go out on Tuesdays after the code freeze", project: null, tags: ["deploy", "schedule"], confidence: 0.8 })).id;
  ids.project = (await created(source, "/memory", alice, { content: "The web frontend builds with vite and is served by nginx", project: "web", tags: ["build"] })).id;
  ids.private = (await created(source, "/memory", alice, { content: "Alice keeps a private note about zebras in the zoo", scope: "agent", project: null, tags: ["zoo"] })).id;
  ids.directive = (await created(source, "/memory", source.owner, { content: "Never force-push to the main branch", type: "directive", project: null })).id;
  ids.edited = (await created(source, "/memory", bob, { content: "The staging database lives on host db-staging-1", project: null })).id;
  await ok(source, `/memory/${ids.edited}`, bob, { method: "PATCH", body: { content: "The staging database moved to host db-staging-2", tags: ["staging"] } });
  ids.deleted = (await created(source, "/memory", carol, { content: "A note carol takes back at once", project: null })).id;
  expect((await source.request(`/memory/${ids.deleted}`, { as: carol, method: "DELETE" })).status).toBe(204);
  await ok(source, `/memory/${ids.global}`, bob); // a read: memory_readers
  await created(source, "/graph/edge", alice, { src: ids.project, dst: ids.global, rel: "supports", note: "the build waits for the freeze" });

  const task = (body: Record<string, unknown>, headers: Record<string, string> = {}) => created<{ id: string }>(source, "/tasks", alice, body, headers);
  ids.done = (await task({ title: "Set up the build", project: "web", tags: ["build"], priority: "high" })).id;
  ids.after = (await task({ title: "Ship the first release", project: "web", depends_on: [ids.done] })).id;
  ids.claimed = (await task({ title: "Write the deploy script", project: "web" })).id;
  ids.blocked = (await task({ title: "Announce the release", project: "web", depends_on: [ids.claimed] })).id;
  ids.reserved = (await task({ title: "Review the docs", project: null, assigned_to: carol.agentId, due_at: "2030-01-01T00:00:00.000Z" })).id;
  ids.idempotent = (await task({ title: "Created once however often it is retried", project: null }, { "idempotency-key": "migrate-1" })).id;
  await ok(source, `/tasks/${ids.done}/claim`, bob, { method: "POST", body: {} });
  await ok(source, `/tasks/${ids.done}/complete`, bob, { method: "POST", body: { output: { url: "https://ci.example/1" }, comment: "green" } });
  await ok(source, `/tasks/${ids.claimed}/claim`, bob, { method: "POST", body: { comment: "on it" } });
  await created(source, `/tasks/${ids.blocked}/comments`, alice, { comment: "waiting for the script" });
  const decision = { rationale: "builds in seconds, not minutes", project: "web", memory_refs: [ids.project], tags: ["build"] };
  ids.decided = (await created(source, "/decisions", alice, { ...decision, decision: "Build with webpack", task_id: ids.done, alternatives: ["rollup"] })).id;
  ids.superseding = (await created(source, "/decisions", bob, { ...decision, decision: "Build with vite", supersedes: ids.decided, alternatives: [{ option: "webpack", reason_rejected: "slow" }] })).id;
  ids.capture = (await created(source, "/captures", alice, { content: "we moved the build to vite today", session_id: "s-1", project: "web" })).id;
  ids.blueprint = (await created(source, "/blueprints", alice, { name: "release", title: "Release", project: "web", nodes: [{ id: "build", title: "Build" }] })).id;
  ids.run = (await created(source, "/blueprints/release/instantiate", alice, { project: "web", params: {} })).id;
  // Compiled code, an entry it grounds, and a change to the code that marks that entry stale.
  const code = (version: string) => ({ project: "web", commit: `c${version}`, units: [{ path: "src/build.ts", symbol: "build", kind: "function", lang: "typescript", start_line: 1, end_line: 9, sha: version.repeat(64), description: "function build(): void", deps: [] }] });
  ids.compiled = (await ok<{ memory_ids: string[] }>(source, "/compile", alice, { method: "POST", body: code("1") })).memory_ids[0] as string;
  await created(source, "/graph/edge", alice, { src: ids.compiled, dst: ids.project, rel: "grounds" });
  await ok(source, "/compile", alice, { method: "POST", body: code("2") });
  // A feed subscription, polled once at subscription: its items are entries and seen keys.
  const releases = await startFeedServer();
  try {
    releases.route("/releases.xml", { headers: { "content-type": "application/atom+xml" }, body: fixtureDocument("atom-1.0", 2, { name: "releases" }).body });
    ids.feed = (await created(source, "/feeds", alice, { url: `${releases.url}/releases.xml`, project: "web", tags: ["releases"] })).id;
  } finally {
    await releases.close();
  }

  // Linked both ways to a peer (a token minted here for it, a link with its token sealed), with a
  // copy of the peer's entry suppressed here.
  const peer = await server(scratch());
  await created(peer, "/projects", peer.owner, { name: "web" });
  const peerNote = await created(peer, "/memory", peer.owner, { content: "the peer's release notes", project: "web" });
  const minted = await created<{ token: string }>(peer, "/mesh/tokens", peer.owner, { label: "for the source", projects: ["web"], capabilities: ["pull", "handshake"] });
  ids.link = (await created(source, "/mesh/peers", source.owner, { url: peer.url, token: minted.token, projects: ["web"], direction: "both" })).id;
  await ok(source, `/mesh/peers/${ids.link}/sync`, source.owner, { method: "POST" });
  expect((await source.request(`/memory/${peerNote.id}/suppress`, { as: source.owner, method: "POST" })).status).toBe(204);
  await stop(peer);

  ids.direct = (await created(source, "/messages", alice, { to: bob.agentId, subject: "hello", body: "the build is green" })).id;
  ids.toProject = (await created(source, "/messages", alice, { to: "project:web", body: "release on Tuesday" })).id;
  ids.broadcast = (await created(source, "/messages", bob, { to: "broadcast", body: "lunch at noon" })).id;
  await ok(source, `/messages/${ids.direct}/read`, bob, { method: "POST" });
  await ok(source, "/messages/inbox/read-all", alice, { method: "POST" });

  await created(source, "/sessions/handoff", alice, { summary: "set up the project", next_steps: ["ship it"], memory_refs: [ids.project] });
  await created(source, "/events", alice, { type: "deploy.finished", payload: { build: 7 }, project: "web" });

  const lease = await ok<{ token: number }>(source, "/archivist/lease", source.archivist, { method: "POST", body: { holder: "migration-test", ttl_seconds: 3600 } });
  const leaseHeader = { "x-archivist-lease": String(lease.token) };
  await ok(source, "/archivist/state/cursor", source.archivist, { method: "PUT", body: { value: { seq: 41, nested: [1, 2] } }, headers: leaseHeader });
  await created(source, "/logs", source.archivist, { source: "archivist", action: "pass", message: "a pass before the move", details: { merged: 0 } }, leaseHeader);

  const token = await fetch(new URL("/oauth/token", source.url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: bob.agentId, client_secret: bob.apiKey }).toString(),
  });
  expect(token.status).toBe(200);
  const bearer = ((await token.json()) as { access_token: string }).access_token;
  const uiSession = (await ok<{ session: string }>(source, "/ui/login", null, { method: "POST", body: { password: PASSWORD } })).session;
  // An OAuth client a human allowed to act as bob: a client, a grant, its spent code, refresh and access tokens.
  const redirect = "http://127.0.0.1:57001/callback";
  const clientId = (await register(source.url, { client_name: "migrating host", redirect_uris: [redirect], token_endpoint_auth_method: "none" })).body.client_id as string;
  const { verifier, challenge } = pkce();
  const back = await consent(source.url, authorizeUrl(source.url, { client_id: clientId, redirect_uri: redirect, code_challenge: challenge }), uiSession, { agent: bob.agentId });
  const granted = await tokenRequest(source.url, { grant_type: "authorization_code", code: back.searchParams.get("code") as string, code_verifier: verifier, redirect_uri: redirect, client_id: clientId });
  expect(granted.status).toBe(200);
  const oauth = { clientId, refresh: granted.body.refresh_token as string };
  const loginToken = (await source.server.gateway.maintenance.issueLoginLink()).token;
  // The static agents authenticate before the move too.
  await ok(source, "/agents/me", staticBot);
  await ok(source, "/agents/me", boss);

  const views = await snapshot(source, [source.owner, alice, bob, carol]);
  await stop(source);
  const db = connect(join(dir, "cairn.db"));
  // A background job's claim: the jobs' intervals are far longer than a test, so it is written here.
  db.run("INSERT INTO jobs (name, next_run_at) VALUES ('event-retention', '2030-01-01T00:00:00.000Z')");
  // A peer heard of on the network: mDNS, which a test cannot reach from here, would have written it.
  db.run("INSERT INTO mesh_discovered (instance_id, name, url, via, last_seen_at) VALUES ('8d7f7b0e-5a35-4d53-9a43-0b1c2d3e4f50', 'laptop', 'http://192.0.2.7:3000', 'mdns', '2026-12-01T00:00:00.000Z')");
  // Seqs handed out to events that retention has since pruned: SQLite's AUTOINCREMENT remembers them.
  db.run("UPDATE sqlite_sequence SET seq = seq + 1000 WHERE name = 'events'");
  db.close();
  return { alice, bob, carol, gone, ids, bearer, oauth, uiSession, loginToken, leaseToken: lease.token, snapshot: views };
}

describe.runIf(onPostgres)("cairn migrate-store", () => {
  it("copies every row of every table of a SQLite store, and a server on PostgreSQL carries on where the SQLite one stopped", { timeout: 180_000 }, async () => {
    const dir = scratch();
    const built = await buildSqliteStore(dir);
    const { alice, bob, carol, ids } = built;
    const file = join(dir, "cairn.db");
    const target = emptyDatabase();

    // The copy's list is the schema's data tables; the lease and the vectors are copied on their own,
    // and the quota buckets and the HNSW index's change log not at all.
    const tables = dataTables(file).filter((table) => table !== "quota_buckets" && table !== "vector_changes");
    expect([...tables].sort()).toEqual([...COPIED_TABLES, "archivist_lease", "memory_embeddings"].sort());
    const before = sourceCounts(file, tables);
    for (const [table, rows] of Object.entries(before)) expect(rows, `${table} has rows to copy`).toBeGreaterThan(0);

    const run = await runCli(["migrate-store", "--from", file, "--to", target], cliEnv(dir, { DATABASE_URL: "" }));
    expect(run.code, run.stderr).toBe(0);
    // The index's own rows (the vectors, their model in `meta`) are made apart from the rows counted.
    const indexMeta = onSource(file, (db) => db.get<{ n: number }>("SELECT count(*) AS n FROM meta WHERE key LIKE 'vector\\_%' ESCAPE '\\'")?.n ?? 0);
    const rows = COPIED_TABLES.reduce((sum, table) => sum + (before[table] ?? 0), 0) - indexMeta;
    expect(run.stdout).toBe(`copied ${rows} rows in ${COPIED_TABLES.length} tables and ${before.memory_embeddings} vectors; every count matches\n`);
    expect(run.stderr).toContain(`copied memory: ${before.memory}`);
    // SQLite's HNSW index keeps its generation and pruned point in `meta`; PostgreSQL has no use for them.
    const hnswMeta = onSource(file, (db) => db.get<{ n: number }>(`SELECT count(*) AS n FROM meta WHERE key IN (${HNSW_META})`)?.n ?? 0);
    expect(await targetCounts(target, tables)).toEqual({ ...before, meta: (before.meta ?? 0) - hnswMeta });

    // Row for row, column for column: keys, times, 0/1 flags, key hashes (BLOB → BYTEA), JSON text, reals.
    await onTarget(target, async (db) => {
      for (const table of tables.filter((name) => name !== "memory_embeddings")) {
        const columns = onSource(file, (source) => source.all<{ name: string }>(`PRAGMA table_info(${table})`).map((column) => column.name));
        const where = table === "meta" ? ` WHERE key <> 'vector_layout' AND key NOT IN (${HNSW_META})` : "";
        const select = `SELECT ${columns.join(", ")} FROM ${table}${where}`;
        const copied = (await db.all(select)).sort(byText);
        const original = onSource(file, (source) => source.all(select)).sort(byText);
        expect(copied, table).toEqual(original);
      }
      // Each vector exactly (float32 for float32), with the filters its index applies.
      const vectors = await db.all<{ pk: number; embedding: number[]; vis_key: string; owner_key: string; project_key: string; type: string; agent_id: string; confidence: number; expires_ms: number }>(
        "SELECT pk, embedding::real[] AS embedding, vis_key, owner_key, project_key, type, agent_id, confidence, expires_ms FROM memory_embeddings ORDER BY pk",
      );
      const originals = onSource(file, (source) =>
        source.all<{ pk: number; embedding: Buffer; vis_key: string; owner_key: string; project_key: string; type: string; agent_id: string; confidence: number; expires_ms: number }>(
          "SELECT e.pk, e.embedding, v.vis_key, v.owner_key, v.project_key, v.type, v.agent_id, v.confidence, v.expires_ms FROM memory_embeddings e JOIN memory_vectors v ON v.pk = e.pk ORDER BY e.pk",
        ),
      );
      expect(vectors.map(({ embedding, ...rest }) => ({ ...rest, embedding: embedding.map((x) => Math.fround(x)) }))).toEqual(
        originals.map(({ embedding, ...rest }) => ({
          ...rest,
          expires_ms: Number(rest.expires_ms),
          embedding: Array.from(new Float32Array(embedding.buffer.slice(embedding.byteOffset, embedding.byteOffset + embedding.byteLength))),
        })),
      );
    });
    // Every identity (PostgreSQL's catalogue says which) hands out keys above the copied ones; events'
    // above every seq SQLite ever handed out. (A conflict alone would not show it: a transaction that
    // meets one is retried, and the retry takes the next key.)
    const usedSeq = onSource(file, (db) => db.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'")?.seq ?? 0);
    await onTarget(target, async (db) => {
      const identities = await db.all<{ table_name: string; column_name: string }>("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'");
      expect(identities.length).toBeGreaterThan(0);
      for (const { table_name: table, column_name: column } of identities) {
        const sequence = (await db.get<{ name: string }>("SELECT pg_get_serial_sequence(?, ?) AS name", table, column))?.name as string;
        const state = await db.get<{ next: number }>(`SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next FROM ${sequence}`);
        const max = (await db.get<{ max: number }>(`SELECT COALESCE(max(${column}), 0) AS max FROM ${table}`))?.max ?? 0;
        expect(state?.next, `${table}.${column}`).toBeGreaterThan(table === "events" ? Math.max(max, usedSeq) : max);
      }
    });
    const model = onSource(file, (db) => db.all<{ key: string; value: string }>("SELECT key, value FROM meta WHERE key IN ('vector_model', 'vector_dimensions') ORDER BY key"));
    const index = await onTarget(target, (db) => db.get<{ oid: number }>("SELECT 'memory_embeddings'::regclass::oid::int AS oid"));

    // A server on the copy: same data directory (credentials.json), DATABASE_URL the target.
    const moved = await server(dir, target);
    await onTarget(target, async (db) => {
      // The index was taken as it is: not rebuilt, nothing waiting to be embedded again.
      expect(await db.all("SELECT key, value FROM meta WHERE key IN ('vector_model', 'vector_dimensions') ORDER BY key")).toEqual(model);
      expect(await db.get("SELECT 'memory_embeddings'::regclass::oid::int AS oid")).toEqual(index);
      expect(await db.get("SELECT count(*)::int AS n FROM memory_embeddings")).toEqual(await db.get("SELECT count(*)::int AS n FROM memory WHERE deleted_at IS NULL"));
      expect(await db.get("SELECT count(*)::int AS n FROM memory WHERE deleted_at IS NULL AND embedding_model IS NULL")).toEqual({ n: 0 });
    });
    expect(await snapshot(moved, [moved.owner, alice, bob, carol])).toEqual(built.snapshot);

    // Every key still authenticates (generated, static, bootstrapped), and so do the hashed tokens.
    for (const agent of [moved.owner, moved.archivist, boss, staticBot, alice, bob, carol]) {
      expect((await ok<{ agent_id: string }>(moved, "/agents/me", agent)).agent_id).toBe(agent.agentId);
    }
    expect((await moved.request("/agents/me", { as: built.gone })).status).toBe(401);
    expect((await moved.request("/agents/self-register", { as: null, body: { agent_id: built.gone.agentId } })).status).not.toBe(201);
    expect((await ok<{ agent_id: string }>(moved, "/agents/me", null, { headers: { authorization: `Bearer ${built.bearer}` } })).agent_id).toBe(bob.agentId);
    expect((await ok<{ agent_id: string }>(moved, "/agents/me", null, { headers: { "x-ui-session": built.uiSession } })).agent_id).toBe("human");
    // The grant came along: its refresh token is still good once, and spent after.
    const refreshed = await tokenRequest(moved.url, { grant_type: "refresh_token", refresh_token: built.oauth.refresh, client_id: built.oauth.clientId });
    expect(refreshed.status).toBe(200);
    expect((await tokenRequest(moved.url, { grant_type: "refresh_token", refresh_token: built.oauth.refresh, client_id: built.oauth.clientId })).body.error).toBe("invalid_grant");
    expect((await ok<{ agent_id: string }>(moved, "/ui/login", null, { method: "POST", body: { token: built.loginToken } })).agent_id).toBe("human");

    // Decisions: found by keyword from PostgreSQL's own index of the copied rows, superseded only when asked.
    expect((await ok<{ id: string }[]>(moved, "/decisions?q=vite", alice)).map((found) => found.id)).toEqual([ids.superseding]);
    expect((await ok<{ id: string }[]>(moved, "/decisions?q=webpack", alice)).map((found) => found.id)).toEqual([]);
    expect((await ok<{ id: string }[]>(moved, "/decisions?q=webpack&include_superseded=true", alice)).map((found) => found.id)).toEqual([ids.decided]);
    expect((await ok<{ id: string; superseded_by: string }>(moved, `/decisions/${ids.decided}`, bob)).superseded_by).toBe(ids.superseding);

    // Search by meaning, from the copied vectors.
    const hits = await ok<{ id: string; similarity: number | null }[]>(moved, `/memory/search?q=${encodeURIComponent("when do deploys go out")}`, alice);
    expect(hits[0]?.id).toBe(ids.global);
    expect(hits[0]?.similarity).toEqual(expect.any(Number));
    expect(hits[0]?.similarity).toBeGreaterThan(0);
    // Visibility: the private entry for its author only, the project's for its members only.
    expect((await moved.request(`/memory/${ids.private}`, { as: alice })).status).toBe(200);
    for (const other of [bob, carol, moved.owner]) expect((await moved.request(`/memory/${ids.private}`, { as: other })).status).toBe(404);
    expect((await ok<{ id: string }[]>(moved, "/memory/search?q=zebras%20in%20the%20zoo", carol)).map((hit) => hit.id)).not.toContain(ids.private);
    expect((await moved.request(`/memory/${ids.project}`, { as: bob })).status).toBe(200);
    expect((await moved.request(`/memory/${ids.project}`, { as: carol })).status).toBe(404);
    expect((await moved.request(`/memory/${ids.deleted}`, { as: carol })).status).toBe(404);
    const edited = await ok<{ version: number; content: string }>(moved, `/memory/${ids.edited}`, bob);
    expect(edited).toMatchObject({ version: 2, content: "The staging database moved to host db-staging-2" });

    // Tasks: dependencies, the claim with its lease, the reservation, the idempotent create.
    expect(await ok(moved, `/tasks/${ids.blocked}`, alice)).toMatchObject({ status: "open", blocked: true, depends_on: [ids.claimed] });
    expect(await ok(moved, `/tasks/${ids.after}`, alice)).toMatchObject({ status: "open", blocked: false, depends_on: [ids.done] });
    const claimed = await ok<{ lease_expires_at: string | null }>(moved, `/tasks/${ids.claimed}`, bob);
    expect(claimed).toMatchObject({ status: "claimed", assigned_to: bob.agentId });
    expect(claimed.lease_expires_at! > new Date().toISOString()).toBe(true);
    expect((await moved.request<ErrorBody>(`/tasks/${ids.claimed}/claim`, { as: alice, body: {} })).status).toBe(409);
    expect(await ok(moved, `/tasks/${ids.reserved}`, carol)).toMatchObject({ status: "open", assigned_to: carol.agentId });
    const replay = await moved.request<{ id: string }>("/tasks", { as: alice, body: { title: "Created once however often it is retried", project: null }, headers: { "idempotency-key": "migrate-1" } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(ids.idempotent);
    expect(await ok(moved, "/messages/inbox/count", bob)).toEqual({ unread: 1 });
    expect(await ok(moved, "/messages/inbox/count", carol)).toEqual({ unread: 1 });
    expect(await ok(moved, "/messages/inbox/count", alice)).toEqual({ unread: 0 });

    // The lease held before the move is held after it, with its fencing token.
    const lease = (holder: string) => ok(moved, "/archivist/lease", moved.archivist, { method: "POST", body: { holder, ttl_seconds: 3600 } });
    expect(await lease("someone-else")).toMatchObject({ granted: false, holder: "migration-test", token: built.leaseToken });
    expect(await lease("migration-test")).toMatchObject({ granted: true, holder: "migration-test", token: built.leaseToken });

    // New rows take new keys (every identity moved past the copied ones), and new events come after the old.
    const events = await ok<{ seq: number }[]>(moved, "/events?since=seq:0&limit=500", moved.owner);
    expect(events.map((event) => event.seq)).toEqual([...events.map((event) => event.seq)].sort((a, b) => a - b));
    const lastSeq = usedSeq;
    expect(lastSeq).toBeGreaterThan(1000);
    const fresh = await created<{ id: string }>(moved, "/memory", alice, { content: "Written after the move to PostgreSQL", project: "web" });
    const next = await ok<{ seq: number; type: string; payload: { memory_id?: string } }[]>(moved, `/events?since=seq:${lastSeq}`, alice);
    expect(next[0]).toMatchObject({ type: "memory.written", payload: { memory_id: fresh.id } });
    expect(next[0]?.seq).toBeGreaterThan(lastSeq);
    await ok(moved, `/tasks/${ids.claimed}/complete`, bob, { method: "POST", body: {} }); // task_outcomes, task_comments
    expect(await ok(moved, `/tasks/${ids.blocked}`, alice)).toMatchObject({ blocked: false });
    const newTask = await created<{ id: string }>(moved, "/tasks", alice, { title: "A task after the move", project: "web", depends_on: [ids.blocked] });
    await created(moved, `/tasks/${newTask.id}/comments`, bob, { comment: "seen" });
    await created(moved, "/messages", bob, { to: alice.agentId, body: "welcome to PostgreSQL" });
    expect(await ok(moved, "/messages/inbox/count", alice)).toEqual({ unread: 1 });
    await created(moved, "/sessions/handoff", bob, { summary: "moved the store" });
    await created(moved, "/graph/edge", alice, { src: fresh.id, dst: ids.project, rel: "relates_to" });
    await created(moved, "/logs", moved.archivist, { source: "archivist", action: "pass", message: "a pass after the move" }, { "x-archivist-lease": String(built.leaseToken) });
    await stop(moved);

    // A second run into the now non-empty database refuses, and changes nothing.
    const filled = await targetCounts(target, tables);
    const again = await runCli(["migrate-store", "--from", file, "--to", target], cliEnv(dir, { DATABASE_URL: "" }));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the target database is not empty/);
    expect(again.stdout).toBe("");
    expect(await targetCounts(target, tables)).toEqual(filled);
  });

  it("refuses a --from that is not a cairn database, and leaves both sides as they were", async () => {
    const dir = scratch();
    const target = emptyDatabase();
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const other = join(dir, "other.db");
    const sqlite = new Database(other);
    sqlite.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('hello')");
    sqlite.close();
    const otherBytes = readFileSync(other);
    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "this is not a database at all, only some text ".repeat(100));
    // Another program's migrations table (Rails names its own so) does not make a file a cairn store.
    const foreign = join(dir, "foreign.db");
    const rails = new Database(foreign);
    rails.exec("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20240101000000')");
    rails.close();
    const foreignBytes = readFileSync(foreign);

    for (const file of [empty, other, garbage, foreign]) {
      const run = await runCli(["migrate-store", "--from", file, "--to", target], cliEnv(dir, { DATABASE_URL: "" }));
      expect(run.code, file).toBe(1);
      expect(run.stderr).toContain(`${file} is not a cairn database`);
      expect(run.stdout).toBe("");
    }
    expect(readFileSync(other)).toEqual(otherBytes);
    expect(readFileSync(foreign)).toEqual(foreignBytes);
    expect(readFileSync(empty).length).toBe(0);
    expect(await onTarget(target, (db) => db.all("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))).toEqual([]);
  });

  it("names a row PostgreSQL cannot hold (a NUL character in text), and copies nothing", async () => {
    const dir = scratch();
    const source = await server(dir);
    const alice = await source.agent("alice");
    await created(source, "/memory", alice, { content: "a fine entry", project: null });
    const bad = await created(source, "/memory", alice, { content: "an entry that will hold a NUL", project: null });
    await stop(source);
    // Cairn refuses U+0000 in every input now; a store written by an older version may hold one.
    const file = connect(join(dir, "cairn.db"));
    file.run("UPDATE memory SET content = ? WHERE id = ?", "an entry with a \u0000 in it", bad.id);
    file.close();
    const target = emptyDatabase();

    const run = await runCli(["migrate-store", "--from", join(dir, "cairn.db"), "--to", target], cliEnv(dir, { DATABASE_URL: "" }));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`memory ${bad.id}: content holds a NUL character (U+0000), which PostgreSQL cannot store`);
    expect(run.stdout).toBe("");
    // The transaction was rolled back: the database is as empty as before, so a later copy may go into it.
    expect(await targetCounts(target, ["agents", "memory", "events"])).toEqual({ agents: 0, memory: 0, events: 0 });
  });

  it("migrates an older store in place before copying it, and copies a table of several batches whole", async () => {
    const dir = scratch();
    const file = join(dir, "cairn.db");
    const migrations = loadMigrations("sqlite");
    const old = connect(file);
    runSqliteMigrations(old, migrations.slice(0, -1));
    // More agents than one INSERT takes (200), and not a multiple of it.
    for (let n = 0; n < 450; n++) {
      old.run("INSERT INTO agents (agent_id, role, key_hash, key_source, created_at) VALUES (?, 'agent', ?, 'generated', '2024-01-01T00:00:00.000Z')", `old-timer-${n}`, Buffer.alloc(32, n % 256));
    }
    old.close();
    const target = emptyDatabase();

    const run = await runCli(["migrate-store", "--from", file, "--to", target], cliEnv(dir, { DATABASE_URL: "" }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`copied 450 rows in ${COPIED_TABLES.length} tables and 0 vectors; every count matches\n`);
    expect(onSource(file, (db) => schemaVersion(db))).toBe(migrations.at(-1)?.version);
    const agents = await onTarget(target, (db) => db.all<{ agent_id: string; key_hash: Buffer }>("SELECT agent_id, key_hash FROM agents ORDER BY agent_id"));
    expect(agents).toHaveLength(450);
    expect(agents.find((agent) => agent.agent_id === "old-timer-449")?.key_hash).toEqual(Buffer.alloc(32, 449 % 256));
  });

  it("answers a usage error, exit 2, for missing arguments or a --to that is not a PostgreSQL URL", async () => {
    const dir = scratch();
    const file = join(dir, "cairn.db");
    writeFileSync(file, "");
    const env = cliEnv(dir, { DATABASE_URL: "" });
    for (const args of [[], ["--from", file], ["--to", "postgres://127.0.0.1/x"], ["--from", file, "--to", "postgres://127.0.0.1/x", "extra"]]) {
      const run = await runCli(["migrate-store", ...args], env);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain("usage: cairn migrate-store --from SQLITE_FILE --to DATABASE_URL");
    }
    const mysql = await runCli(["migrate-store", "--from", file, "--to", "mysql://127.0.0.1/x"], env);
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).toContain("--to must be a postgres:// or postgresql:// URL");
    const missing = await runCli(["migrate-store", "--from", join(dir, "nothing.db"), "--to", "postgres://127.0.0.1/x"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`no SQLite file at ${join(dir, "nothing.db")}`);
    const directory = await runCli(["migrate-store", "--from", dir, "--to", "postgres://127.0.0.1/x"], env);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain(`${dir} is a directory: --from takes the SQLite file, DATA_DIR/cairn.db`);
  });
});
