import type { CaptureKey, CaptureRow, CaptureStatus, CaptureStore, NewCaptureRow } from "../captures.js";
import type { Reader, Tx } from "../store.js";
import type { SqlDb } from "./dialect.js";

// Captures as one set of statements for both backends (`?` parameters; PostgreSQL's connection
// numbers them). Writes that report how many rows they touched count their RETURNING rows.

/** WHERE and parameters of a captures page: a project (null: none; undefined: any) and a keyset. */
function pageWhere(base: string[], params: unknown[], project: string | null | undefined, after: CaptureKey | null, newestFirst: boolean): void {
  if (project === null) base.push("c.project IS NULL");
  else if (project !== undefined) {
    base.push("c.project = ?");
    params.push(project);
  }
  if (after) {
    const op = newestFirst ? "<" : ">";
    base.push(`(c.created_at ${op} ? OR (c.created_at = ? AND c.pk ${op} ?))`);
    params.push(after.at, after.at, after.pk);
  }
}

export class SqlCaptures implements CaptureStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: NewCaptureRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO captures (id, agent_id, project, session_id, host, content, content_hash, bytes, redactions, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.agent_id, row.project, row.session_id, row.host, row.content, row.content_hash, row.bytes, row.redactions, row.created_at, row.expires_at,
    );
    return Number(inserted?.pk);
  }

  async byId(r: Reader, id: string): Promise<CaptureRow | undefined> {
    return (await this.db.all<CaptureRow>(r, "SELECT c.* FROM captures c WHERE c.id = ?", id))[0];
  }

  // Two archivists' digests of one capture (a lease changing hands mid-digest) take turns here.
  async forDigest(tx: Tx, ids: string[]): Promise<CaptureRow[]> {
    if (ids.length === 0) return [];
    const listed = this.db.dialect.inList("c.id", ids);
    return this.db.all<CaptureRow>(tx, `SELECT c.* FROM captures c WHERE ${listed.sql} ORDER BY c.pk${this.db.dialect.lockRows(tx, "c")}`, ...listed.params);
  }

  async duplicate(r: Reader, agentId: string, sessionId: string | null, contentHash: string, sinceIso: string): Promise<CaptureRow | undefined> {
    const rows = await this.db.all<CaptureRow>(
      r,
      `SELECT c.* FROM captures c
        WHERE c.agent_id = ? AND c.content_hash = ? AND c.created_at >= ? AND c.session_id IS NOT DISTINCT FROM CAST(? AS TEXT)
        ORDER BY c.created_at DESC, c.pk DESC LIMIT 1`,
      agentId, contentHash, sinceIso, sessionId,
    );
    return rows[0];
  }

  pending(r: Reader, project: string | null | undefined, nowIso: string, after: CaptureKey | null, limit: number): Promise<CaptureRow[]> {
    const where = ["c.status = 'pending'", "c.expires_at > ?"];
    const params: unknown[] = [nowIso];
    pageWhere(where, params, project, after, false);
    return this.db.all<CaptureRow>(r, `SELECT c.* FROM captures c WHERE ${where.join(" AND ")} ORDER BY c.created_at, c.pk LIMIT ?`, ...params, limit);
  }

  byAuthor(r: Reader, agentId: string, project: string | null | undefined, after: CaptureKey | null, limit: number): Promise<CaptureRow[]> {
    const where = ["c.agent_id = ?"];
    const params: unknown[] = [agentId];
    pageWhere(where, params, project, after, true);
    return this.db.all<CaptureRow>(r, `SELECT c.* FROM captures c WHERE ${where.join(" AND ")} ORDER BY c.created_at DESC, c.pk DESC LIMIT ?`, ...params, limit);
  }

  async markDigested(tx: Tx, pk: number, memoryIds: string[], atIso: string): Promise<boolean> {
    const rows = await this.db.all(
      tx,
      "UPDATE captures SET status = 'digested', memory_ids = ?, digested_at = ?, last_error = NULL WHERE pk = ? AND status = 'pending' RETURNING pk",
      JSON.stringify(memoryIds), atIso, pk,
    );
    return rows.length > 0;
  }

  async markFailed(tx: Tx, pk: number, error: string, maxAttempts: number): Promise<CaptureStatus | null> {
    const [row] = await this.db.all<{ status: CaptureStatus }>(
      tx,
      `UPDATE captures SET attempts = attempts + 1, last_error = ?,
        status = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'pending' END
        WHERE pk = ? AND status = 'pending' RETURNING status`,
      error, maxAttempts, pk,
    );
    return row?.status ?? null;
  }

  async deleteSpent(tx: Tx, nowIso: string, digestedThroughIso: string): Promise<number> {
    return (await this.db.all(tx, "DELETE FROM captures WHERE expires_at <= ? OR (status = 'digested' AND digested_at <= ?) RETURNING pk", nowIso, digestedThroughIso)).length;
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    return (await this.db.all(tx, "DELETE FROM captures WHERE project = ? RETURNING pk", project)).length;
  }
}
