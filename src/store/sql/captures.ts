import type { CaptureKey } from "../captures.js";

/**
 * The statements both backends run alike: plain SQL with `?` parameters (PostgreSQL's
 * connection numbers them). Only inserting (a key back) and the row lock differ.
 */
export const CAPTURE_SQL = {
  byId: "SELECT c.* FROM captures c WHERE c.id = ?",
  duplicate: `SELECT c.* FROM captures c
    WHERE c.agent_id = ? AND c.content_hash = ? AND c.created_at >= ? AND c.session_id IS NOT DISTINCT FROM CAST(? AS TEXT)
    ORDER BY c.created_at DESC, c.pk DESC LIMIT 1`,
  markDigested: "UPDATE captures SET status = 'digested', memory_ids = ?, digested_at = ?, last_error = NULL WHERE pk = ? AND status = 'pending'",
  markFailed: `UPDATE captures SET attempts = attempts + 1, last_error = ?,
    status = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'pending' END
    WHERE pk = ? AND status = 'pending' RETURNING status`,
  deleteSpent: "DELETE FROM captures WHERE expires_at <= ? OR (status = 'digested' AND digested_at <= ?)",
  deleteProject: "DELETE FROM captures WHERE project = ?",
} as const;

/** WHERE and parameters of a captures page: a project (null: none; undefined: any) and a keyset. */
export function pageWhere(base: string[], params: unknown[], project: string | null | undefined, after: CaptureKey | null, newestFirst: boolean): void {
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
