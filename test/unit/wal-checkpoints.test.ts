import { closeSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHECKPOINT_FRAMES, readWalProgress, WalCheckpoints, type WalProgress } from "../../src/store/sqlite/checkpoints.js";
import { connect, type Db } from "../../src/store/sqlite/connection.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { connectionOf } from "../../src/store/sqlite/transactions.js";
import { tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// The WAL checkpointed in a thread of its own (checkpoints.ts): the writer never checkpoints inside
// a COMMIT, and the WAL is still copied into the database once it passes 1,000 frames.

const PAGE_FILLER = "x".repeat(3_900);

/** Rows of nearly a page each: `pages` of them add about as many frames to the WAL. */
function fill(db: Db, pages: number, tag: string): void {
  db.sqlite.exec("CREATE TABLE IF NOT EXISTS filler (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  const insert = db.sqlite.prepare("INSERT INTO filler (id, body) VALUES (?, ?)");
  for (let index = 0; index < pages; index++) insert.run(`${tag}-${index}`, PAGE_FILLER);
}

function progressOf(file: string): WalProgress | null {
  const shm = openSync(`${file}-shm`, "r");
  try {
    return readWalProgress(shm);
  } finally {
    closeSync(shm);
  }
}

describe("WAL checkpoints", () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = tempDir();
    dirs.push(dir);
    return join(dir, "cairn.db");
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("run in their own thread: the writer never checkpoints in a commit, and past 1,000 frames the WAL is copied into the database", async () => {
    const file = fresh();
    const errors: unknown[] = [];
    const store = SqliteStore.open(file, { onCheckpointError: (error) => errors.push(error) });
    try {
      const writer = connectionOf(store.reader);
      expect(writer.sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      await store.transaction((tx) => {
        fill(connectionOf(tx), CHECKPOINT_FRAMES, "large");
        return Promise.resolve();
      });
      let seen: WalProgress | null = null;
      const copied = await eventually(() => {
        seen = progressOf(file);
        return seen !== null && seen.frames > CHECKPOINT_FRAMES && seen.backfilled === seen.frames;
      });
      expect(copied, JSON.stringify(seen)).toBe(true);
      // Every frame copied, the next write starts the WAL over rather than growing it.
      await store.transaction((tx) => {
        fill(connectionOf(tx), 1, "after");
        return Promise.resolve();
      });
      expect(progressOf(file)?.frames).toBeLessThan(20);
      expect(errors).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("go back to SQLite's own, in the commit, when their thread fails, and say so once", async () => {
    const file = fresh();
    const writer = connect(file);
    const errors: unknown[] = [];
    const missing = new URL("./no-such-checkpoint-worker.js", import.meta.url);
    const checkpoints = WalCheckpoints.start(writer, file, (error) => errors.push(error), missing);
    try {
      expect(checkpoints).not.toBeNull();
      expect(writer.sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      fill(writer, CHECKPOINT_FRAMES + 10, "before");
      checkpoints?.committed();
      expect(await eventually(() => errors.length > 0)).toBe(true);
      expect(writer.sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(CHECKPOINT_FRAMES);
      checkpoints?.committed();
      fill(writer, 10, "after");
      checkpoints?.committed();
      expect(errors).toHaveLength(1);
    } finally {
      await checkpoints?.close();
      writer.close();
    }
  });

  it("are SQLite's own for a store opened without a place to report their failures (one-off commands)", async () => {
    const store = SqliteStore.open(fresh());
    try {
      expect(connectionOf(store.reader).sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(CHECKPOINT_FRAMES);
    } finally {
      await store.close();
    }
  });
});
