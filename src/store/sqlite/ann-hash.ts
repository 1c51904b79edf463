import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** A file's SHA-256: a saved HNSW index is checked against it before hnswlib reads it (ann.ts). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
