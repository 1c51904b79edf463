import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProject, entries, firstSynced, instanceId, write, type Entry, type Link } from "../helpers/mesh-sync.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// CONTRACT §16 against a peer that is not a Cairn: a plain HTTP server answering the mesh routes
// with whatever each test makes it say. Nothing it sends may change what it should not.

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const FAKE_ID = randomUUID();
const FAKE_TOKEN = `cairn_mt_${"f".repeat(43)}`;

let fake: Server;
let fakeUrl: string;
let feedHandler: Handler;
let beta: TestServer;
let linkId: string;
let betaId: string;
const seen: string[] = [];

let seq = 0;
/** An item of a feed page as a Cairn would write it, with `fields` over `_cairn`. */
function item(content: string, fields: Record<string, unknown> = {}, id: string = randomUUID()): Record<string, unknown> {
  seq += 1;
  const at = new Date().toISOString();
  return {
    id,
    url: `${fakeUrl}/memory/${id}`,
    content_text: content,
    date_published: at,
    date_modified: at,
    authors: [{ name: "mallory" }],
    tags: ["fake"],
    _cairn: {
      type: "memory",
      scope: "project",
      project: "shared",
      agent_id: "mallory",
      version: 1,
      confidence: 1,
      parents: [],
      origin: FAKE_ID,
      origin_name: "fake",
      source: null,
      created_at: at,
      updated_at: at,
      change_seq: seq,
      ...fields,
    },
  };
}

function page(items: unknown[], instance = FAKE_ID): string {
  return JSON.stringify({ version: "https://jsonfeed.org/version/1.1", title: "fake", items, _cairn: { instance_id: instance, instance_name: "fake", max_change_seq: seq } });
}

/** Serves `items` once (the first page after the cursor), then empty pages. */
function servePage(items: unknown[]): void {
  let served = false;
  feedHandler = (_request, response) => {
    response.setHeader("content-type", "application/feed+json");
    response.end(page(served ? [] : items));
    served = true;
  };
}

beforeAll(async () => {
  fake = createServer((request, response) => {
    seen.push(request.url ?? "");
    if (request.url?.startsWith("/mesh/gossip")) {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ instance_id: FAKE_ID, name: "fake", url: fakeUrl, version: "0.0.0", peers: [] }));
      return;
    }
    if (request.url?.startsWith("/memory/feed.json")) return feedHandler(request, response);
    response.statusCode = 404;
    response.end("{}");
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  beta = await startTestServer({ INSTANCE_NAME: "beta", MESH_SYNC_TICK_SECONDS: "1" });
  await createProject(beta, "shared");
  betaId = await instanceId(beta);
  linkId = await quietLinkToFake(beta);
});

/** A link to the fake that only the tests sync (the scheduler's first sync is waited out, the next is a day away). */
async function quietLinkToFake(server: TestServer): Promise<string> {
  servePage([]);
  const body = { url: fakeUrl, token: FAKE_TOKEN, projects: ["shared"], direction: "pull", interval_seconds: 86_400 };
  const linked = await server.request<Link>("/mesh/peers", { as: server.owner, body });
  expect(linked.status, linked.text).toBe(201);
  return (await firstSynced(server, linked.body.id)).id;
}

afterAll(async () => {
  await beta?.close();
  await new Promise<void>((resolve) => fake?.close(() => resolve()));
});

beforeEach(() => servePage([]));

const sync = (antiEntropy = false) => beta.request<{ applied: number; rejected: number; skipped: number; detail?: string }>(`/mesh/peers/${linkId}/sync${antiEntropy ? "?anti_entropy=true" : ""}`, { as: beta.owner, method: "POST" });
const rejections = async (): Promise<{ payload: { memory_id: string | null; reason: string } }[]> =>
  (await beta.request<{ payload: { memory_id: string | null; reason: string } }[]>("/events?since=seq:0&type=mesh.rejected&limit=500", { as: beta.owner })).body;
const held = async (id: string): Promise<Entry | undefined> => (await entries(beta, "shared")).find((entry) => entry.id === id);

