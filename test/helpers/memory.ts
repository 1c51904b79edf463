import { expect } from "vitest";
import type { MemoryEntry, SearchHit } from "../../src/wire/memory.js";
import type { Credentials, TestServer } from "./server.js";

/** Helpers for the /memory routes, as the memory tests use them. */

export type { MemoryEntry, SearchHit };

export interface EventRecord {
  seq: number;
  type: string;
  agent_id: string;
  payload: Record<string, unknown>;
}

/** A well-formed id that no entry has. */
export const UNKNOWN_ID = "0badc0de-0000-4000-8000-000000000000";

export const ids = (entries: { id: string }[]): string[] => entries.map((entry) => entry.id);

/** Writes a new entry (`allow_duplicate`: never a reinforced old one) and expects 201. */
export async function write(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<MemoryEntry> {
  const response = await server.request<MemoryEntry>("/memory", { as, body: { allow_duplicate: true, ...body } });
  expect(response.status).toBe(201);
  return response.body;
}

export const read = (server: TestServer, as: Credentials, id: string) => server.request<MemoryEntry>(`/memory/${id}`, { as });

/** PATCHes an entry; `headers` is for If-Match. The response is returned whatever its status. */
export const patch = <T = MemoryEntry>(server: TestServer, as: Credentials, id: string, body: unknown, headers: Record<string, string> = {}) =>
  server.request<T>(`/memory/${id}`, { as, method: "PATCH", body, headers });

/** Up to 500 entries the caller can see, `query` adding filters; expects 200. */
export async function list(server: TestServer, as: Credentials, query = ""): Promise<MemoryEntry[]> {
  const response = await server.request<MemoryEntry[]>(`/memory?limit=500${query ? `&${query}` : ""}`, { as });
  expect(response.status).toBe(200);
  return response.body;
}

/** Up to 100 hits for `q`, so that an entry is found wherever it ranks; expects 200. */
export async function searchHits(server: TestServer, as: Credentials, q: string): Promise<SearchHit[]> {
  const response = await server.request<SearchHit[]>(`/memory/search?limit=100&q=${encodeURIComponent(q)}`, { as });
  expect(response.status).toBe(200);
  return response.body;
}

/** Every event of `type` (up to 500), as the owner sees them; expects 200. */
export async function eventsOf(server: TestServer, type: string): Promise<EventRecord[]> {
  const response = await server.request<EventRecord[]>(`/events?since=seq:0&limit=500&type=${type}`, { as: server.owner });
  expect(response.status).toBe(200);
  return response.body;
}

/** Creates a project (its id is the slug of `name`); `as` becomes its owner and first member. */
export async function createProject(server: TestServer, as: Credentials, name: string): Promise<void> {
  const response = await server.request("/projects", { as, body: { name } });
  if (response.status !== 201) throw new Error(`POST /projects ${name} → ${response.status} ${response.text}`);
}
