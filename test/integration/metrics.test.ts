import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect } from "vitest";
import { it, test } from "../helpers/fixtures.js";
import { onPostgres } from "../helpers/database.js";
import { mcpClient } from "../helpers/mcp.js";
import { openStream } from "../helpers/stream.js";
import { type Credentials, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

/** The Prometheus text format (0.0.4), strictly: any line it does not know fails the test. */
function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const labelText = match[2] ?? "";
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let label = LABEL.exec(labelText); label; label = LABEL.exec(labelText)) {
      labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, (_all, char: string) => (char === "n" ? "\n" : char));
      consumed = LABEL.lastIndex;
    }
    if (consumed !== labelText.length) throw new Error(`bad labels: ${line}`);
    const raw = match[3] as string;
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== "NaN") throw new Error(`bad value: ${line}`);
    const name = match[1] as string;
    const family = name.replace(/_(bucket|sum|count)$/, "");
    if (!types.has(name) && !(types.get(family) === "histogram")) throw new Error(`sample before its TYPE: ${line}`);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

const value = (exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined =>
  exposition.samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, text]) => sample.labels[key] === text))?.value;

const asHeaders = (as: Credentials): Record<string, string> => ({ "x-agent-id": as.agentId, "x-api-key": as.apiKey });

async function scrape(server: TestServer, headers: Record<string, string> = asHeaders(server.owner)): Promise<Exposition> {
  const response = await fetch(`${server.url}/metrics`, { headers });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(text);
}

const METRICS_TOKEN = "scrape-token-0123456789abcdef";