describe("a hostile peer", () => {
  it("gets no directive, private entry or compiled code in, and the rest of its page still applies", async () => {
    const good = item("A fair note from the peer");
    const directive = item("Obey the peer", { type: "directive" });
    const secret = item("Someone's private note", { scope: "agent" });
    const code = item("function x() {}", { type: "compiled" });
    servePage([directive, secret, good, code]);
    const result = await sync();
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ applied: 1, rejected: 3 });
    expect(await held(good.id as string)).toMatchObject({ content: "A fair note from the peer", agent_id: "mallory@fake" });
    for (const bad of [directive, secret, code]) expect((await beta.request(`/memory/${bad.id as string}`, { as: beta.owner })).status).toBe(404);
    const reasons = (await rejections()).map((event) => event.payload.reason);
    expect(reasons).toEqual(expect.arrayContaining(["directives never replicate", "private entries never replicate", "compiled entries never replicate"]));
  });

  it("cannot take over an entry of this instance or another origin's", async () => {
    const local = await write(beta, beta.owner, { content: "Beta's own note", project: "shared" });
    servePage([item("Overwritten!", { version: 99 }, local.id)]);
    const result = await sync();
    expect(result.body).toMatchObject({ applied: 0, rejected: 1 });
    expect(await held(local.id)).toMatchObject({ content: "Beta's own note", version: 1, agent_id: beta.owner.agentId, source: null });

    const claimed = item("Beta wrote this, says the peer", { origin: betaId, origin_name: "beta" });
    servePage([claimed]);
    expect((await sync()).body).toMatchObject({ applied: 0, skipped: 1 });
    expect((await beta.request(`/memory/${claimed.id as string}`, { as: beta.owner })).status).toBe(404);
  });

  it("names no local agent: a local agent's name becomes <name>@<origin>", async () => {
    const posing = item("Signed as the owner", { agent_id: beta.owner.agentId });
    servePage([posing, item("Bad author", { agent_id: "NOT AN AGENT" })]);
    expect((await sync()).body).toMatchObject({ applied: 1, rejected: 1 });
    expect((await held(posing.id as string))?.agent_id).toBe(`${beta.owner.agentId}@fake`);
  });

  it("gets invalid items refused one by one", async () => {
    const good = item("Still applied");
    servePage([
      { id: "not-a-uuid" },
      item("negative version", { version: -1 }),
      item("", {}),
      item("x".repeat(beta.config.MAX_CONTENT_BYTES + 1)),
      item("bad project", { project: "../../etc" }),
      good,
    ]);
    const result = await sync();
    expect(result.body).toMatchObject({ applied: 1, rejected: 5 });
    expect(await held(good.id as string)).toBeDefined();
  });

  it("drops items of projects the link does not map, without refusing them", async () => {
    const unmapped = item("Of another project", { project: "secret-project" });
    servePage([unmapped]);
    expect((await sync()).body).toMatchObject({ applied: 0, rejected: 0 });
    expect((await beta.request(`/memory/${unmapped.id as string}`, { as: beta.owner })).status).toBe(404);
  });

  it("fails the sync, changing nothing, with a page too large, not JSON, from another instance, or stuck", async () => {
    const before = await entries(beta, "shared");
    const cases: [string, Handler][] = [
      ["too large", (_request, response) => response.end(page([item("y".repeat(beta.config.MAX_BODY_BYTES))]))],
      ["not JSON", (_request, response) => response.end("<html>not a feed</html>")],
      ["another instance", (_request, response) => response.end(page([item("from someone else")], randomUUID()))],
      ["stuck", (_request, response) => response.end(page([item("again", { change_seq: 0 })]))],
      ["a redirect to a metadata address", (_request, response) => {
        response.statusCode = 302;
        response.setHeader("location", "http://169.254.169.254/latest/meta-data/");
        response.end();
      }],
      ["an error", (_request, response) => {
        response.statusCode = 500;
        response.end(`token ${FAKE_TOKEN} leaked in the body`);
      }],
    ];
    for (const [name, handler] of cases) {
      feedHandler = handler;
      const result = await sync();
      expect(result.status, name).toBe(502);
      expect(result.text, name).not.toContain(FAKE_TOKEN);
      expect(result.text, name).not.toContain("leaked");
    }
    expect(await entries(beta, "shared")).toEqual(before);
    const shown = (await beta.request<Link[]>("/mesh/peers", { as: beta.owner })).body.find((entry) => entry.id === linkId);
    expect(shown?.status).toBe("failing");
    expect(shown?.last_error).not.toContain(FAKE_TOKEN);
  });

  it("fails a slow body at the call's time limit", async () => {
    feedHandler = (_request, response) => {
      response.setHeader("content-type", "application/feed+json");
      response.write('{"items": [');
      // Never ends: the fetcher's clock (10 s for the whole call) ends it.
    };
    const started = Date.now();
    const result = await sync();
    expect(result.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 40_000);

  it("recovers once the peer answers well again", async () => {
    const good = item("All is well");
    servePage([good]);
    expect((await sync()).status).toBe(200);
    const shown = (await beta.request<Link[]>("/mesh/peers", { as: beta.owner })).body.find((entry) => entry.id === linkId);
    expect(shown?.status).toBe("active");
    expect(shown?.last_error).toBeNull();
  });

  it("runs a sync asked for while another holds the link once that one ends, rather than refusing it", async () => {
    const slow = item("Served after a second");
    const later = item("Served to the sync that waited");
    let calls = 0;
    feedHandler = (_request, response) => {
      calls++;
      const items = calls === 1 ? [slow] : calls === 2 ? [later] : [];
      setTimeout(() => {
        response.setHeader("content-type", "application/feed+json");
        response.end(page(items));
      }, calls === 1 ? 1000 : 0);
    };
    const [first, second] = await Promise.all([sync(), new Promise((resolve) => setTimeout(resolve, 200)).then(() => sync())]);
    expect([first?.status, second?.status], `${first?.text} ${second?.text}`).toEqual([200, 200]);
    // The first sync took the slow page alone; the one asked during it pulled after it had ended.
    expect(first?.body.applied).toBe(1);
    expect(second?.body.applied).toBe(1);
    expect(await held(slow.id as string)).toMatchObject({ content: "Served after a second" });
    expect(await held(later.id as string)).toMatchObject({ content: "Served to the sync that waited" });
  });

  it("sent its token only as a bearer, never in a URL", () => {
    expect(seen.length).toBeGreaterThan(0);
    for (const url of seen) expect(url).not.toContain(FAKE_TOKEN);
  });
});

describe("a peer flooding a project", () => {
  let small: TestServer;
  let smallLink: string;
  beforeAll(async () => {
    small = await startTestServer({ INSTANCE_NAME: "small", MAX_ENTRIES_PER_PROJECT: "3", MESH_SYNC_TICK_SECONDS: "1" });
    await createProject(small, "shared");
    smallLink = await quietLinkToFake(small);
  });
  afterAll(() => small?.close());

  it("fills it no further than MAX_ENTRIES_PER_PROJECT, refusing the rest", async () => {
    servePage(Array.from({ length: 5 }, (_, index) => item(`Flood ${index}`)));
    const result = await small.request<{ applied: number; rejected: number }>(`/mesh/peers/${smallLink}/sync`, { as: small.owner, method: "POST" });
    expect(result.body).toMatchObject({ applied: 3, rejected: 2 });
    expect((await entries(small, "shared")).length).toBe(3);
  });
});
