import { beforeAll, describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";
import { write, type MemoryEntry } from "../helpers/memory.js";
import type { ErrorBody, Response } from "../helpers/server.js";
import { serverForSuite } from "../helpers/suite.js";

describe("listing memory by kind", () => {
  const server = serverForSuite();
  const written: MemoryEntry[] = [];

  beforeAll(async () => {
    // Interleaved, so neither time nor insertion order alone gives the kind order.
    const kinds = ["memory", "doc", "directive", "memory", "skill", "doc", "directive", "memory", "doc"];
    for (const [index, type] of kinds.entries()) {
      written.push(await write(server, server.owner, { type, project: null, content: `entry ${index}, a ${type}` }));
    }
  });

  /** Every page of `query`, two rows at a time, following X-Next-Cursor. */
  async function walk(query: string): Promise<MemoryEntry[]> {
    const rows: MemoryEntry[] = [];
    let cursor: string | null = null;
    do {
      const page: Response<MemoryEntry[]> = await server.request<MemoryEntry[]>(`/memory?limit=2&${query}${cursor ? `&cursor=${cursor}` : ""}`, { as: server.owner });
      expect(page.status).toBe(200);
      rows.push(...page.body);
      cursor = page.headers.get("x-next-cursor");
    } while (cursor !== null);
    return rows;
  }

  it("puts directives first, then docs, then the rest, each newest change first, across pages", async () => {
    const rows = await walk("order=kind");
    const newestFirst = (types: string[]) => written.filter((entry) => types.includes(entry.type)).reverse().map((entry) => entry.id);
    expect(rows.map((row) => row.id)).toEqual([...newestFirst(["directive"]), ...newestFirst(["doc"]), ...newestFirst(["memory", "skill"])]);
  });

  it("keeps newest change first by default, and filters still apply", async () => {
    expect((await walk("")).map((row) => row.id)).toEqual([...written].reverse().map((entry) => entry.id));
    expect((await walk("order=kind&type=doc")).map((row) => row.type)).toEqual(["doc", "doc", "doc"]);
  });

  it("refuses a cursor from the other order and an unknown order", async () => {
    const recent = await server.request<MemoryEntry[]>("/memory?limit=2", { as: server.owner });
    const cursor = recent.headers.get("x-next-cursor") ?? "";
    expect((await server.request<ErrorBody>(`/memory?limit=2&order=kind&cursor=${cursor}`, { as: server.owner })).status).toBe(422);
    expect((await server.request<ErrorBody>("/memory?order=oldest", { as: server.owner })).status).toBe(422);
  });
});
