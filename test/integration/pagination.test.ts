import { beforeAll, describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, Response } from "../helpers/server.js";
import { serverForSuite } from "../helpers/suite.js";

type Row = Record<string, unknown>;

const ENTRIES = 30;
const AGENTS = 12;

describe("pagination", () => {
  const server = serverForSuite();
  let writer: Credentials;
  let startedAt: string;
  let deletedIds: string[];

  /** Every list route, with what it needs besides limit and cursor, and how its rows are identified. */
  const listRoutes = (): { path: string; key: string }[] => [
    { path: "/memory?", key: "id" },
    { path: `/memory/delta?since=${encodeURIComponent(startedAt)}&`, key: "id" },
    { path: "/events?since=seq:0&", key: "seq" },
    { path: "/agents?", key: "agent_id" },
    { path: "/participants?", key: "agent_id" },
  ];

  const get = (path: string): Promise<Response<Row[]>> => server.request<Row[]>(path, { as: writer });

  /** Follows the `Link: <…>; rel="next"` header from page to page, checking it against X-Next-Cursor. */
  async function walkByLink(first: string): Promise<{ rows: Row[]; pages: number }> {
    const rows: Row[] = [];
    let pages = 0;
    let path: string | null = first;
    while (path !== null) {
      const response = await get(path);
      expect(response.status, response.text).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      rows.push(...response.body);
      pages++;
      const cursor = response.headers.get("x-next-cursor");
      const link = response.headers.get("link");
      if (cursor === null) {
        expect(link).toBeNull();
        path = null;
        continue;
      }
      expect(response.body.length).toBeGreaterThan(0);
      const match = /^<([^>]+)>; rel="next"$/.exec(link ?? "");
      expect(match, `Link header: ${link}`).not.toBeNull();
      const next = new URL(match?.[1] ?? "", server.url);
      expect(next.origin).toBe(new URL(server.url).origin);
      expect(next.searchParams.get("cursor")).toBe(cursor);
      path = `${next.pathname}${next.search}`;
      expect(pages).toBeLessThan(200);
    }
    return { rows, pages };
  }

  /** Appends `cursor` from X-Next-Cursor to the original query. */
  async function walkByCursor(first: string): Promise<Row[]> {
    const rows: Row[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 200; pages++) {
      const response = await get(cursor === null ? first : `${first}&cursor=${encodeURIComponent(cursor)}`);
      expect(response.status, response.text).toBe(200);
      rows.push(...response.body);
      cursor = response.headers.get("x-next-cursor");
      if (cursor === null) return rows;
    }
    throw new Error("pagination did not end");
  }

  beforeAll(async () => {
    startedAt = new Date(Date.now() - 1000).toISOString();
    writer = await server.agent("page-writer");
    for (let index = 0; index < AGENTS; index++) await server.agent(`page-agent-${String(index).padStart(2, "0")}`);
    // Written concurrently so that many share a timestamp.
    const written = await Promise.all(
      Array.from({ length: ENTRIES }, (_, index) =>
        server.request<{ id: string }>("/memory", {
          as: writer,
          body: { content: `pagination entry ${index}: ${"lorem ipsum ".repeat(index % 5)} ${index * 7919}`, allow_duplicate: true },
        }),
      ),
    );
    for (const response of written) expect(response.status).toBe(201);
    // One bulk delete: tombstones written in one transaction, most with the same updated_at.
    deletedIds = written.slice(0, 12).map((response) => response.body.id);
    const deleted = await server.request<{ deleted: string[] }>("/memory", { as: writer, method: "DELETE", body: { ids: deletedIds } });
    expect(deleted.status).toBe(200);
    expect(deleted.body.deleted).toHaveLength(deletedIds.length);
  });

  it("rejects limit=0 and limit=501 on every list route with 422", async () => {
    for (const { path } of listRoutes()) {
      for (const limit of ["0", "501", "-1", "2.5", "ten"]) {
        const response = await get(`${path}limit=${limit}`);
        expect(response.status, `${path}limit=${limit}`).toBe(422);
        const body = response.body as unknown as ErrorBody;
        expect(body.code).toBe("VALIDATION_FAILED");
        expect(body.errors?.map((problem) => problem.path)).toEqual(["limit"]);
      }
      expect((await get(`${path}limit=500`)).status, `${path}limit=500`).toBe(200);
      expect((await get(`${path}limit=1`)).status, `${path}limit=1`).toBe(200);
    }
  });

  it("rejects an invalid cursor on every list route with 422", async () => {
    const agentCursor = Buffer.from(JSON.stringify("page-agent-00")).toString("base64url");
    for (const { path } of listRoutes()) {
      for (const cursor of ["not-a-cursor", "e30", path.startsWith("/agents") || path.startsWith("/participants") ? "e30" : agentCursor]) {
        const response = await get(`${path}cursor=${cursor}`);
        expect(response.status, `${path}cursor=${cursor}`).toBe(422);
        const body = response.body as unknown as ErrorBody;
        expect(body.code).toBe("VALIDATION_FAILED");
        expect(body.errors?.map((problem) => problem.path)).toEqual(["cursor"]);
      }
    }
  });

  it("rejects limit=0 and limit=101 on search with 422", async () => {
    for (const limit of ["0", "101"]) {
      const response = await get(`/memory/search?q=pagination&limit=${limit}`);
      expect(response.status).toBe(422);
      expect((response.body as unknown as ErrorBody).errors?.map((problem) => problem.path)).toEqual(["limit"]);
    }
    expect((await get("/memory/search?q=pagination&limit=100")).status).toBe(200);
  });

  it("defaults to 50 rows a page", async () => {
    const all = await get("/events?since=seq:0&limit=500");
    expect(all.body.length).toBeGreaterThan(50);
    const response = await get("/events?since=seq:0");
    expect(response.body).toHaveLength(50);
    expect(response.headers.get("x-next-cursor")).not.toBeNull();
  });

  it("walks every list route page by page, each row exactly once and in order", async () => {
    for (const { path, key } of listRoutes()) {
      const all = await get(`${path}limit=500`);
      expect(all.headers.get("x-next-cursor")).toBeNull();
      const expected = all.body.map((row) => row[key]);
      expect(new Set(expected).size).toBe(expected.length);
      for (const size of [1, 4, 7]) {
        const { rows, pages } = await walkByLink(`${path}limit=${size}`);
        expect(rows.map((row) => row[key]), `${path} by Link, limit ${size}`).toEqual(expected);
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / size)));
        expect((await walkByCursor(`${path}limit=${size}`)).map((row) => row[key]), `${path} by cursor, limit ${size}`).toEqual(expected);
      }
    }
  });

  it("lists memory newest change first, across entries that share a timestamp", async () => {
    const { rows } = await walkByLink("/memory?limit=3");
    expect(rows).toHaveLength(ENTRIES - deletedIds.length);
    const stamps = rows.map((row) => row.updated_at as string);
    expect([...stamps].sort().reverse()).toEqual(stamps);
    for (const id of deletedIds) expect(rows.map((row) => row.id)).not.toContain(id);
  });

  it("lists the delta oldest first with every entry and tombstone once, across shared timestamps", async () => {
    const { rows } = await walkByLink(`/memory/delta?since=${encodeURIComponent(startedAt)}&limit=2`);
    expect(rows).toHaveLength(ENTRIES);
    const stamps = rows.map((row) => row.updated_at as string);
    expect([...stamps].sort()).toEqual(stamps);
    const tombstones = rows.filter((row) => "deleted_at" in row);
    expect(tombstones.map((row) => row.id).sort()).toEqual([...deletedIds].sort());
    // The bulk delete stamps its tombstones in one transaction: the walk crossed rows that tie.
    const tombstoneStamps = tombstones.map((row) => row.updated_at as string);
    expect(new Set(tombstoneStamps).size).toBeLessThan(tombstoneStamps.length);
  });

  it("lists events in strictly increasing seq with no gaps between pages", async () => {
    const { rows } = await walkByLink("/events?since=seq:0&limit=5");
    const seqs = rows.map((row) => row.seq as number);
    expect(seqs.length).toBeGreaterThanOrEqual(ENTRIES + deletedIds.length);
    for (let index = 1; index < seqs.length; index++) expect(seqs[index]).toBeGreaterThan(seqs[index - 1] as number);
    const after = await get(`/events?since=seq:${seqs[9]}&limit=500`);
    expect(after.body.map((row) => row.seq)).toEqual(seqs.slice(10));
  });

  it("lists every agent once on /agents and /participants alike", async () => {
    const agents = (await walkByLink("/agents?limit=5")).rows.map((row) => row.agent_id);
    const participants = (await walkByLink("/participants?limit=5")).rows.map((row) => row.agent_id);
    expect(participants).toEqual(agents);
    for (let index = 0; index < AGENTS; index++) expect(agents).toContain(`page-agent-${String(index).padStart(2, "0")}`);
    expect(agents).toContain(writer.agentId);
  });

  it("keeps filters on the next-page link", async () => {
    const first = await get("/events?since=seq:0&type=memory.deleted&limit=5");
    const link = first.headers.get("link") ?? "";
    const next = new URL(/^<([^>]+)>/.exec(link)?.[1] ?? "", server.url);
    expect(next.searchParams.get("type")).toBe("memory.deleted");
    expect(next.searchParams.get("limit")).toBe("5");
    const { rows } = await walkByLink("/events?since=seq:0&type=memory.deleted&limit=5");
    expect(rows).toHaveLength(deletedIds.length);
    for (const row of rows) expect(row.type).toBe("memory.deleted");
  });
});
