import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DISCOVERED_MAX, DiscoveredPeers } from "../../src/services/mesh/discovered.js";
import { openStore } from "../../src/store/open.js";
import type { MeshDiscovered as Discovered } from "../../src/wire/mesh.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { databaseUrlFor, withDatabase, type DatabaseHandle } from "../helpers/database.js";
import { describeInNamespace } from "../helpers/namespace.js";
import { RFC3339_MS, startTestServer, tempDir, type ErrorBody } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PEER_A = "0b5e8f9a-1c2d-4e3f-8a9b-0c1d2e3f4a5b";
const PEER_B = "7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a";

const seen = (instanceId: string, name: string, lastSeenAt: string, via = "mdns") =>
  ({ instance_id: instanceId, name, url: `http://${name}.lan:8080`, via, last_seen_at: lastSeenAt });

/** A link to `peerInstanceId`, as the peers' routes will make one (only its existence matters here). */
async function linkTo(db: DatabaseHandle, peerInstanceId: string): Promise<void> {
  const at = "2026-01-01T00:00:00.000Z";
  await db.run(
    `INSERT INTO mesh_links (id, peer_instance_id, peer_name, url, direction, interval_seconds, max_confidence, token_sealed, token_hint,
       next_sync_at, anti_entropy_at, created_by, created_at, updated_at) VALUES (?, ?, 'team-a', 'http://team-a.lan:8080', 'pull', 300, 0.8, 'sealed', 'hint', ?, ?, 'human', ?, ?)`,
    "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d", peerInstanceId, at, at, at, at,
  );
}

