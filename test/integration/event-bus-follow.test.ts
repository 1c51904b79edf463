import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventBus, type BusEvent } from "../../src/events/bus.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { databaseUrlFor, onPostgres } from "../helpers/database.js";
import { tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// Two stores on one PostgreSQL database stand for two servers: one commits events as fast as it
// can, the other's bus follows the shared log. The follower hands on every event once, in order,
// and reads the log at most once every 5 ms however fast the other commits (a process's reads of
// the log are bounded by time, not by the cluster's event rate).
describe.runIf(onPostgres)("an event bus following another server's events on PostgreSQL", () => {
  const stores: Store[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("hands on a burst once and in order, reading the log no more than once every 5 ms", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const open = async (): Promise<Store> => {
      const store = await openStore({ databaseUrl: databaseUrlFor(dir), file: join(dir, "cairn.db") });
      stores.push(store);
      return store;
    };
    const [writer, follower] = [await open(), await open()];
    const writing = new EventBus(writer);
    const following = new EventBus(follower);
    await following.start();
    const received: BusEvent[] = [];
    following.subscribe((event) => received.push(event));

    const EVENTS = 600;
    const began = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < EVENTS) {
          const n = next++;
          await writer.transaction((tx) => writing.emitCustom(tx, { type: "test.burst", agentId: "burst-writer", project: null, payload: { n } }));
        }
      }),
    );
    expect(await eventually(() => received.length >= EVENTS, 30_000)).toBe(true);
    const elapsedMs = performance.now() - began;
    following.stop();

    expect(received).toHaveLength(EVENTS);
    const seqs = received.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(received.map((event) => event.payload.n))).toHaveProperty("size", EVENTS);
    expect(following.logReads).toBeGreaterThan(0);
    expect(following.logReads).toBeLessThanOrEqual(Math.ceil(elapsedMs / 5) + 1);
  });
});
