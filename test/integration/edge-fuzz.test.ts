import { describe, expect } from "vitest";
import { z } from "zod";
import { wireRequest, type WireRequest } from "../../src/client/operations.js";
import { ROUTES } from "../../src/client/routes.js";
import { catalogue } from "../../tools/catalogue.js";
import type { Route } from "../../src/client/route.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, TestServer } from "../helpers/server.js";

// Every route, sent values of every wrong shape in every field it reads (path, query, headers,
// body), by an owner, an agent and nobody: the server answers each with a 4xx of its own (a
// clear refusal) and never a 5xx, and still serves afterwards. A seeded generator, so a failure
// names the request that caused it and runs again the same way; FUZZ_SEED and FUZZ_ROUNDS (per
// route) search further.

let seed = Number(process.env.FUZZ_SEED ?? 0x5eed_2026);
/** mulberry32. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const deep = (levels: number): unknown => (levels === 0 ? "x" : { a: deep(levels - 1), b: [deep(levels - 1)] });

/** Values each field may be given: wrong types, edges of ranges, odd text, ids that are and are not. */
const VALUES: readonly unknown[] = [
  "",
  " ",
  "x",
  "a".repeat(5_000),
  "0badc0de-0000-4000-8000-000000000000",
  "0badc0de",
  "not-a-uuid",
  "../../../etc/passwd",
  "%00",
  "seq:-1",
  "seq:99999999999999999999",
  "2026-13-45T99:99:99Z",
  "1970-01-01T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "🙂🙃".repeat(50),
  "a,b,,c,",
  "*",
  "task.*",
  "W/\"1\"",
  "project:nope",
  "global",
  -1,
  0,
  1,
  2 ** 53,
  -(2 ** 53),
  1.5,
  1e308,
  true,
  false,
  null,
  [],
  [""],
  ["x", 1, null],
  Array.from({ length: 40 }, (_, index) => `t${index}`),
  {},
  { a: 1 },
  deep(12),
];

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** Values a caller would send, the ids of things that exist among them: a request made of these gets past validation and into the services. */
let plausible: unknown[] = ["fuzz", "a fuzz note about the cache", "open", "high", "memory", "project", "task.*", 1, 5, 50, 0.5, true, false, ["fuzz"], null];
/** Most fields get a plausible value, some a wrong one. */
const valueFor = (): unknown => (random() < 0.65 ? pick(plausible) : pick(VALUES));

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

const PER_ROUTE = Number(process.env.FUZZ_ROUNDS ?? 12);

describe("every route, given values of every wrong shape", () => {
  const it = test.extend("agent", ({ server }) => server.agent("fuzzer"));

  it("answers each with a refusal or an answer, never a 5xx, and still serves afterwards", { timeout: 300_000 }, async ({ server, agent }) => {
    // Things to act on, so that plausible requests reach them: a project, an entry, a task, a message, a decision.
    const made = async (path: string, body: Record<string, unknown>): Promise<string> => {
      const response = await server.request<{ id: string }>(path, { as: server.owner, body });
      expect(response.status, `${path}: ${response.text}`).toBe(201);
      return response.body.id;
    };
    const project = await made("/projects", { name: "fuzz" });
    await server.request(`/projects/${project}/join`, { as: agent, method: "POST" });
    const task = await made("/tasks", { title: "a task to fuzz", project });
    plausible = [
      ...plausible,
      project,
      await made("/memory", { content: "an entry to fuzz", project }),
      task,
      await made("/messages", { to: agent.agentId, body: "a message to fuzz" }),
      await made("/decisions", { decision: "fuzz the routes", rationale: "to find what fails", task_id: task }),
      agent.agentId,
      server.owner.agentId,
    ];
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

/** The part of JSON Schema the operations' inputs use. */
interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  format?: string;
  pattern?: string;
  default?: unknown;
}

const WORDS = ["fuzz", "cache", "deploy", "the", "lockfile", "retries", "queue", "x"];

/** A string as the schema would take it, mostly: an existing id where one fits. */
function stringFor(schema: Schema): string {
  if (schema.format === "uuid" || (schema.minLength === 6 && schema.maxLength === 64)) return String(pick(plausible.filter((value) => typeof value === "string" && /^[0-9a-f]{8}-/.test(value))));
  if (schema.format === "date-time") return new Date(Date.now() + (random() - 0.3) * 86_400_000 * 30).toISOString();
  // Never a name to resolve: tests send traffic to loopback only (the guarded fetcher refuses it).
  if (schema.format === "uri") return pick(["http://127.0.0.1:1/feed.xml", "https://[::1]/x", "not a url"]);
  if (schema.pattern?.startsWith("^[a-z0-9]")) return pick(["fuzz", "web", "fuzzer", "nope"]);
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 80, 80);
  let text = "";
  while (text.length < min || (text.length < max && random() < 0.6)) text += (text ? " " : "") + pick(WORDS);
  return text.slice(0, Math.max(min, Math.min(max, text.length)));
}

/** A value the schema takes, most of the time; now and then one of every wrong shape. */
function valueOf(schema: Schema, depth = 0): unknown {
  // The input itself stays an object: the operations' own fields are what is being tried.
  if (depth > 0 && random() < 0.06) return pick(VALUES);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return pick(schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return valueOf(pick(branches), depth);
  const type = Array.isArray(schema.type) ? pick(schema.type) : schema.type;
  switch (type) {
    case "string":
      return stringFor(schema);
    case "integer":
    case "number": {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? 0;
      const max = schema.maximum ?? min + 100;
      const value = pick([min, max, min + (max - min) * random()]);
      return type === "integer" ? Math.round(value) : value;
    }
    case "boolean":
      return random() < 0.5;
    case "null":
      return null;
    case "array": {
      const count = Math.min(schema.maxItems ?? 3, (schema.minItems ?? 0) + Math.floor(random() * 3));
      return depth > 4 ? [] : Array.from({ length: count }, () => valueOf(schema.items ?? {}, depth + 1));
    }
    case "object": {
      const object: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if ((schema.required ?? []).includes(key) || random() < 0.4) object[key] = depth > 4 ? null : valueOf(property, depth + 1);
      }
      return object;
    }
    default:
      return pick(plausible);
  }
}

describe("every operation, given inputs its schema mostly takes", () => {
  const it = test.extend("agent", ({ server }) => server.agent("fuzzer"));

  it("answers each with a refusal or an answer, never a 5xx, and still serves afterwards", { timeout: 300_000 }, async ({ server, agent }) => {
    const made = async (path: string, body: Record<string, unknown>): Promise<string> => {
      const response = await server.request<{ id: string }>(path, { as: server.owner, body });
      expect(response.status, `${path}: ${response.text}`).toBe(201);
      return response.body.id;
    };
    const project = await made("/projects", { name: "fuzz" });
    await server.request(`/projects/${project}/join`, { as: agent, method: "POST" });
    const task = await made("/tasks", { title: "a task to fuzz", project });
    plausible = [
      ...plausible,
      project,
      await made("/memory", { content: "an entry to fuzz", project }),
      await made("/memory", { content: "another entry to fuzz, about the deploy queue", project }),
      task,
      await made("/tasks", { title: "another task to fuzz", project, depends_on: [task] }),
      await made("/messages", { to: agent.agentId, body: "a message to fuzz" }),
      await made("/decisions", { decision: "fuzz the routes", rationale: "to find what fails", task_id: task }),
    ];
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
