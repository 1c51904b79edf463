import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord as MeshEvent } from "../../src/wire/events.js";
import type { JsonFeedItem as FeedItem } from "../../src/wire/memory-feed.js";
import type { MeshGossip as Gossip } from "../../src/wire/mesh.js";
import { onPostgres, withDatabase } from "../helpers/database.js";
import { ensureProjects, heldToken, linkPeers, linksOf, mintToken, startPeers, unlinkAll, type MeshLink, type MeshTokenCreated, type Peer } from "../helpers/mesh.js";
import type { Credentials, ErrorBody, Response } from "../helpers/server.js";
import { openStream, type OpenStream } from "../helpers/stream.js";
import { eventually } from "../helpers/wait.js";
import { closedUrl as closedPort } from "../helpers/ports.js";

// CONTRACT §16 (tokens, peers, handshake, gossip) between real `cairn serve` processes on loopback,
// on either backend. Each test makes its own projects and tokens; the links it makes are removed
// after it, so none sees another's.

let peers: Peer[] = [];
let a: Peer;
let b: Peer;
let c: Peer;

beforeAll(async () => {
  // Gossip every 2 s instead of 5 min; request lines logged, so the secrets test reads them.
  peers = await startPeers(3, { MESH_GOSSIP_SECONDS: "2", LOG_LEVEL: "info" });
  [a, b, c] = peers as [Peer, Peer, Peer];
}, 120_000);

afterAll(async () => {
  await Promise.all(peers.map((peer) => peer.close()));
});

afterEach(async () => {
  await unlinkAll(peers);
});

/** Every event `as` may see on `peer` of `type` (exact, or a family such as `mesh.*`; none: all), page by page. */
async function eventsOf(peer: Peer, as: Credentials, type = "mesh.*"): Promise<MeshEvent[]> {
  const all: MeshEvent[] = [];
  for (let since = 0; ; ) {
    const response = await peer.request<MeshEvent[]>(`/events?since=seq:${since}&limit=500${type ? `&type=${type}` : ""}`, { as });
    expect(response.status, response.text).toBe(200);
    all.push(...response.body);
    const last = response.body.at(-1);
    if (!last || response.body.length < 500) return all;
    since = last.seq;
  }
}

const unknownToken = (): string => `cairn_mt_${"A".repeat(43)}`;

