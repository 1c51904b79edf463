import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SqlDb } from "../../src/store/sql/dialect.js";
import { SqlMemory } from "../../src/store/sql/memory.js";
import { sqliteDb } from "../../src/store/sqlite/run.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { connectionOf } from "../../src/store/sqlite/transactions.js";
import type { DuplicateKey } from "../../src/store/memory.js";
import { tempDir } from "../helpers/server.js";

// A write's exact-duplicate check (`exactDuplicate`, and `surveyStart`, where it stands in an
// EXISTS) must look entries up by their content key. SQLite plans without statistics (Cairn never
// runs ANALYZE), and once chose the index on (type, updated_at) instead: every entry of the type
// read, 52 ms a write at 100,000 entries (docs/decisions.md, "The exact-duplicate check's plan at
// 100,000 entries"). The plan depends on the statement and the schema, not the rows, so an empty
// migrated store shows it. The store's own statements are planned: SqlMemory runs over a SqlDb that
// asks SQLite for each statement's plan before running it.

interface PlanRow {
  detail: string;
}

function planningDb(plans: string[][]): SqlDb {
  const plan = (r: Parameters<SqlDb["get"]>[0], sql: string, params: unknown[]): void => {
    plans.push(connectionOf(r).all<PlanRow>(`EXPLAIN QUERY PLAN ${sql}`, ...params).map((row) => row.detail));
  };
  return {
    ...sqliteDb,
    all: (r, sql, ...params) => {
      plan(r, sql, params);
      return sqliteDb.all(r, sql, ...params);
    },
    get: (r, sql, ...params) => {
      plan(r, sql, params);
      return sqliteDb.get(r, sql, ...params);
    },
  };
}

const KEY: DuplicateKey = { type: "memory", project: "cairn", scope: "project", agentId: "planner", contentKey: "0".repeat(64) };

describe("the exact-duplicate check's plan on SQLite", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function plansOf(run: (memory: SqlMemory, store: SqliteStore) => Promise<unknown>): Promise<string[]> {
    const dir = tempDir("cairn-duplicate-plan-");
    dirs.push(dir);
    const store = SqliteStore.open(join(dir, "cairn.db"));
    try {
      const plans: string[][] = [];
      await run(new SqlMemory(planningDb(plans)), store);
      expect(plans).toHaveLength(1);
      return plans[0] as string[];
    } finally {
      await store.close();
    }
  }

  it("finds a write's duplicate through the content key alone", async () => {
    const plan = await plansOf((memory, store) => memory.exactDuplicate(store.reader, KEY, new Date().toISOString()));
    const memoryLines = plan.filter((line) => / m\b/.test(line));
    expect(memoryLines).toEqual([expect.stringMatching(/^SEARCH m USING INDEX memory_content_key \(content_key=\?\)$/)]);
  });

  it("checks for a duplicate in a write's survey through the content key alone", async () => {
    const plan = await plansOf((memory, store) => memory.surveyStart(store.reader, KEY, new Date().toISOString()));
    const memoryLines = plan.filter((line) => / m\b/.test(line));
    expect(memoryLines).toEqual([expect.stringMatching(/^SEARCH m USING INDEX memory_content_key \(content_key=\?\)$/)]);
    expect(plan.some((line) => /memory_type_updated|SCAN m\b/.test(line))).toBe(false);
  });
});
