import { describe, expect } from "vitest";
import { z } from "zod";
import { wireRequest, type WireRequest } from "../../src/client/operations.js";
import { ROUTES } from "../../src/client/routes.js";
import { catalogue } from "../../tools/catalogue.js";
import type { Route } from "../../src/client/route.js";
import { test } from "../helpers/fixtures.js";
import { PER_ROUTE, pick, random, seedFuzzTargets, text, VALUES, valueFor, valueOf, type Schema } from "../helpers/fuzz-values.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// Every route, sent values of every wrong shape in every field it reads (path, query, headers,
// body), by an owner, an agent and nobody: the server answers each with a 4xx of its own (a
// clear refusal) and never a 5xx, and still serves afterwards. A seeded generator, so a failure
// names the request that caused it and runs again the same way; FUZZ_SEED and FUZZ_ROUNDS (per
// route) search further.

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One request to `route` with a random value in some of its fields. */
function randomRequest(route: Route): Sent {
  let path = route.path;
  for (const param of route.params) path = path.replace(`:${param}`, encodeURIComponent(text(valueFor())));
  const query = new URLSearchParams();
  for (const key of route.query) if (random() < 0.4) query.set(key, text(valueFor()));
  // A wait with no timeout of its own lasts its default 30 s.
  if (route.query.includes("timeout") && !query.has("timeout")) query.set("timeout", "1");
  const headers: Record<string, string> = {};
  for (const header of Object.values(route.headers)) if (random() < 0.5) headers[header] = text(valueFor());
  const sent: Sent = { method: route.method, path: query.size > 0 ? `${path}?${query.toString()}` : path, headers };
  if (route.text) {
    headers["content-type"] = route.text.mediaType;
    sent.body = text(valueFor());
  } else if (route.body.length > 0 || (route.method !== "GET" && random() < 0.2)) {
    headers["content-type"] = "application/json";
    const fields = route.body.length > 0 ? route.body : ["stray"];
    const body: Record<string, unknown> = {};
    for (const key of fields) if (random() < 0.5) body[key] = valueFor();
    // Now and then a body that is not an object at all.
    sent.body = random() < 0.1 ? text(pick(VALUES)) : JSON.stringify(body);
  }
  return sent;
}

async function send(server: TestServer, sent: Sent, as: Credentials | null): Promise<{ status: number; text: string }> {
  // A header is Latin-1 on the wire: fetch refuses anything else before it is sent.
  const latin1 = Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name, value.replace(/[^\x20-\x7e]/g, "?")]));
  const headers = { ...latin1, ...(as ? { "x-agent-id": as.agentId, "x-api-key": as.apiKey } : {}) };
  const response = await fetch(`${server.url}${sent.path}`, { method: sent.method, headers, ...(sent.body === undefined ? {} : { body: sent.body }) });
  return { status: response.status, text: await response.text() };
}


describe("every route, given values of every wrong shape", () => {
  const it = test.extend("agent", ({ server }) => server.agent("fuzzer"));

  it("answers each with a refusal or an answer, never a 5xx, and still serves afterwards", { timeout: 300_000 }, async ({ server, agent }) => {
    await seedFuzzTargets(server, agent);
    const failures: string[] = [];
    let sentCount = 0;
    for (const [name, route] of Object.entries(ROUTES) as [string, Route][]) {
      for (let round = 0; round < PER_ROUTE; round++) {
        const sent = randomRequest(route);
        const as = pick([server.owner, server.owner, agent, agent, null]);
        const answer = await send(server, sent, as);
        sentCount++;
        if (answer.status >= 500 && answer.status !== 503) failures.push(`${name}: ${sent.method} ${sent.path.slice(0, 200)} ${sent.body?.slice(0, 200) ?? ""} → ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    expect(sentCount).toBeGreaterThan(1_000);
    expect(failures).toEqual([]);
    expect((await server.request("/health")).status).toBe(200);
    // Another agent: the fuzzer's own identity may be throttled by now for the credentials it got wrong (CONTRACT §2.2a).
    const after = await server.request("/memory", { as: await server.agent("after-fuzz"), body: { content: "still serving after the fuzz" } });
    expect(after.status, after.text).toBe(201);
  });
});

describe("every operation, given inputs its schema mostly takes", () => {
  const it = test.extend("agent", ({ server }) => server.agent("fuzzer"));

  it("answers each with a refusal or an answer, never a 5xx, and still serves afterwards", { timeout: 300_000 }, async ({ server, agent }) => {
    await seedFuzzTargets(server, agent);
    // Each caller's identity is kept: rotating its key or deleting it would only end the fuzz early.
    const selfEnding = new Set(["agent_rotate_key", "agent_delete", "agent_delete_me"]);
    const failures: string[] = [];
    let sentCount = 0;
    for (const operation of catalogue) {
      if (!(operation.name in ROUTES) || selfEnding.has(operation.name)) continue;
      const schema = z.toJSONSchema(operation.input, { io: "input", unrepresentable: "any" }) as Schema;
      for (let round = 0; round < PER_ROUTE; round++) {
        let wire: WireRequest;
        const input = valueOf(schema) as Record<string, unknown>;
        // A wait with no timeout of its own lasts its default 30 s.
        if (operation.name === "event_wait") input.timeout = 1;
        try {
          wire = wireRequest(operation.name as Parameters<typeof wireRequest>[0], input as never);
        } catch {
          continue; // a path parameter drew no value
        }
        const as = pick([server.owner, agent]);
        const answer = await send(server, { method: wire.method, path: wire.path, headers: wire.headers, ...(wire.body === undefined ? {} : { body: wire.body }) }, as);
        sentCount++;
        if (answer.status >= 500 && answer.status !== 503) failures.push(`${operation.name}: ${wire.method} ${wire.path.slice(0, 200)} ${wire.body?.slice(0, 300) ?? ""} → ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    expect(sentCount).toBeGreaterThan(1_000);
    expect(failures).toEqual([]);
    expect((await server.request("/health")).status).toBe(200);
    const after = await server.request("/memory", { as: await server.agent("after-fuzz"), body: { content: "still serving after the fuzz" } });
    expect(after.status, after.text).toBe(201);
  });
});
