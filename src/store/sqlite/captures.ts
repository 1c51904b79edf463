import type { CaptureKey, CaptureRow, CaptureStatus, CaptureStore, NewCaptureRow } from "../captures.js";
import { CAPTURE_SQL, pageWhere } from "../sql/captures.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";

export class SqliteCaptures implements CaptureStore {
  async insert(tx: Tx, row: NewCaptureRow): Promise<number> {
    const result = connectionOf(tx).run(
      `INSERT INTO captures (id, agent_id, project, session_id, host, content, content_hash, bytes, redactions, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.agent_id,
      row.project,
      row.session_id,
      row.host,
      row.content,
      row.content_hash,
      row.bytes,
      row.redactions,
      row.created_at,
      row.expires_at,
    );
    return Number(result.lastInsertRowid);
  }

  async byId(r: Reader, id: string): Promise<CaptureRow | undefined> {
    return connectionOf(r).get<CaptureRow>(CAPTURE_SQL.byId, id);
  }

  // One writer: nothing else changes a row between this read and the transaction's update.
  async forDigest(tx: Tx, ids: string[]): Promise<CaptureRow[]> {
    if (ids.length === 0) return [];
    return connectionOf(tx).all<CaptureRow>(`SELECT c.* FROM captures c WHERE c.id IN (${ids.map(() => "?").join(", ")})`, ...ids);
  }

  async duplicate(r: Reader, agentId: string, sessionId: string | null, contentHash: string, sinceIso: string): Promise<CaptureRow | undefined> {
    return connectionOf(r).get<CaptureRow>(CAPTURE_SQL.duplicate, agentId, contentHash, sinceIso, sessionId);
  }

  async pending(r: Reader, project: string | null | undefined, nowIso: string, after: CaptureKey | null, limit: number): Promise<CaptureRow[]> {
    const where = ["c.status = 'pending'", "c.expires_at > ?"];
    const params: unknown[] = [nowIso];
    pageWhere(where, params, project, after, false);
    return connectionOf(r).all<CaptureRow>(`SELECT c.* FROM captures c WHERE ${where.join(" AND ")} ORDER BY c.created_at, c.pk LIMIT ?`, ...params, limit);
  }

  async byAuthor(r: Reader, agentId: string, project: string | null | undefined, after: CaptureKey | null, limit: number): Promise<CaptureRow[]> {
    const where = ["c.agent_id = ?"];
    const params: unknown[] = [agentId];
    pageWhere(where, params, project, after, true);
    return connectionOf(r).all<CaptureRow>(`SELECT c.* FROM captures c WHERE ${where.join(" AND ")} ORDER BY c.created_at DESC, c.pk DESC LIMIT ?`, ...params, limit);
  }

  async markDigested(tx: Tx, pk: number, memoryIds: string[], atIso: string): Promise<boolean> {
    return connectionOf(tx).run(CAPTURE_SQL.markDigested, JSON.stringify(memoryIds), atIso, pk).changes > 0;
  }

  async markFailed(tx: Tx, pk: number, error: string, maxAttempts: number): Promise<CaptureStatus | null> {
    return connectionOf(tx).get<{ status: CaptureStatus }>(CAPTURE_SQL.markFailed, error, maxAttempts, pk)?.status ?? null;
  }

  async deleteSpent(tx: Tx, nowIso: string, digestedThroughIso: string): Promise<number> {
    return connectionOf(tx).run(CAPTURE_SQL.deleteSpent, nowIso, digestedThroughIso).changes;
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    return connectionOf(tx).run(CAPTURE_SQL.deleteProject, project).changes;
  }
}
