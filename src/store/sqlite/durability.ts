import { closeSync, fdatasync, fsync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Db } from "./connection.js";

/** Makes every COMMIT so far durable. */
export interface WalSync {
  sync(): Promise<void>;
  close(): void;
}

const flush = (fd: number, data: boolean): Promise<void> =>
  new Promise((done, fail) => (data ? fdatasync : fsync)(fd, (error) => (error ? fail(error) : done())));

/**
 * Moves the writer's wait for the disk off the main thread. With synchronous=FULL every COMMIT
 * fdatasyncs the WAL inside better-sqlite3's call, holding the event loop for the whole flush;
 * with NORMAL a COMMIT only appends to the WAL (SQLite still syncs around checkpoints), and
 * `sync` makes the WAL durable on libuv's pool: the same fdatasync SQLite would have issued, and,
 * the first time, an fsync of the directory, as SQLite does for a WAL it has created. The queue
 * answers a group's callers only after a sync that began after its COMMIT, so an acknowledged
 * write survives power loss as before.
 *
 * The WAL is opened once, at the first sync (after the first COMMIT, so it exists), and kept
 * until the store closes: SQLite removes it only when its last connection closes, and the store's
 * two connections stay open until then.
 * Null, leaving the connection as it is, when there is no WAL on disk to sync.
 */
export function walSync(writer: Db, file: string): WalSync | null {
  if (writer.sqlite.readonly || writer.sqlite.memory || writer.sqlite.pragma("journal_mode", { simple: true }) !== "wal") return null;
  writer.sqlite.pragma("synchronous = NORMAL");
  const wal = `${resolve(file)}-wal`;
  let fd: number | null = null;
  return {
    async sync() {
      if (fd === null) {
        const opened = openSync(wal, "r");
        const directory = openSync(dirname(wal), "r");
        try {
          await flush(directory, false);
        } catch (error) {
          closeSync(opened);
          throw error;
        } finally {
          closeSync(directory);
        }
        fd = opened;
      }
      await flush(fd, true);
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
