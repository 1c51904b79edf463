import type { Db } from "./db.js";

export interface StoredResponse {
  request_hash: string;
  status: number;
  body: string | null;
  headers: string;
}

export const findStoredResponse = (db: Db, agentId: string, key: string): StoredResponse | undefined =>
  db.get<StoredResponse>("SELECT request_hash, status, body, headers FROM idempotency WHERE agent_id = ? AND key = ?", agentId, key);

export function storeResponse(db: Db, agentId: string, key: string, response: StoredResponse, at: string): void {
  db.run(
    `INSERT INTO idempotency (agent_id, key, request_hash, status, body, headers, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (agent_id, key) DO NOTHING`,
    agentId,
    key,
    response.request_hash,
    response.status,
    response.body,
    response.headers,
    at,
  );
}

export const pruneStoredResponses = (db: Db, before: string): number =>
  db.run("DELETE FROM idempotency WHERE created_at < ?", before).changes;