describe("mesh tokens", () => {
  it("shows a token once, lists it by prefix only, and revokes it for the very next request", async () => {
    const created = await mintToken(a, ["tok-once"], { capabilities: ["gossip"] });
    expect(created.token).toMatch(/^cairn_mt_[A-Za-z0-9_-]{43}$/);
    expect(created.capabilities).toEqual(["pull", "gossip"]);
    const listed = await a.asOwner<(MeshTokenCreated & { prefix: string; revoked_at: string | null })[]>("/mesh/tokens?limit=200");
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(created.token);
    expect(listed.text).not.toContain(created.token.slice(9));
    const mine = listed.body.find((token) => token.id === created.id);
    expect(mine).not.toHaveProperty("token");
    expect(created.token.startsWith(mine?.prefix ?? "-")).toBe(true);

    expect((await a.withToken(created.token, "/mesh/gossip")).status).toBe(200);
    expect((await a.asOwner(`/mesh/tokens/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await a.withToken(created.token, "/mesh/gossip")).status).toBe(401);
    expect((await a.request(`/mesh/gossip?mesh_token=${created.token}`)).status).toBe(401);
    const after = await a.asOwner<{ id: string; revoked_at: string | null }[]>("/mesh/tokens?limit=200");
    expect(after.body.find((token) => token.id === created.id)?.revoked_at).toEqual(expect.any(String));
    expect((await a.asOwner(`/mesh/tokens/${created.id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses an empty scope, a project that does not exist and unbounded input with 422", async () => {
    await ensureProjects(a, ["tok-scope"]);
    const empty = await a.asOwner<ErrorBody>("/mesh/tokens", { body: { label: "nothing", projects: [] } });
    expect(empty.status).toBe(422);
    expect((await a.asOwner("/mesh/tokens", { body: { label: "missing", projects: ["no-such-project"] } })).status).toBe(422);
    expect((await a.asOwner("/mesh/tokens", { body: { label: "x".repeat(101), projects: ["tok-scope"] } })).status).toBe(422);
    expect((await a.asOwner("/mesh/tokens", { body: { label: "caps", projects: ["tok-scope"], capabilities: ["admin"] } })).status).toBe(422);
    expect((await a.asOwner("/mesh/tokens", { body: { label: "past", projects: ["tok-scope"], expires_at: "2001-01-01T00:00:00Z" } })).status).toBe(422);

    const created = await mintToken(a, ["tok-scope"]);
    const cleared = await a.asOwner<ErrorBody>(`/mesh/tokens/${created.id}`, { method: "PATCH", body: { projects: [] } });
    expect(cleared.status).toBe(422);
    const widened = await a.asOwner<{ projects: string[]; include_global: boolean; label: string }>(`/mesh/tokens/${created.id}`, {
      method: "PATCH",
      body: { projects: [], include_global: true, label: "global only" },
    });
    expect(widened.status, widened.text).toBe(200);
    expect(widened.body).toMatchObject({ projects: [], include_global: true, label: "global only" });
    expect((await a.asOwner(`/mesh/tokens/${crypto.randomUUID()}`, { method: "PATCH", body: { label: "x" } })).status).toBe(404);
  });

  it("is the owner's alone: an agent is refused every mesh administration route", async () => {
    const agent = await a.agent(`mesh-agent-${Date.now().toString(36)}`);
    const created = await mintToken(a, ["tok-owner"]);
    const refused = [
      await a.request("/mesh/tokens", { as: agent, body: { label: "mine", projects: ["tok-owner"] } }),
      await a.request("/mesh/tokens", { as: agent }),
      await a.request(`/mesh/tokens/${created.id}`, { as: agent, method: "DELETE" }),
      await a.request("/mesh/peers", { as: agent }),
      await a.request("/mesh/peers", { as: agent, body: { url: b.url, token: unknownToken() } }),
      await a.request("/mesh/gossip", { as: agent }),
      await a.request("/mesh/link-discovered", { as: agent, body: { instance_id: c.instanceId, token: unknownToken() } }),
    ];
    expect(refused.map((response) => response.status)).toEqual(refused.map(() => 403));
  });

  it("is accepted on the feed, merkle, gossip and handshake routes only", async () => {
    const { token } = await mintToken(a, ["tok-routes"]);
    const bearer = (path: string, options: { method?: string; body?: unknown } = {}) => a.withToken(token, path, options);
    expect((await bearer("/memory/feed.json")).status).toBe(200);
    expect((await bearer("/memory/feed.atom")).status).toBe(200);
    expect((await bearer("/memory/merkle?project=tok-routes")).status).toBe(200);
    expect((await bearer("/mesh/gossip")).status).toBe(200);
    expect((await a.request(`/memory/feed.json?mesh_token=${token}`)).status).toBe(200);
    expect((await a.request(`/mesh/gossip?mesh_token=${token}`)).status).toBe(200);

    const elsewhere = [
      await bearer("/memory"),
      await bearer("/memory", { body: { content: "a peer writing here", project: "tok-routes" } }),
      await bearer("/memory/search?q=anything"),
      await bearer("/events?since=seq:0"),
      await bearer("/mesh/tokens"),
      await bearer("/mesh/peers"),
      await bearer("/agents/me"),
      await bearer("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } } }),
    ];
    expect(elsewhere.map((response) => response.status)).toEqual(elsewhere.map(() => 403));
    // In the query it is read on the routes that take credentials there, and nowhere else.
    expect((await a.request(`/memory?mesh_token=${token}`)).status).toBe(401);
  });

  it("reads through the feed only the shared memory, doc and skill entries of its projects", async () => {
    await ensureProjects(a, ["feed-mine", "feed-other"]);
    const write = async (body: Record<string, unknown>): Promise<string> => {
      const response = await a.asOwner<{ id: string }>("/memory", { body: { allow_duplicate: true, ...body } });
      expect(response.status, response.text).toBe(201);
      return response.body.id;
    };
    const suffix = Date.now().toString(36);
    const shared = [
      await write({ content: `Shared memory ${suffix}`, project: "feed-mine" }),
      await write({ content: `Shared doc ${suffix}`, project: "feed-mine", type: "doc" }),
      await write({ content: `Shared skill ${suffix}`, project: "feed-mine", type: "skill" }),
    ];
    const global = await write({ content: `Global note ${suffix}`, project: null });
    const never = [
      await write({ content: `A directive ${suffix}`, project: "feed-mine", type: "directive" }),
      await write({ content: `A private note ${suffix}`, project: "feed-mine", scope: "agent" }),
      await write({ content: `Another project ${suffix}`, project: "feed-other" }),
    ];
    const unit = { path: "lib/mesh.ts", symbol: `mesh${suffix}`, kind: "function", lang: "typescript", start_line: 1, end_line: 3, sha: "b".repeat(64), description: "function mesh(): void", deps: [] };
    const compiled = await a.asOwner<{ memory_ids: string[] }>("/compile", { body: { project: "feed-mine", units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);
    never.push(...compiled.body.memory_ids);

    const idsFor = async (token: string, query = ""): Promise<string[]> => {
      const response = await a.withToken<{ items: FeedItem[] }>(token, `/memory/feed.json?limit=500${query}`);
      expect(response.status, response.text).toBe(200);
      for (const item of response.body.items) expect(item._cairn.scope).toBe("project");
      return response.body.items.map((item) => item.id);
    };
    const narrow = await mintToken(a, ["feed-mine"]);
    const seen = await idsFor(narrow.token);
    expect(seen).toEqual(expect.arrayContaining(shared));
    for (const id of [...never, global]) expect(seen).not.toContain(id);
    expect((await a.withToken(narrow.token, "/memory/feed.json?project=feed-other")).status).toBe(404);

    const withGlobal = await mintToken(a, ["feed-mine"], { include_global: true });
    const wider = await idsFor(withGlobal.token);
    expect(wider).toEqual(expect.arrayContaining([...shared, global]));
    for (const id of never) expect(wider).not.toContain(id);
  });
});

describe("linking peers", () => {
  it("links two instances both ways: each side holds a link to the other, and the token minted back is scoped to the mapping", async () => {
    const { link, back, token } = await linkPeers(a, b, ["both-x", { remote: "both-y", local: "both-y-here" }], "both");
    expect(link).toMatchObject({ peer_instance_id: b.instanceId, peer_name: "peer-b", url: b.url, direction: "both", status: "active" });
    expect(link.projects).toEqual([{ remote: "both-x", local: "both-x" }, { remote: "both-y", local: "both-y-here" }]);
    expect(link.token_hint.startsWith("cairn_mt_")).toBe(true);
    expect(token.token).not.toContain(link.token_hint.replace("…", ""));
    expect(back).toMatchObject({ peer_instance_id: a.instanceId, peer_name: "peer-a", url: a.url, direction: "pull", status: "active", created_by: `mesh:${token.id}` });
    expect(back?.projects).toEqual([{ remote: "both-x", local: "both-x" }, { remote: "both-y-here", local: "both-y" }]);

    const minted = (await a.asOwner<{ id: string; link_id: string | null; projects: string[]; capabilities: string[]; revoked_at: string | null }[]>("/mesh/tokens?limit=200")).body.find(
      (candidate) => candidate.link_id === link.id,
    );
    expect(minted).toMatchObject({ projects: ["both-x", "both-y-here"], capabilities: ["pull"], revoked_at: null });
    // What b holds for its link back is that token: it opens a's gossip, with that scope.
    const held = await heldToken(b, back?.id ?? "");
    const gossip = await a.withToken<Gossip>(held, "/mesh/gossip");
    expect(gossip.status).toBe(200);
    expect(gossip.body.grant).toEqual({ projects: ["both-x", "both-y-here"], include_global: false });

    const linked = (peer: Peer) => eventsOf(peer, peer.owner, "mesh.peer.linked");
    expect((await linked(a)).map((event) => event.payload)).toContainEqual({ link_id: link.id, peer_instance_id: b.instanceId, peer_name: "peer-b", direction: "both", via: "request" });
    expect((await linked(b)).map((event) => event.payload)).toContainEqual({ link_id: back?.id, peer_instance_id: a.instanceId, peer_name: "peer-a", direction: "pull", via: "handshake" });
  });

  it("links by default every project the peer's token grants, under the same ids", async () => {
    await ensureProjects(a, ["dflt-1", "dflt-2"]);
    const token = await mintToken(b, ["dflt-1", "dflt-2"]);
    const response = await a.asOwner<MeshLink>("/mesh/peers", { body: { url: `${b.url}/`, token: token.token, direction: "pull" } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.url).toBe(b.url);
    expect(response.body.projects).toEqual([{ remote: "dflt-1", local: "dflt-1" }, { remote: "dflt-2", local: "dflt-2" }]);
    // A project the token does not grant is refused rather than pulled for nothing.
    await unlinkAll([a]);
    const wider = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: b.url, token: token.token, projects: ["dflt-1", "dflt-3"], direction: "pull" } });
    expect(wider.status).toBe(422);
  });

  it("refuses a rejected token (422), an unreachable peer (502), itself (422) and a second link to one peer (409 naming it)", async () => {
    await ensureProjects(a, ["refusals"]);
    const rejected = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: b.url, token: unknownToken(), projects: ["refusals"] } });
    expect(rejected.status).toBe(422);
    expect(rejected.body.detail).toBe("peer rejected the token");

    const nowhere = await closedPort();
    const unreachable = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: `${nowhere}/cairn`, token: unknownToken(), projects: ["refusals"] } });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.code).toBe("UPSTREAM_ERROR");
    expect(unreachable.body.detail).toContain(`${nowhere}/cairn/mesh/gossip`);

    const own = await mintToken(a, ["refusals"]);
    const itself = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: a.url, token: own.token, projects: ["refusals"] } });
    expect(itself.status).toBe(422);

    for (const url of [`${b.url}/?x=1`, `${b.url}#top`, b.url.replace("http://", "http://user:pw@"), b.url.replace("http://", "ftp://")]) {
      expect((await a.asOwner("/mesh/peers", { body: { url, token: unknownToken() } })).status, url).toBe(422);
    }
    const missingHere = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: b.url, token: (await mintToken(b, ["only-there"])).token, direction: "pull" } });
    expect(missingHere.status).toBe(422);

    const { link } = await linkPeers(a, b, ["refusals"], "pull");
    const again = await a.asOwner<ErrorBody & { id: string }>("/mesh/peers", { body: { url: b.url, token: (await mintToken(b, ["refusals"])).token, projects: ["refusals"] } });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(link.id);
    expect(again.body.id).toBe(link.id);
  });

  it("keeps nothing when the peer refuses the handshake: no link, the minted token revoked", async () => {
    await ensureProjects(a, ["no-hs"]);
    const token = await mintToken(b, ["no-hs"], { capabilities: ["pull", "gossip"] });
    const response = await a.asOwner<ErrorBody>("/mesh/peers", { body: { url: b.url, token: token.token, projects: ["no-hs"] } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toContain("handshake");
    expect(await linksOf(a)).toEqual([]);
    expect((await linksOf(b)).filter((link) => link.peer_instance_id === a.instanceId)).toEqual([]);
    const minted = (await a.asOwner<{ projects: string[]; link_id: string | null; revoked_at: string | null; created_at: string }[]>("/mesh/tokens?limit=200")).body.filter(
      (candidate) => candidate.link_id !== null && candidate.projects.includes("no-hs"),
    );
    expect(minted.length).toBe(1);
    expect(minted[0]?.revoked_at).toEqual(expect.any(String));
    // The same request with a token that may link back succeeds: nothing of the first is in its way.
    expect((await linkPeers(a, b, ["no-hs"], "both")).back).not.toBeNull();
  });

  it("keeps links and tokens across a restart of the peer, which answers at the same URL", async () => {
    const { link, back, token } = await linkPeers(c, b, ["restart-x"], "both");
    await b.stop();
    expect((await c.asOwner<{ status: string; detail: string }>("/mesh/peers", { body: { url: b.url, token: token.token } })).status).toBe(502);
    await b.start();
    expect((await b.request<{ instance_id: string }>("/health")).body.instance_id).toBe(b.instanceId);
    expect((await b.withToken(token.token, "/mesh/gossip")).status).toBe(200);
    expect((await linksOf(b)).map((held) => held.id)).toContain(back?.id);
    expect((await linksOf(c)).map((held) => held.id)).toContain(link.id);
  });

  it("unlinking revokes the token minted for the peer: its next gossip with it is refused", async () => {
    const { link, back } = await linkPeers(a, b, ["unlink-x"], "both");
    const held = await heldToken(b, back?.id ?? "");
    expect((await a.withToken(held, "/mesh/gossip")).status).toBe(200);
    expect((await a.asOwner(`/mesh/peers/${link.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await a.withToken(held, "/mesh/gossip")).status).toBe(401);
    expect((await a.asOwner(`/mesh/peers/${link.id}`, { method: "DELETE" })).status).toBe(404);
    const unlinked = await eventsOf(a, a.owner, "mesh.peer.unlinked");
    expect(unlinked.map((event) => event.payload)).toContainEqual({ link_id: link.id, peer_instance_id: b.instanceId });
  });

  it("pauses and resumes a link, with a status event only when the shown status changes, to owners only", async () => {
    const agent = await a.agent(`watcher-${Date.now().toString(36)}`);
    const agentStream = openStream(a, agent);
    const ownerStream = openStream(a, a.owner);
    await Promise.all([agentStream.opened, ownerStream.opened]);
    const { link } = await linkPeers(a, c, ["pause-x"], "pull");
    const patch = (body: Record<string, unknown>) => a.asOwner<MeshLink & ErrorBody>(`/mesh/peers/${link.id}`, { method: "PATCH", body });
    expect((await patch({ paused: true })).body.status).toBe("paused");
    expect((await patch({ paused: true, label: "resting" })).body).toMatchObject({ status: "paused", label: "resting" });
    expect((await patch({ interval_seconds: 600, max_confidence: 0.5 })).body).toMatchObject({ interval_seconds: 600, max_confidence: 0.5, status: "paused" });
    const resumed = await patch({ paused: false, label: null });
    expect(resumed.body).toMatchObject({ status: "active", label: null });
    expect((await patch({ interval_seconds: 10 })).status).toBe(422);
    expect((await patch({ projects: [{ remote: "pause-x", local: "not-here" }] })).status).toBe(422);
    expect((await a.asOwner(`/mesh/peers/${crypto.randomUUID()}`, { method: "PATCH", body: { paused: true } })).status).toBe(404);

    const statuses = (await eventsOf(a, a.owner, "mesh.peer.status")).filter((event) => event.payload.link_id === link.id);
    expect(statuses.map((event) => event.payload)).toEqual([
      { link_id: link.id, status: "paused", previous: "active" },
      { link_id: link.id, status: "active", previous: "paused" },
    ]);
    expect(await eventsOf(a, agent)).toEqual([]);
    // Live too: the owner's stream has the link's events, an agent's stream none of them.
    const marker = `paused-${link.id}`;
    expect((await a.request("/events", { as: agent, body: { type: "test.sentinel", payload: { marker } } })).status).toBe(201);
    const reached = (stream: OpenStream) => eventually(() => stream.received.some((event) => event.type === "test.sentinel" && event.payload.marker === marker), 30_000);
    try {
      expect(await reached(agentStream)).toBe(true);
      expect(await reached(ownerStream)).toBe(true);
      expect(agentStream.received.filter((event) => event.type.startsWith("mesh."))).toEqual([]);
      expect(ownerStream.received.filter((event) => event.type === "mesh.peer.status" && event.payload.link_id === link.id).length).toBe(2);
      expect(ownerStream.received.some((event) => event.type === "mesh.peer.linked" && event.payload.link_id === link.id)).toBe(true);
    } finally {
      agentStream.close();
      ownerStream.close();
    }
  });
});

describe("the handshake", () => {
  it("is refused without a bearer mesh token holding the handshake capability (403)", async () => {
    await ensureProjects(b, ["hs-cap"]);
    const body = { instance_id: a.instanceId, name: "peer-a", url: a.url, token: (await mintToken(a, ["hs-cap"])).token, projects: ["hs-cap"] };
    const agent = await b.agent(`hs-agent-${Date.now().toString(36)}`);
    expect((await b.request("/mesh/handshake", { as: agent, body })).status).toBe(403);
    expect((await b.asOwner("/mesh/handshake", { body })).status).toBe(403);
    const pullOnly = await mintToken(b, ["hs-cap"], { capabilities: ["pull", "gossip"] });
    expect((await b.withToken(pullOnly.token, "/mesh/handshake", { body })).status).toBe(403);
    expect((await b.request(`/mesh/handshake?mesh_token=${pullOnly.token}`, { body })).status).toBe(401);
    expect((await linksOf(b)).filter((link) => link.peer_instance_id === a.instanceId)).toEqual([]);
  });

  it("links back only within the presenting token, whatever the caller asks for", async () => {
    const presenting = await mintToken(b, ["hs-in"]);
    await ensureProjects(b, ["hs-out"]);
    const given = await mintToken(a, ["hs-in", "hs-out"]);
    const handshake = (projects: unknown) =>
      b.withToken<{ link_id: string; projects: { remote: string; local: string }[]; created: boolean; instance_id: string } & ErrorBody>(presenting.token, "/mesh/handshake", {
        body: { instance_id: a.instanceId, name: "peer-a", url: a.url, token: given.token, projects },
      });
    expect((await handshake(["hs-out"])).status).toBe(403);
    const first = await handshake(["hs-in", "hs-out"]);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ instance_id: b.instanceId, created: true, projects: [{ remote: "hs-in", local: "hs-in" }] });
    expect(first.text).not.toContain("cairn_mt_");
    const link = (await linksOf(b)).find((candidate) => candidate.id === first.body.link_id);
    expect(link).toMatchObject({ peer_instance_id: a.instanceId, direction: "pull", projects: [{ remote: "hs-in", local: "hs-in" }] });

    // Again: the link is refreshed, not doubled, and not widened.
    const again = await handshake([{ remote: "hs-in", local: "hs-in" }, "hs-out"]);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ link_id: first.body.link_id, created: false, projects: [{ remote: "hs-in", local: "hs-in" }] });
    expect((await linksOf(b)).filter((candidate) => candidate.peer_instance_id === a.instanceId).length).toBe(1);
  });

  it("verifies the caller by calling it back: another instance's id (403), a token it rejects (422), a URL that does not answer (502)", async () => {
    const presenting = await mintToken(b, ["hs-verify"]);
    const given = await mintToken(a, ["hs-verify"]);
    const handshake = (body: Record<string, unknown>) =>
      b.withToken<ErrorBody>(presenting.token, "/mesh/handshake", { body: { instance_id: a.instanceId, name: "peer-a", url: a.url, token: given.token, ...body } });
    const impostor = await handshake({ instance_id: c.instanceId, name: "peer-c" });
    expect(impostor.status).toBe(403);
    expect(impostor.body.detail).toContain("answers as another instance");
    const rejected = await handshake({ token: unknownToken() });
    expect(rejected.status).toBe(422);
    expect(rejected.body.detail).toBe("peer rejected the token");
    expect((await handshake({ url: await closedPort() })).status).toBe(502);
    expect((await handshake({ instance_id: b.instanceId })).status).toBe(422);
    expect((await linksOf(b)).filter((link) => link.peer_instance_id === a.instanceId || link.peer_instance_id === c.instanceId)).toEqual([]);
  });
});

describe("gossip", () => {
  it("tells a peer who this instance is and which of its peers share a project with the token", async () => {
    await linkPeers(a, b, ["gsp-shared"], "pull");
    await linkPeers(a, c, ["gsp-other"], "pull");
    const token = await mintToken(a, ["gsp-shared"]);
    const told = await a.withToken<Gossip>(token.token, "/mesh/gossip");
    expect(told.status).toBe(200);
    expect(told.body).toMatchObject({ instance_id: a.instanceId, name: "peer-a", url: a.url });
    expect(told.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(told.body.peers).toEqual([{ instance_id: b.instanceId, name: "peer-b", url: b.url }]);
    expect(told.body.grant).toEqual({ projects: ["gsp-shared"], include_global: false });
    expect(told.text).not.toContain("cairn_mt_");
    const owner = await a.asOwner<Gossip>("/mesh/gossip");
    expect(owner.body.peers.map((peer) => peer.instance_id).sort()).toEqual([b.instanceId, c.instanceId].sort());
    expect(owner.body.grant).toBeNull();
  });

  it("suggests the peers of peers and links one on request, never itself or a peer already linked", async () => {
    await linkPeers(b, c, ["gsp-ring"], "pull");
    await linkPeers(a, b, ["gsp-ring"], "both");
    const discovered = () => withDatabase(a.dataDir, (db) => db.all<{ instance_id: string; url: string; via: string }>("SELECT instance_id, url, via FROM mesh_discovered"));
    expect(await eventually(async () => (await discovered()).some((row) => row.instance_id === c.instanceId), 30_000)).toBe(true);
    const rows = await discovered();
    expect(rows.find((row) => row.instance_id === c.instanceId)).toEqual({ instance_id: c.instanceId, url: c.url, via: `gossip:${b.instanceId}` });
    expect(rows.map((row) => row.instance_id)).not.toContain(a.instanceId);
    expect(rows.map((row) => row.instance_id)).not.toContain(b.instanceId);

    expect((await a.asOwner("/mesh/link-discovered", { body: { instance_id: crypto.randomUUID(), token: unknownToken() } })).status).toBe(404);
    const token = await mintToken(c, ["gsp-ring"]);
    const linked = await a.asOwner<MeshLink>("/mesh/link-discovered", { body: { instance_id: c.instanceId, token: token.token, direction: "pull" } });
    expect(linked.status, linked.text).toBe(201);
    expect(linked.body).toMatchObject({ peer_instance_id: c.instanceId, url: c.url, direction: "pull", projects: [{ remote: "gsp-ring", local: "gsp-ring" }] });
  });
});

describe("secrets", () => {
  /** Every text value of every table of `peer`'s database, each row as one string. */
  async function databaseText(peer: Peer): Promise<string[]> {
    return withDatabase(peer.dataDir, async (db) => {
      if (onPostgres) {
        const tables = await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'");
        const rows: string[] = [];
        for (const { name } of tables) rows.push(...(await db.all<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`)).map((row) => row.row));
        return rows;
      }
      const tables = await db.all<{ name: string; sql: string | null }>("SELECT name, sql FROM sqlite_master WHERE type = 'table'");
      const rows: string[] = [];
      for (const { name, sql } of tables) {
        if (sql?.toUpperCase().startsWith("CREATE VIRTUAL TABLE")) continue;
        for (const row of await db.all(`SELECT * FROM "${name}"`)) {
          rows.push(Object.values(row).map((value) => (Buffer.isBuffer(value) ? value.toString("latin1") : String(value))).join("\u0001"));
        }
      }
      return rows;
    });
  }

  it("never puts a token in a log line, an event, an error or a database column", async () => {
    const answers: Response[] = [];
    const { link, back, token } = await linkPeers(a, b, ["secret-x"], "both");
    const minted = await heldToken(b, back?.id ?? "");
    const given = await mintToken(a, ["secret-x"]);
    answers.push(
      await a.request(`/memory/feed.json?mesh_token=${token.token}`),
      await b.request(`/mesh/gossip?mesh_token=${minted}`),
      await b.request(`/mesh/gossip?mesh_token=${token.token}`),
      await a.asOwner("/mesh/peers", { body: { url: `${await closedPort()}`, token: token.token } }),
      await a.asOwner("/mesh/peers", { body: { url: b.url, token: given.token } }),
      await a.asOwner("/mesh/peers", { body: { url: b.url, token: token.token } }),
      await b.withToken(token.token, "/mesh/handshake", { body: { instance_id: a.instanceId, name: "peer-a", url: a.url, token: given.token.slice(0, -2) + "zz" } }),
      await b.withToken(token.token, "/mesh/handshake", { body: { instance_id: c.instanceId, name: "peer-c", url: a.url, token: minted } }),
      await a.withToken(minted, "/memory"),
      await a.asOwner("/mesh/peers"),
      await a.asOwner("/mesh/tokens?limit=200"),
      await a.asOwner(`/mesh/peers/${link.id}`, { method: "PATCH", body: { paused: true } }),
    );
    expect((await a.asOwner(`/mesh/peers/${link.id}`, { method: "DELETE" })).status).toBe(204);
    const secrets = [token.token, minted, given.token].flatMap((secret) => [secret, secret.slice("cairn_mt_".length)]);
    const places: [string, string[]][] = [
      ["answers", answers.map((answer) => answer.text)],
      ["logs", [a.output(), b.output()]],
      ["events", [JSON.stringify(await eventsOf(a, a.owner, "")), JSON.stringify(await eventsOf(b, b.owner, ""))]],
      ["database a", await databaseText(a)],
      ["database b", await databaseText(b)],
    ];
    expect(a.output()).toContain('"msg":"request"');
    for (const [place, texts] of places) {
      for (const secret of secrets) expect(texts.some((text) => text.includes(secret)), `${place} hold a token`).toBe(false);
    }
  });
});
