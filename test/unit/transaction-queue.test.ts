import { rmSync } from "node:fs";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Db } from "../../src/store/sqlite/connection.js";
import { connectionOf, TransactionQueue } from "../../src/store/sqlite/transactions.js";
import { tempDir } from "../helpers/server.js";

/** A WAL sync that finishes only when the test lets it, recording what had committed when it began. */
class HeldSync {
  readonly began: string[][] = [];
  private readonly releases: ((error?: Error) => void)[] = [];

  constructor(private readonly committed: () => string[]) {}

  readonly sync = (): Promise<void> => {
    this.began.push(this.committed());
    return new Promise((resolve, reject) => this.releases.push((error) => (error ? reject(error) : resolve())));
  };

  /** Ends the oldest sync still running. */
  release(error?: Error): void {
    const next = this.releases.shift();
    if (!next) throw new Error("no sync is running");
    next(error);
  }
}

describe("the SQLite transaction queue with the WAL synced off the main thread", () => {
  const dirs: string[] = [];
  const open: Db[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const setUp = () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = join(dir, "queue.db");
    const writer = connect(file);
    const reader = connect(file, { queryOnly: true });
    open.push(reader, writer);
    writer.exec("CREATE TABLE notes (text TEXT NOT NULL)");
    const committed = () => reader.all<{ text: string }>("SELECT text FROM notes ORDER BY rowid").map((row) => row.text);
    const held = new HeldSync(committed);
    const hookErrors: unknown[] = [];
    const queue = new TransactionQueue(writer, (error) => hookErrors.push(error), held.sync);
    const heard: string[] = [];
    const answered: string[] = [];
    const add = (text: string, fail = false) =>
      queue
        .run((tx) => {
          connectionOf(tx).run("INSERT INTO notes (text) VALUES (?)", text);
          tx.afterCommit(() => heard.push(text));
          if (fail) throw new Error(`${text} failed`);
          return Promise.resolve(text);
        })
        .then((value) => {
          answered.push(value);
          return value;
        });
    return { queue, held, committed, heard, answered, hookErrors, add };
  };

  /** Lets the queue run until it waits on something (the held sync). */
  const settle = async (): Promise<void> => {
    for (let turn = 0; turn < 10; turn++) await nextTurn();
  };

  it("answers a commit, and runs its hooks, only after a sync that began once it had committed", async () => {
    const { held, committed, heard, answered, add } = setUp();
    const first = add("first");
    await settle();
    expect(committed()).toEqual(["first"]);
    expect(held.began).toEqual([["first"]]);
    expect(answered).toEqual([]);
    expect(heard).toEqual([]);
    held.release();
    await expect(first).resolves.toBe("first");
    expect(heard).toEqual(["first"]);
  });

  it("commits the next transactions while a sync runs, and syncs them all once it ends", async () => {
    const { held, committed, heard, answered, add } = setUp();
    const first = add("first");
    await settle();
    const second = add("second");
    await settle();
    const third = add("third");
    await settle();
    // Both committed while the first sync ran, and neither is answered yet.
    expect(committed()).toEqual(["first", "second", "third"]);
    expect(held.began).toHaveLength(1);
    expect(answered).toEqual([]);
    held.release();
    await first;
    await settle();
    // One sync for the two groups that committed meanwhile, begun after both had.
    expect(held.began).toEqual([["first"], ["first", "second", "third"]]);
    expect(answered).toEqual(["first"]);
    held.release();
    await Promise.all([second, third]);
    expect(answered).toEqual(["first", "second", "third"]);
    expect(heard).toEqual(["first", "second", "third"]);
  });

  it("fails the callers of a commit whose sync failed, runs its hooks, and goes on", async () => {
    const { queue, held, heard, hookErrors, add } = setUp();
    const lost = add("lost");
    await settle();
    held.release(new Error("EIO: the disk is gone"));
    await expect(lost).rejects.toThrow("could not be made durable");
    // What the hooks announce is in the database, so they still run; the failure is reported.
    expect(heard).toEqual(["lost"]);
    expect(hookErrors).toEqual([expect.objectContaining({ message: "EIO: the disk is gone" })]);
    const next = add("next");
    await settle();
    held.release();
    await expect(next).resolves.toBe("next");
    await queue.idle();
  });

  it("answers a transaction that rolled back without waiting for the disk, and idle() waits for the sync", async () => {
    const { queue, held, committed, add } = setUp();
    const results = [add("kept"), add("refused", true)];
    await expect(results[1]).rejects.toThrow("refused failed");
    expect(committed()).toEqual(["kept"]);
    let idle = false;
    const waiting = queue.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    held.release();
    await waiting;
    await expect(results[0]).resolves.toBe("kept");
  });
});
