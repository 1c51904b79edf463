import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliEnv, startServe, type ServeProcess } from "../helpers/cli.js";
import { createProject, link, merkleRoot, type Entry, type Peer, type SyncResult } from "../helpers/mesh-sync.js";
import { request, tempDir, type Credentials } from "../helpers/server.js";
import { closedPort as freePort } from "../helpers/ports.js";

// CONTRACT §16: two real `cairn serve` processes linked both ways, partitioned while both sides
// write, edit and delete, then together again: both converge to the same merkle root.

const PER_SIDE = { writes: 600, edits: 200, deletes: 200 };

interface Side extends Peer {
  name: string;
  env: NodeJS.ProcessEnv;
  process: ServeProcess | null;
}

async function side(name: string): Promise<Side> {
  const dataDir = tempDir();
  const port = await freePort();
  const env = cliEnv(dataDir, { PORT: String(port), INSTANCE_NAME: name, MESH_SYNC_TICK_SECONDS: "60" });
  const process = await startServe(env);
  const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as { agents: Record<string, { agent_id: string; api_key: string }> };
  const owner = Object.values(credentials.agents).find((agent) => agent.agent_id === "human") ?? Object.values(credentials.agents)[0];
  const as: Credentials = { agentId: owner?.agent_id ?? "", apiKey: owner?.api_key ?? "" };
  const url = process.url;
  return { name, url, dataDir, env, process, owner: as, request: (path, options) => request(url, path, options) };
}

/** `count` calls of `work`, eight at a time. */
async function inParallel<T>(count: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < count; index = next++) results[index] = await work(index);
    }),
  );
  return results;
}

async function churn(peer: Side, round: string, own: Entry[]): Promise<Entry[]> {
  const written = await inParallel(PER_SIDE.writes, async (index) => {
    const response = await peer.request<Entry>("/memory", { as: peer.owner, body: { content: `${peer.name} ${round} note ${index}: ${"detail ".repeat(index % 7)}`, project: "shared", allow_duplicate: true } });
    expect(response.status, response.text).toBe(201);
    return response.body;
  });
  const pool = [...own, ...written];
  await inParallel(PER_SIDE.edits, async (index) => {
    const entry = pool[index] as Entry;
    const response = await peer.request(`/memory/${entry.id}`, { as: peer.owner, method: "PATCH", body: { content: `${entry.content} (edited in ${round})` } });
    expect(response.status, response.text).toBe(200);
  });
  const doomed = pool.slice(PER_SIDE.edits, PER_SIDE.edits + PER_SIDE.deletes);
  await inParallel(doomed.length, async (index) => {
    const response = await peer.request(`/memory/${(doomed[index] as Entry).id}`, { as: peer.owner, method: "DELETE" });
    expect(response.status, response.text).toBe(204);
  });
  return pool.filter((entry) => !doomed.includes(entry));
}

/** Syncs the link until a sync applies nothing; the runs' totals. */
async function drain(peer: Side, linkId: string): Promise<{ runs: number; bytes: number; applied: number }> {
  const total = { runs: 0, bytes: 0, applied: 0 };
  for (;;) {
    // A scheduled sync may hold the link (the restarted server found it due): wait for it.
    const busy = await peer.request(`/mesh/peers/${linkId}/sync`, { as: peer.owner, method: "POST" });
    if (busy.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    expect(busy.status, busy.text).toBe(200);
    const result = busy.body as SyncResult;
    total.runs++;
    total.bytes += result.bytes;
    total.applied += result.applied + result.tombstones;
    if (result.applied + result.tombstones + result.skipped === 0 || result.pages < 20) return total;
  }
}

const sides: Side[] = [];
afterAll(async () => {
  for (const peer of sides) {
    await peer.process?.stop();
    rmSync(peer.dataDir, { recursive: true, force: true });
  }
});

describe("a partition", () => {
  it("ends with both sides on the same merkle root", async () => {
    const a = await side("left");
    const b = await side("right");
    sides.push(a, b);
    for (const peer of [a, b]) await createProject(peer, "shared");
    const fromA = await link(a, b, ["shared"], "both");
    const fromB = (await b.request<{ id: string; peer_name: string }[]>("/mesh/peers", { as: b.owner })).body.find((entry) => entry.peer_name === "left");
    expect(fromB, "the handshake made the link back").toBeDefined();

    let ownA = await churn(a, "before", []);
    let ownB = await churn(b, "before", []);
    await drain(a, fromA.id);
    await drain(b, fromB?.id ?? "");
    expect(await merkleRoot(a, "shared")).toBe(await merkleRoot(b, "shared"));

    // The partition: each side changes while the other is down.
    await b.process?.stop();
    b.process = null;
    ownA = await churn(a, "left alone", ownA);
    const failed = await a.request(`/mesh/peers/${fromA.id}/sync`, { as: a.owner, method: "POST" });
    expect(failed.status).toBe(502);
    await a.process?.stop();
    a.process = null;
    b.process = await startServe(b.env);
    ownB = await churn(b, "right alone", ownB);
    a.process = await startServe(a.env);

    const pulledByA = await drain(a, fromA.id);
    const pulledByB = await drain(b, fromB?.id ?? "");
    const rootA = await merkleRoot(a, "shared");
    expect(rootA).toBe(await merkleRoot(b, "shared"));
    // Both sides pulled every change the other made (`npm run bench -- mesh` measures what it costs).
    expect(pulledByA.applied).toBeGreaterThanOrEqual(PER_SIDE.writes);
    expect(pulledByB.applied).toBeGreaterThanOrEqual(PER_SIDE.writes);
    expect(ownA.length + ownB.length).toBeGreaterThan(0);
  }, 600_000);
});
