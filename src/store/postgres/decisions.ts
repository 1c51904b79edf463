import type { IdRef } from "../../core/ids.js";
import type { DecisionFilters, DecisionRow, DecisionStore, NewDecisionRow } from "../decisions.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import { decisionWhere } from "../sql/decisions.js";
import { idMatch, visibleInProject } from "../sql/visibility.js";
import { connectionOf, rowLock } from "./transactions.js";

// Every column but the keyword index's generated `search`, which SQLite's table does not have.
export const DECISION_COLUMNS = "d.pk, d.id, d.project, d.agent_id, d.task_id, d.decision, d.rationale, d.alternatives, d.memory_refs, d.tags, d.supersedes, d.superseded_by, d.created_at";

// plainto_tsquery ANDs the words, stems them as the column was, drops stopwords, and reads its
// input as text, never as query syntax.
const keywordMatch = (words: string[]) => ({ sql: "d.search @@ plainto_tsquery('english', ?)", params: [words.join(" ")] });

export class PgDecisions implements DecisionStore {
  async insert(tx: Tx, row: NewDecisionRow, tags: string[]): Promise<number> {
    const db = connectionOf(tx);
    const result = await db.run(
      `INSERT INTO decisions (id, project, agent_id, task_id, decision, rationale, alternatives, memory_refs, tags, supersedes, superseded_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id,
      row.project,
      row.agent_id,
      row.task_id,
      row.decision,
      row.rationale,
      row.alternatives,
      row.memory_refs,
      row.tags,
      row.supersedes,
      row.superseded_by,
      row.created_at,
    );
    const pk = Number(result.rows[0]?.pk);
    for (const tag of tags) await db.run("INSERT INTO decision_tags (tag, decision_pk) VALUES (?, ?)", tag, pk);
    return pk;
  }

  async byPk(r: Reader, pk: number): Promise<DecisionRow | undefined> {
    return connectionOf(r).get<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.pk = ?`, pk);
  }

  async byId(r: Reader, id: string): Promise<DecisionRow | undefined> {
    return connectionOf(r).get<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.id = ?${rowLock(r, "d")}`, id);
  }

  /**
   * In a transaction, the rows are locked until it ends: of two transactions superseding the same
   * decision, the second reads it only once the first has committed, superseded.
   */
  async findVisible(r: Reader, viewpoint: Viewpoint, match: IdRef): Promise<DecisionRow[]> {
    const visible = visibleInProject("d", viewpoint);
    const id = idMatch("d.id", match);
    return connectionOf(r).all<DecisionRow>(
      `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${id.sql} AND ${visible.sql} LIMIT 2${rowLock(r, "d")}`,
      ...id.params,
      ...visible.params,
    );
  }

  async markSuperseded(tx: Tx, pk: number, by: string): Promise<boolean> {
    return (await connectionOf(tx).run("UPDATE decisions SET superseded_by = ? WHERE pk = ? AND superseded_by IS NULL", by, pk)).changes > 0;
  }

  async list(r: Reader, viewpoint: Viewpoint, filters: DecisionFilters, after: { at: string; pk: number } | null, limit: number): Promise<DecisionRow[]> {
    const { where, params } = decisionWhere(viewpoint, filters, keywordMatch);
    if (after) {
      where.push("(d.created_at < ? OR (d.created_at = ? AND d.pk < ?))");
      params.push(after.at, after.at, after.pk);
    }
    return connectionOf(r).all<DecisionRow>(
      `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.pk DESC LIMIT ?`,
      ...params,
      limit,
    );
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    return (await connectionOf(tx).run("DELETE FROM decisions WHERE project = ?", project)).changes;
  }
}
