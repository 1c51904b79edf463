import type { IdRef } from "../../core/ids.js";
import type { DecisionFilters, DecisionRow, DecisionStore, NewDecisionRow } from "../decisions.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { idMatch, visibleInProject, type SqlFragment } from "./visibility.js";

/** Every column of a decision but PostgreSQL's generated keyword column `search`, which SQLite's table does not have. */
export const DECISION_COLUMNS = "d.pk, d.id, d.project, d.agent_id, d.task_id, d.decision, d.rationale, d.alternatives, d.memory_refs, d.tags, d.supersedes, d.superseded_by, d.created_at";

/** The keyword condition on decisions `d`: every one of the words in the decision or its rationale. */
export type DecisionMatch = (words: string[]) => SqlFragment;

/**
 * The WHERE clause of a decision listing, as both stores run it: visibility, then each filter
 * given. Only the keyword match differs between them (FTS5, tsvector): `matching` writes it.
 */
function decisionWhere(viewpoint: Viewpoint, filters: DecisionFilters, matching: DecisionMatch): { where: string[]; params: unknown[] } {
  const visible = visibleInProject("d", viewpoint);
  const where = [visible.sql];
  const params: unknown[] = [...visible.params];
  const add = ({ sql, params: values }: SqlFragment): void => {
    where.push(sql);
    params.push(...values);
  };
  if (!filters.includeSuperseded) add({ sql: "d.superseded_by IS NULL", params: [] });
  if (filters.project === null) add({ sql: "d.project IS NULL", params: [] });
  else if (filters.project !== undefined) add({ sql: "d.project = ?", params: [filters.project] });
  if (filters.task !== undefined) add(idMatch("d.task_id", filters.task));
  if (filters.agent !== undefined) add({ sql: "d.agent_id = ?", params: [filters.agent] });
  if (filters.tag !== undefined) add({ sql: "d.pk IN (SELECT decision_pk FROM decision_tags WHERE tag = ?)", params: [filters.tag] });
  if (filters.words !== undefined) add(matching(filters.words));
  return { where, params };
}

export class SqlDecisions implements DecisionStore {
  /** `matching` is the backend's keyword index (sqlite/keywords.ts, postgres/keywords.ts). */
  constructor(
    private readonly db: SqlDb,
    private readonly matching: DecisionMatch,
  ) {}

  async insert(tx: Tx, row: NewDecisionRow, tags: string[]): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO decisions (id, project, agent_id, task_id, decision, rationale, alternatives, memory_refs, tags, supersedes, superseded_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.project, row.agent_id, row.task_id, row.decision, row.rationale, row.alternatives, row.memory_refs, row.tags,
      row.supersedes, row.superseded_by, row.created_at,
    );
    const pk = Number(inserted?.pk);
    if (tags.length > 0) {
      const listed = this.db.dialect.listRows(tags, "t");
      await this.db.run(tx, `INSERT INTO decision_tags (tag, decision_pk) SELECT t.value, CAST(? AS BIGINT) FROM ${listed.sql}`, pk, ...listed.params);
    }
    return pk;
  }

  byPk(r: Reader, pk: number): Promise<DecisionRow | undefined> {
    return this.db.get<DecisionRow>(r, `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.pk = ?`, pk);
  }

  byId(r: Reader, id: string): Promise<DecisionRow | undefined> {
    return this.db.get<DecisionRow>(r, `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.id = ?${this.db.dialect.lockRows(r, "d")}`, id);
  }

  /**
   * In a transaction, the rows are locked until it ends: of two transactions superseding the same
   * decision, the second reads it only once the first has committed, superseded.
   */
  findVisible(r: Reader, viewpoint: Viewpoint, match: IdRef): Promise<DecisionRow[]> {
    const visible = visibleInProject("d", viewpoint);
    const id = idMatch("d.id", match);
    return this.db.all<DecisionRow>(
      r,
      `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${id.sql} AND ${visible.sql} LIMIT 2${this.db.dialect.lockRows(r, "d")}`,
      ...id.params,
      ...visible.params,
    );
  }

  async markSuperseded(tx: Tx, pk: number, by: string): Promise<boolean> {
    return (await this.db.run(tx, "UPDATE decisions SET superseded_by = ? WHERE pk = ? AND superseded_by IS NULL", by, pk)) > 0;
  }

  list(r: Reader, viewpoint: Viewpoint, filters: DecisionFilters, after: { at: string; pk: number } | null, limit: number): Promise<DecisionRow[]> {
    const { where, params } = decisionWhere(viewpoint, filters, this.matching);
    if (after) {
      where.push("(d.created_at < ? OR (d.created_at = ? AND d.pk < ?))");
      params.push(after.at, after.at, after.pk);
    }
    return this.db.all<DecisionRow>(
      r,
      `SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} ORDER BY d.created_at DESC, d.pk DESC LIMIT ?`,
      ...params,
      limit,
    );
  }

  deleteProject(tx: Tx, project: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM decisions WHERE project = ?", project);
  }
}
