import { afterAll, beforeAll, describe, expect } from "vitest";
import type { ResolvedAddress } from "../../src/net/fetch.js";
import { HOST_CASES } from "../fixtures/outbound-hosts.js";
import { startCanary, type Canary } from "../helpers/canary.js";
import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { fixtureDocument } from "../helpers/feed-fixtures.js";
import { it } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// CONTRACT §11 "Outbound calls" as a subscriber meets them (§15): every address rule refused at
// subscription (with or without the test fetch) and at fetch time, and a canary on loopback that
// sees no connection from any of it.

let canary: Canary;
let feeds: FeedServer;
beforeAll(async () => {
  canary = await startCanary();
  feeds = await startFeedServer();
  feeds.route("/feed.xml", { headers: { "content-type": "application/rss+xml" }, body: fixtureDocument("rss-2.0", 2, { name: "rules" }).body });
});
afterAll(async () => {
  await canary.close();
  await feeds.close();
});

/** Names the server resolves through the test's own table: one is public until it is rebound to loopback. */
const names: Record<string, string[]> = { "public.test": ["93.184.215.14"], "evil.test": ["127.0.0.1"], "mixed.test": ["93.184.215.14", "10.0.0.1"], localhost: ["127.0.0.1", "::1"] };
const resolve = (hostname: string): Promise<ResolvedAddress[]> => {
  const answers = names[hostname.toLowerCase()];
  if (!answers) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
  return Promise.resolve(answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
};

async function member(server: TestServer): Promise<Credentials> {
  const alice = await server.agent("alice");
  expect((await server.request("/projects", { as: alice, body: { name: "rules" } })).status).toBe(201);
  return alice;
}

const subscribe = (server: TestServer, as: Credentials, url: string, verify = true) =>
  server.request<ErrorBody & { id: string; last_error: string | null }>(`/feeds${verify ? "" : "?verify=false"}`, { as, body: { url, project: "rules" } });

const refusedHosts = HOST_CASES.filter((host) => host.kind !== "public");

describe("a subscription to a refused address", () => {
  it.override("serverOptions", { resolve });

  it("is refused whatever its spelling, with or without the test fetch, and nothing connects", async ({ server }) => {
    const alice = await member(server);
    expect(refusedHosts.length).toBeGreaterThan(40);
    for (const { host, kind } of refusedHosts) {
      for (const verify of [true, false]) {
        const response = await subscribe(server, alice, `http://${host}:${canary.port}/feed.xml`, verify);
        expect(response.status, `${host} (${kind}) verify=${verify}: ${response.text}`).toBe(422);
        expect(response.body.detail, host).toMatch(/^url not allowed: /);
      }
    }
    for (const url of [
      `http://evil.test:${canary.port}/feed.xml`,
      `http://mixed.test:${canary.port}/feed.xml`,
      `http://localhost:${canary.port}/feed.xml`,
      `http://user:secret@public.test:${canary.port}/feed.xml`,
    ]) {
      const response = await subscribe(server, alice, url);
      expect(response.status, url).toBe(422);
      expect(response.body.detail).toMatch(/^url not allowed: /);
      expect(response.text).not.toContain("secret");
    }
    const scheme = await subscribe(server, alice, `ftp://127.0.0.1:${canary.port}/feed.xml`);
    expect(scheme.status).toBe(422);
    expect((await server.request<unknown[]>("/feeds", { as: alice })).body).toEqual([]);
    expect(canary.connections()).toBe(0);
  });
});

describe("a fetch that turns to a refused address", () => {
  // The fixture server's address (127.0.0.1, in any spelling) is allowed by the allowlist, not by
  // FEEDS_ALLOW_PRIVATE: every other loopback address stays refused.
  it.override("serverEnv", { OUTBOUND_ALLOWLIST: "127.0.0.1" });
  it.override("serverOptions", { resolve });

  it("is refused at the redirect, at subscription and at a later poll", async ({ server }) => {
    const alice = await member(server);
    feeds.route("/moved.xml", { status: 302, headers: { location: `http://[::1]:${canary.port}/feed.xml` } });
    const redirected = await subscribe(server, alice, `${feeds.url}/moved.xml`);
    expect(redirected.status, redirected.text).toBe(422);
    expect(redirected.body.detail).toMatch(/^url not allowed: it redirects to http:\/\/\[::1\]:\d+\/feed\.xml; /);

    feeds.route("/later.xml", { headers: { "content-type": "application/rss+xml" }, body: fixtureDocument("rss-2.0", 2, { name: "later" }).body });
    const feed = await subscribe(server, alice, `${feeds.url}/later.xml`);
    expect(feed.status, feed.text).toBe(201);
    feeds.route("/later.xml", { status: 301, headers: { location: `http://0.0.0.0:${canary.port}/feed.xml` } });
    const polled = await server.request<ErrorBody>(`/feeds/${feed.body.id}/poll`, { as: alice, method: "POST" });
    expect(polled.status).toBe(502);
    const after = await server.request<{ last_error: string }>(`/feeds/${feed.body.id}`, { as: alice });
    expect(after.body.last_error).toMatch(/^it redirects to http:\/\/0\.0\.0\.0:\d+\/feed\.xml; /);
    expect(canary.connections()).toBe(0);
  });

  it("is refused when a name allowed at subscription resolves to loopback at the poll", async ({ server }) => {
    const alice = await member(server);
    const feed = await subscribe(server, alice, `http://public.test:${canary.port}/feed.xml`, false);
    expect(feed.status, feed.text).toBe(201);
    names["public.test"] = ["::1"];
    try {
      const polled = await server.request<ErrorBody>(`/feeds/${feed.body.id}/poll`, { as: alice, method: "POST" });
      expect(polled.status).toBe(502);
      const after = await server.request<{ last_error: string }>(`/feeds/${feed.body.id}`, { as: alice });
      expect(after.body.last_error).toMatch(/public\.test resolves to ::1/);
    } finally {
      names["public.test"] = ["93.184.215.14"];
    }
    expect(canary.connections()).toBe(0);
  });
});
