import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MeshLink as Link } from "../../src/wire/mesh.js";
import { onPostgres } from "../helpers/database.js";
import { clusterOf, startGroup, type Cluster, type Group } from "../helpers/group.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §16 "Sync … any number of server processes, each link synced by one at a time": a
// peer that counts how many pulls of one link are in flight at once, while every server's
// scheduler and requests to each server race to sync it. One in-process server on SQLite; three
// `cairn serve` processes on one PostgreSQL database.

const PEER_ID = randomUUID();
const ITEMS = 2_400;
const at = new Date().toISOString();
const items = Array.from({ length: ITEMS }, (_, index) => ({
  id: randomUUID(),
  content_text: `Peer note ${index}`,
  tags: [],
  _cairn: {
    type: "memory", scope: "project", project: "shared", agent_id: "pat", version: 1, confidence: 0.5, parents: [], origin: PEER_ID,
    origin_name: "counted", source: null, created_at: at, updated_at: at, change_seq: index + 1,
  },
}));

let peer: Server;
let peerUrl: string;
let inFlight = 0;
let mostInFlight = 0;
let pulls = 0;

beforeAll(async () => {
  peer = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://peer");
    response.setHeader("content-type", "application/json");
    if (url.pathname === "/mesh/gossip") {
      response.end(JSON.stringify({ instance_id: PEER_ID, name: "counted", url: peerUrl, version: "0", peers: [] }));
      return;
    }
    if (url.pathname !== "/memory/feed.json") {
      response.statusCode = 404;
      response.end("{}");
      return;
    }
    pulls++;
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    const since = Number(url.searchParams.get("since_seq") ?? 0);
    const limit = Number(url.searchParams.get("limit") ?? 500);
    const page = items.filter((item) => item._cairn.change_seq > since).slice(0, limit);
    // Slow enough that overlapping syncs would overlap here.
    setTimeout(() => {
      inFlight--;
      response.end(JSON.stringify({ items: page, _cairn: { instance_id: PEER_ID, instance_name: "counted", max_change_seq: ITEMS } }));
    }, 40);
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
  peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => peer.close(() => resolve())));

async function race(cluster: Cluster): Promise<void> {
  inFlight = 0;
  mostInFlight = 0;
  pulls = 0;
  const project = await cluster.on(0)("/projects", { as: cluster.owner, body: { name: "shared" } });
  expect([201, 409]).toContain(project.status);
  const linked = await cluster.on(0)<Link>("/mesh/peers", { as: cluster.owner, body: { url: peerUrl, token: `cairn_mt_${"c".repeat(43)}`, projects: ["shared"], direction: "pull" } });
  expect(linked.status, linked.text).toBe(201);
  // Every server asks for a sync of the link while the schedulers claim it too.
  const asked = await Promise.all(
    Array.from({ length: 6 }, (_, index) => cluster.on(index)(`/mesh/peers/${linked.body.id}/sync`, { as: cluster.owner, method: "POST" })),
  );
  for (const answer of asked) expect([200, 409], answer.text).toContain(answer.status);
  let shown: Link | undefined;
  const caughtUp = await eventually(async () => {
    shown = (await cluster.on(1)<Link[]>("/mesh/peers", { as: cluster.owner })).body.find((item) => item.id === linked.body.id);
    return shown?.cursor === ITEMS;
  }, 100_000);
  expect(caughtUp, JSON.stringify(shown)).toBe(true);
  expect(mostInFlight).toBe(1);
  expect(shown?.applied).toBe(ITEMS);
  // Pages of 500: five with items and at most a few empty ones asking whether there is more.
  expect(pulls).toBeLessThanOrEqual(5 + 6 + 3);
}

describe("a link synced from several servers", () => {
  let server: TestServer | undefined;
  let group: Group | undefined;
  afterAll(async () => {
    await server?.close();
    await group?.stop();
  });

  it("is pulled by one of them at a time", async () => {
    if (onPostgres) {
      group = await startGroup(3, () => ({ MESH_SYNC_TICK_SECONDS: "1" }));
      await race(group);
    } else {
      server = await startTestServer({ MESH_SYNC_TICK_SECONDS: "1" });
      await race(clusterOf(server));
    }
  }, 120_000);
});