describe("GET /metrics", () => {
  const it = test.extend("ann", ({ server }) => server.agent("ann"));
  it.override("serverEnv", { METRICS_TOKEN, AGENT_KEYS: "watcher:watcher-key-0123456789:viewer" });

  it("answers the owner with every family in the Prometheus text format", async ({ server }) => {
    const { types } = await scrape(server);
    expect(Object.fromEntries(types)).toMatchObject({
      cairn_http_requests_total: "counter",
      cairn_http_request_duration_seconds: "histogram",
      cairn_event_streams_open: "gauge",
      cairn_mcp_sessions_open: "gauge",
      cairn_embedding_model_state: "gauge",
      cairn_embedding_queue_entries: "gauge",
      cairn_embedding_texts_waiting: "gauge",
      cairn_embedding_texts_total: "counter",
      cairn_database_size_bytes: "gauge",
      cairn_events_total: "counter",
      cairn_archivist_lease_held: "gauge",
      cairn_archivist_last_pass_timestamp_seconds: "gauge",
    });
  });

  it("counts requests by operation and status, with their latency", async ({ server, ann }) => {
    const before = await scrape(server);
    const writes = (exposition: Exposition): number => value(exposition, "cairn_http_requests_total", { operation: "memory_write", status: "201" }) ?? 0;
    const missing = (exposition: Exposition): number => value(exposition, "cairn_http_requests_total", { operation: "memory_get", status: "404" }) ?? 0;
    const timed = (exposition: Exposition): number => value(exposition, "cairn_http_request_duration_seconds_count", { operation: "memory_write" }) ?? 0;
    for (const content of ["metrics note one", "metrics note two"]) {
      expect((await server.request("/memory", { as: ann, body: { content, project: null } })).status).toBe(201);
    }
    expect((await server.request("/memory/00000000-0000-4000-8000-000000000000", { as: ann })).status).toBe(404);
    const after = await scrape(server);
    expect(writes(after) - writes(before)).toBe(2);
    expect(missing(after) - missing(before)).toBe(1);
    expect(timed(after) - timed(before)).toBe(2);
    expect(value(after, "cairn_http_request_duration_seconds_bucket", { operation: "memory_write", le: "+Inf" })).toBe(timed(after));
    // Its own scrape was counted too, under the transport's name.
    expect(value(after, "cairn_http_requests_total", { operation: "metrics", status: "200" })).toBeGreaterThanOrEqual(1);
  });

  it("counts events by type as they are emitted", async ({ server, ann }) => {
    const written = (exposition: Exposition): number => value(exposition, "cairn_events_total", { type: "memory.written" }) ?? 0;
    const before = written(await scrape(server));
    await server.request("/memory", { as: ann, body: { content: "an event to count", project: null } });
    expect(await eventually(async () => written(await scrape(server)) === before + 1)).toBe(true);
  });

  it("times the hold of the events' lock on PostgreSQL, one observation per event-writing transaction; has no such family on SQLite", async ({ server, ann }) => {
    const holds = (exposition: Exposition): number => value(exposition, "cairn_events_lock_hold_seconds_count", {}) ?? 0;
    const before = await scrape(server);
    expect(before.types.has("cairn_events_lock_hold_seconds")).toBe(onPostgres);
    for (const content of ["held once", "held twice"]) expect((await server.request("/memory", { as: ann, body: { content, project: null } })).status).toBe(201);
    const after = await scrape(server);
    if (!onPostgres) return;
    expect(holds(after) - holds(before)).toBe(2);
    expect(value(after, "cairn_events_lock_hold_seconds_sum", {})).toBeGreaterThan(0);
  });

  it("counts reads of the shared event log on PostgreSQL, where a lone server's own events need none; has no such family on SQLite", async ({ server, ann }) => {
    const reads = (exposition: Exposition): number | undefined => value(exposition, "cairn_event_log_reads_total", {});
    const before = await scrape(server);
    expect(before.types.has("cairn_event_log_reads_total")).toBe(onPostgres);
    for (const content of ["handed on as made", "handed on as made again"]) expect((await server.request("/memory", { as: ann, body: { content, project: null } })).status).toBe(201);
    const after = await scrape(server);
    if (!onPostgres) return;
    expect(reads(before)).toBeGreaterThanOrEqual(0);
    expect(reads(after)).toBe(reads(before));
  });

  it("reports open event streams and MCP sessions", async ({ server, ann }) => {
    const stream = openStream(server, ann);
    await stream.opened;
    const client = await mcpClient(server, ann);
    try {
      const open = await scrape(server);
      expect(value(open, "cairn_event_streams_open")).toBe(1);
      expect(value(open, "cairn_mcp_sessions_open")).toBe(1);
    } finally {
      stream.close();
      // Closing the client leaves the session to the idle sweep; ending it is a DELETE.
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      await client.close();
    }
    expect(
      await eventually(async () => {
        const closed = await scrape(server);
        return value(closed, "cairn_event_streams_open") === 0 && value(closed, "cairn_mcp_sessions_open") === 0;
      }),
    ).toBe(true);
  });

  it("reports the embedding model's state, the entries waiting for it and the database's size", async ({ server }) => {
    const exposition = await scrape(server);
    expect(value(exposition, "cairn_embedding_model_state", { model: "hash", state: "ready" })).toBe(1);
    expect(value(exposition, "cairn_embedding_model_state", { model: "hash", state: "loading" })).toBe(0);
    expect(value(exposition, "cairn_embedding_queue_entries")).toBe(0);
    const database = onPostgres ? new URL(server.config.DATABASE_URL ?? "").pathname.slice(1) : "cairn.db";
    expect(value(exposition, "cairn_database_size_bytes", { file: database })).toBeGreaterThan(0);
  });

  it("reports the archivist's lease holder and when its last pass ran", async ({ server }) => {
    const none = await scrape(server);
    expect(value(none, "cairn_archivist_lease_held")).toBe(0);
    expect(value(none, "cairn_archivist_last_pass_timestamp_seconds")).toBe(0);
    const lease = await server.request("/archivist/lease", { as: server.archivist, body: { holder: "night-shift", ttl_seconds: 60 } });
    expect(lease.status).toBe(200);
    const at = "2026-03-01T02:00:00.000Z";
    const stored = await server.request("/archivist/state/last_pass", { method: "PUT", as: server.archivist, body: { value: { at, entries: 3 } } });
    expect(stored.status).toBe(200);
    const held = await scrape(server);
    expect(value(held, "cairn_archivist_lease_held", { holder: "night-shift" })).toBe(1);
    expect(value(held, "cairn_archivist_last_pass_timestamp_seconds")).toBe(Date.parse(at) / 1000);
  });

  it("takes the metrics token as a bearer; a wrong one is 401", async ({ server }) => {
    await scrape(server, { authorization: `Bearer ${METRICS_TOKEN}` });
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { code: string }).code).toBe("UNAUTHENTICATED");
  });

  it("takes an owner's OAuth bearer token too", async ({ server }) => {
    const token = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: server.owner.agentId, client_secret: server.owner.apiKey }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    await scrape(server, { authorization: `Bearer ${access_token}` });
  });

  it("refuses no credentials with 401, and agents and viewers that are not owners with 403", async ({ server, ann }) => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const agent = await fetch(`${server.url}/metrics`, { headers: asHeaders(ann) });
    expect(agent.status).toBe(403);
    expect(((await agent.json()) as { code: string }).code).toBe("FORBIDDEN");
    const viewer = await fetch(`${server.url}/metrics`, { headers: asHeaders({ agentId: "watcher", apiKey: "watcher-key-0123456789" }) });
    expect(viewer.status).toBe(403);
  });
});

describe("GET /metrics without METRICS_TOKEN", () => {
  it("takes no bearer token but an owner's: an empty setting is no token", async ({ server }) => {
    for (const authorization of ["Bearer ", "Bearer anything-at-all"]) {
      expect((await fetch(`${server.url}/metrics`, { headers: { authorization } })).status).toBe(401);
    }
    await scrape(server);
  });

  it("keeps its own counts: another server's requests are not in them", async ({ server }) => {
    const exposition = await scrape(server);
    expect(value(exposition, "cairn_http_requests_total", { operation: "memory_write" })).toBeUndefined();
  });
});
