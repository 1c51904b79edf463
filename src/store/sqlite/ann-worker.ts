import { parentPort } from "node:worker_threads";
import Database from "better-sqlite3";
import hnswlib from "hnswlib-node";
import { fileSha256 } from "./ann-hash.js";

/**
 * Builds the HNSW index of a SQLite store in a thread of its own (ann.ts): adding 100,000 points
 * takes minutes of CPU, which must never run on the server's event loop. It reads the embeddings
 * on a read-only connection of its own inside one read transaction, so the index holds exactly the
 * database as of the change-log seq it reports, and writes the index to `out`.
 */
export interface BuildRequest {
  type: "build";
  id: number;
  file: string;
  out: string;
  dimensions: number;
  m: number;
  efConstruction: number;
}

export interface HashRequest {
  type: "hash";
  id: number;
  path: string;
}

export type AnnWorkerRequest = BuildRequest | HashRequest;

export type AnnWorkerReply =
  | { id: number; type: "built"; seq: number; count: number; sha256: string }
  | { id: number; type: "hashed"; sha256: string }
  | { id: number; type: "error"; message: string };

const PAGE = 2_000;

async function build(request: BuildRequest): Promise<AnnWorkerReply> {
  const db = new Database(request.file, { readonly: true, fileMustExist: true });
  let seq: number;
  let count = 0;
  const index = new hnswlib.HierarchicalNSW("cosine", request.dimensions);
  try {
    db.pragma("busy_timeout = 5000");
    db.exec("BEGIN");
    seq = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'").get() as { seq: number } | undefined)?.seq ?? 0;
    const total = (db.prepare("SELECT count(*) AS n FROM memory_embeddings").get() as { n: number }).n;
    index.initIndex({ maxElements: Math.max(1_000, Math.ceil(total * 1.25)), m: request.m, efConstruction: request.efConstruction });
    const page = db.prepare("SELECT pk, embedding FROM memory_embeddings WHERE pk > ? ORDER BY pk LIMIT ?");
    let after = -1;
    for (;;) {
      const rows = page.all(after, PAGE) as { pk: number; embedding: Buffer }[];
      for (const row of rows) {
        const vector = new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4);
        if (vector.length !== request.dimensions) continue;
        if (count >= index.getMaxElements()) index.resizeIndex(Math.ceil(index.getMaxElements() * 1.5));
        index.addPoint(Array.from(vector), row.pk);
        count += 1;
      }
      if (rows.length < PAGE) break;
      after = (rows.at(-1) as { pk: number }).pk;
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
  await index.writeIndex(request.out);
  return { id: request.id, type: "built", seq, count, sha256: await fileSha256(request.out) };
}

parentPort?.on("message", (request: AnnWorkerRequest) => {
  const work = request.type === "build" ? build(request) : fileSha256(request.path).then((sha256): AnnWorkerReply => ({ id: request.id, type: "hashed", sha256 }));
  void work
    .catch((error: unknown): AnnWorkerReply => ({ id: request.id, type: "error", message: error instanceof Error ? error.message : String(error) }))
    .then((reply) => parentPort?.postMessage(reply));
});