describe("GET /mesh/discovered", () => {
  const server = serverForSuite();
  const member = agentForSuite(server, "mdns-member");

  it("lists nothing on an instance that has heard of no one", async () => {
    const response = await server.request<Discovered[]>("/mesh/discovered", { as: server.owner });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it("lists discovered peers most recently seen first, linked when a link to that instance exists", async () => {
    // A server of its own: the suite's stays empty for the test above, whatever the order.
    const own = await startTestServer();
    try {
      await withDatabase(own.dataDir, async (db) => {
        for (const row of [seen(PEER_A, "team-a", "2026-01-01T10:00:00.000Z"), seen(PEER_B, "team-b", "2026-01-02T10:00:00.000Z", `gossip:${PEER_A}`)]) {
          await db.run("INSERT INTO mesh_discovered (instance_id, name, url, via, last_seen_at) VALUES (?, ?, ?, ?, ?)", row.instance_id, row.name, row.url, row.via, row.last_seen_at);
        }
        await linkTo(db, PEER_A);
      });
      const response = await own.request<Discovered[]>("/mesh/discovered", { as: own.owner });
      expect(response.status).toBe(200);
      expect(response.body).toEqual([
        { ...seen(PEER_B, "team-b", "2026-01-02T10:00:00.000Z", `gossip:${PEER_A}`), linked: false },
        { ...seen(PEER_A, "team-a", "2026-01-01T10:00:00.000Z"), linked: true },
      ]);
    } finally {
      await own.close();
    }
  });

  it("is refused to anyone but the owner with 403", async () => {
    const response = await server.request<ErrorBody>("/mesh/discovered", { as: member });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe("FORBIDDEN");
    expect((await server.request("/mesh/discovered")).status).toBe(401);
  });
});

describe("the discovered peers table", () => {
  const SELF = "11111111-2222-4333-8444-555555555555";
  const idOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

  it("never records this instance, forgets peers unseen for 7 days and keeps the 500 most recently seen", async () => {
    const dir = tempDir();
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    try {
      const peers = new DiscoveredPeers(store, SELF);
      expect(await peers.record({ instance_id: SELF, name: "me", url: "http://10.0.0.1" }, "mdns")).toBe(false);
      expect(await peers.record({ instance_id: idOf(0), name: "fresh", url: "http://10.0.0.2" }, "mdns")).toBe(true);
      const now = Date.now();
      await store.transaction(async (tx) => {
        await store.mesh.upsertDiscovered(tx, seen(idOf(1), "stale", new Date(now - 8 * 86_400_000).toISOString()));
        // More than the table keeps, all seen within the week, older than `fresh`.
        for (let n = 2; n < DISCOVERED_MAX + 5; n++) {
          await store.mesh.upsertDiscovered(tx, seen(idOf(n), `peer-${n}`, new Date(now - 86_400_000 - n * 1000).toISOString()));
        }
      });
      expect(await peers.prune(now)).toBe(5);
      const kept = await peers.list();
      expect(kept).toHaveLength(DISCOVERED_MAX);
      expect(kept[0]?.instance_id).toBe(idOf(0));
      const ids = new Set(kept.map((peer) => peer.instance_id));
      expect(ids.has(SELF)).toBe(false);
      expect(ids.has(idOf(1))).toBe(false);
      // The oldest beyond 500 went: 0 and 2…500 are kept, 501…503 are not.
      expect([501, 502, 503].filter((n) => ids.has(idOf(n)))).toEqual([]);
      expect(ids.has(idOf(DISCOVERED_MAX))).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe("MESH_MDNS=on", () => {
  it("refuses to start while HOST is loopback, saying so", async () => {
    const run = await runCli(["serve"], cliEnv(tempDir(), { MESH_MDNS: "on", HOST: "127.0.0.1" }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("invalid setting MESH_MDNS: refused while HOST is loopback; bind HOST to a network address first");
    expect(run.stdout).not.toMatch(/^cairn http/m);
  });
});

interface NamespaceRun {
  instances: Record<"a" | "b" | "silent", { id: string; url: string }>;
  first: Record<"a" | "b", { list: Discovered[]; ms: number }>;
  later: Record<"a" | "b" | "silent", Discovered[]>;
  /** What a browse of our own heard: service name → TXT id. */
  heard: Record<string, string>;
  /** A service with a well-formed TXT record the script advertised besides the servers. */
  impostor: { id: string; name: string; url: string };
  /** The ids of the malformed records it advertised. */
  malformed: string[];
  /** Services that said goodbye after B was stopped. */
  goodbye: string[];
  exits: (number | null)[];
}

/**
 * Runs test/helpers/mdns-namespace.ts in a new network namespace: its own link, three real
 * `cairn serve` processes on it (A and B with MESH_MDNS=on, a third with the default, off).
 */
function runInNamespace(): Promise<NamespaceRun> {
  // On SQLite whatever the suite's backend: a new namespace has only a loopback of its own, so
  // PostgreSQL on the host's loopback is out of its reach.
  const { CAIRN_TEST_DATABASE_URL: _postgres, ...env } = process.env;
  const child = spawn("unshare", ["-n", process.execPath, "--import", "tsx", "test/helpers/mdns-namespace.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 110_000);
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`the namespace run exited ${code}: ${stderr}`));
      else resolveRun(JSON.parse(stdout) as NamespaceRun);
    });
  });
}

describeInNamespace("mDNS between servers on a network of their own (a namespace the test makes)", () => {
  let run: NamespaceRun;
  beforeAll(async () => {
    run = await runInNamespace();
  }, 120_000);

  it("each server with MESH_MDNS=on discovers the other within seconds: its id, name and URL, via mdns, not linked", () => {
    const { a, b } = run.instances;
    expect(run.first.a.list).toEqual([{ instance_id: b.id, name: "mdns-b", url: b.url, via: "mdns", last_seen_at: expect.stringMatching(RFC3339_MS) as string, linked: false }]);
    expect(run.first.b.list).toEqual([{ instance_id: a.id, name: "mdns-a", url: a.url, via: "mdns", last_seen_at: expect.stringMatching(RFC3339_MS) as string, linked: false }]);
    expect(Math.max(run.first.a.ms, run.first.b.ms)).toBeLessThan(15_000);
  });

  it("a server never lists itself, and lists every well-formed advertisement it hears", () => {
    const { a, b } = run.instances;
    const ids = (list: Discovered[]) => list.map((peer) => peer.instance_id).sort();
    expect(ids(run.later.a)).toEqual([b.id, run.impostor.id].sort());
    expect(ids(run.later.b)).toEqual([a.id, run.impostor.id].sort());
    const { id, ...named } = run.impostor;
    expect(run.later.a.find((peer) => peer.instance_id === id)).toMatchObject({ ...named, via: "mdns", linked: false });
  });

  it("ignores advertisements whose TXT record is malformed (an id that is no UUID, a URL with a password, a name out of pattern)", () => {
    const listed = Object.values(run.later).flat().map((peer) => peer.instance_id);
    for (const id of run.malformed) expect(listed).not.toContain(id);
  });

  it("a server with MESH_MDNS off (the default) advertises nothing and browses nothing", () => {
    const { a, b, silent } = run.instances;
    expect(Object.values(run.heard)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(Object.values(run.heard)).not.toContain(silent.id);
    expect(Object.keys(run.heard).filter((name) => name.startsWith("mdns-silent"))).toEqual([]);
    expect(Object.values(run.later).flat().map((peer) => peer.instance_id)).not.toContain(silent.id);
    expect(run.later.silent).toEqual([]);
  });

  it("advertises a name of the instance's name and id, says goodbye when it stops, and stops cleanly", () => {
    const bName = `mdns-b-${run.instances.b.id.slice(0, 8)}`;
    expect(run.heard[bName]).toBe(run.instances.b.id);
    expect(run.goodbye).toEqual([bName]);
    expect(run.exits).toEqual([0, 0]);
  });
});
