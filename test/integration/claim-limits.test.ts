import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { databaseUrlFor, withDatabase } from "../helpers/database.js";
import { startTestServer, tempDir } from "../helpers/server.js";

// Each background job takes a batch of due rows with one UPDATE whose pick has a LIMIT and, on
// PostgreSQL, SKIP LOCKED. Written as the UPDATE's subquery, PostgreSQL ran the pick again for
// each row it updated and every due row was taken whatever the limit: a poller claimed every due
// feed at once. These take a batch straight from the store, on the suite's backend.
describe("a batch claim takes at most its limit", () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A migrated store with its owner agent, made by a server that has stopped; and the owner's id. */
  async function preparedStore(write?: (server: Awaited<ReturnType<typeof startTestServer>>) => Promise<void>): Promise<{ store: Store; dir: string; owner: string }> {
    const dir = tempDir();
    dirs.push(dir);
    const server = await startTestServer({ DATA_DIR: dir });
    await write?.(server);
    const owner = server.owner.agentId;
    await server.close();
    const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
    stores.push(store);
    return { store, dir, owner };
  }

  const past = "2026-01-01T00:00:00.000Z";
  const now = "2026-06-01T00:00:00.000Z";
  const later = "2026-06-01T01:00:00.000Z";

  it("feeds due for a poll", async () => {
    const { store, owner } = await preparedStore();
    for (let index = 0; index < 5; index++) {
      await store.transaction((tx) =>
        store.feeds.insert(tx, {
          id: `feed-${index}`, project: null, agent_id: owner, url: `https://example.com/${index}`, url_key: `https://example.com/${index}`,
          name: `feed ${index}`, tags: "[]", interval_minutes: 60, max_items_per_poll: 10, confidence: 0.5, paused: 0, failing: 0,
          failures: 0, last_polled_at: null, last_success_at: null, last_error: null, next_poll_at: past, etag: null,
          last_modified: null, items_ingested: 0, primed: 0, created_at: past, updated_at: past,
        }),
      );
    }
    const first = await store.transaction((tx) => store.feeds.claimDue(tx, now, "one", later, 2));
    const second = await store.transaction((tx) => store.feeds.claimDue(tx, now, "two", later, 2));
    const third = await store.transaction((tx) => store.feeds.claimDue(tx, now, "three", later, 2));
    expect([first, second, third].map((rows) => rows.map((row) => row.id))).toEqual([["feed-0", "feed-1"], ["feed-2", "feed-3"], ["feed-4"]]);
  });

  it("mesh links due for a sync", async () => {
    const { store, owner } = await preparedStore();
    for (let index = 0; index < 5; index++) {
      await store.transaction((tx) =>
        store.mesh.insertLink(tx, {
          id: `link-${index}`, peer_instance_id: `peer-${index}`, peer_name: `peer ${index}`, url: `https://peer-${index}.example.com`,
          label: null, projects: "[]", direction: "pull", interval_seconds: 60, max_confidence: 0.8, paused: 0, status: "active",
          failures: 0, last_sync_at: null, last_success_at: null, last_error: null, cursor: 0, token_sealed: "sealed", token_hint: "hint",
          minted_token_id: null, applied_total: 0, rejected_total: 0, dropped_total: 0, next_sync_at: past, anti_entropy_at: later,
          created_by: owner, created_at: past, updated_at: past,
        }),
      );
    }
    const first = await store.transaction((tx) => store.mesh.claimDueLinks(tx, now, "one", later, 2));
    const second = await store.transaction((tx) => store.mesh.claimDueLinks(tx, now, "two", later, 2));
    const third = await store.transaction((tx) => store.mesh.claimDueLinks(tx, now, "three", later, 2));
    expect([first, second, third].map((rows) => rows.map((row) => row.id))).toEqual([["link-0", "link-1"], ["link-2", "link-3"], ["link-4"]]);
  });

  it("memory entries without a merkle leaf", async () => {
    const { store, dir } = await preparedStore(async (server) => {
      for (const topic of ["tides", "glaciers", "bread", "compilers", "violins"]) {
        const written = await server.request("/memory", { as: server.owner, body: { project: null, content: `What we know about ${topic}.` } });
        expect(written.status).toBe(201);
      }
    });
    const unstamped = () => withDatabase(dir, async (db) => Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM memory WHERE merkle_leaf IS NULL"))?.n));
    await withDatabase(dir, (db) => db.run("UPDATE memory SET merkle_leaf = NULL, merkle_bucket = NULL"));
    expect(await unstamped()).toBe(5);
    expect(await store.transaction((tx) => store.merkle.stampUnstamped(tx, "origin", 2))).toBe(2);
    expect(await unstamped()).toBe(3);
  });
});
