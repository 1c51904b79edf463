import { parentPort } from "node:worker_threads";
import Database from "better-sqlite3";

/**
 * Checkpoints a SQLite store's WAL in a thread of its own (checkpoints.ts): copying a thousand
 * pages into the database and syncing both files takes 15–90 ms of waiting on the disk, which
 * SQLite's automatic checkpoint spent inside a COMMIT on the server's event loop. One connection,
 * opened at the first request and kept; PASSIVE, so it never waits for the writer or a reader and
 * copies what no reader still needs.
 */
export type CheckpointRequest = { type: "checkpoint"; id: number; file: string } | { type: "close"; id: number };

export type CheckpointReply =
  | { id: number; type: "checkpointed"; log: number; checkpointed: number; busy: number }
  | { id: number; type: "closed" }
  | { id: number; type: "error"; message: string };

let db: Database.Database | null = null;

function answer(request: CheckpointRequest): CheckpointReply {
  if (request.type === "close") {
    db?.close();
    db = null;
    return { id: request.id, type: "closed" };
  }
  db ??= new Database(request.file, { fileMustExist: true });
  const [result] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
  return { id: request.id, type: "checkpointed", log: result?.log ?? 0, checkpointed: result?.checkpointed ?? 0, busy: result?.busy ?? 0 };
}

parentPort?.on("message", (request: CheckpointRequest) => {
  let reply: CheckpointReply;
  try {
    reply = answer(request);
  } catch (error) {
    reply = { id: request.id, type: "error", message: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
