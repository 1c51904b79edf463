import type { CaptureKey, CaptureRow, CaptureStatus, CaptureStore, NewCaptureRow } from "../captures.js";
import { CAPTURE_SQL, pageWhere } from "../sql/captures.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf, rowLock } from "./transactions.js";

export class PgCaptures implements CaptureStore {
  async insert(tx: Tx, row: NewCaptureRow): Promise<number> {
    const inserted = await connectionOf(tx).get<{ pk: number }>(
      `INSERT INTO captures (id, agent_id, project, session_id, host, content, content_hash, bytes, redactions, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
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
    return Number(inserted?.pk);
  }

  async byId(r: Reader, id: string): Promise<CaptureRow | undefined> {
    return connectionOf(r).get<CaptureRow>(CAPTURE_SQL.byId, id);
  }

  // Two archivists' digests of one capture (a lease changing hands mid-digest) take turns here.
  async forDigest(tx: Tx, ids: string[]): Promise<CaptureRow[]> {
    if (ids.length === 0) return [];
    return connectionOf(tx).all<CaptureRow>(`SELECT c.* FROM captures c WHERE c.id = ANY(?::text[]) ORDER BY c.pk${rowLock(tx, "c")}`, ids);
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
    return (await connectionOf(tx).run(CAPTURE_SQL.markDigested, JSON.stringify(memoryIds), atIso, pk)).changes > 0;
  }

  async markFailed(tx: Tx, pk: number, error: string, maxAttempts: number): Promise<CaptureStatus | null> {
    return (await connectionOf(tx).get<{ status: CaptureStatus }>(CAPTURE_SQL.markFailed, error, maxAttempts, pk))?.status ?? null;
  }

  async deleteSpent(tx: Tx, nowIso: string, digestedThroughIso: string): Promise<number> {
    return (await connectionOf(tx).run(CAPTURE_SQL.deleteSpent, nowIso, digestedThroughIso)).changes;
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    return (await connectionOf(tx).run(CAPTURE_SQL.deleteProject, project)).changes;
  }
}
