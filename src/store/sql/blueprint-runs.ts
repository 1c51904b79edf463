import type { BlueprintRunStore, NewRunNodeRow, NewRunRow, RunFilters, RunNodeRow, RunNodeState, RunRow } from "../blueprint-runs.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { RunStatus } from "../../wire/blueprint-runs.js";
import type { SqlDb } from "./dialect.js";
import { visibleInProject } from "./visibility.js";

// Blueprint runs as one set of statements for both backends. Writes end in RETURNING, since the
// shared runner reads rows.

export const RUN_COLUMNS = `r.pk, r.id, r.blueprint_pk, r.project, r.params, r.status, r.created_by, r.created_at, r.updated_at,
  b.id AS blueprint_id, b.name AS blueprint_name, b.version AS blueprint_version, b.document`;
export const RUN_FROM = "blueprint_runs r JOIN blueprints b ON b.pk = r.blueprint_pk";

const NODE_COLUMNS = `n.pk, n.run_pk, n.node_id, n.key, n.task_pk, n.state, n.item, n.item_index, n.attempt, n.anchors, n.gate_task_pk,
  t.id AS task_id, t.status AS task_status`;
const NODE_FROM = "blueprint_run_nodes n LEFT JOIN tasks t ON t.pk = n.task_pk";

export const toRun = (row: RunRow): RunRow => ({ ...row, pk: Number(row.pk), blueprint_pk: Number(row.blueprint_pk), blueprint_version: Number(row.blueprint_version) });
const toNode = (row: RunNodeRow): RunNodeRow => ({
  ...row,
  pk: Number(row.pk),
  run_pk: Number(row.run_pk),
  task_pk: row.task_pk === null ? null : Number(row.task_pk),
  item_index: row.item_index === null ? null : Number(row.item_index),
  attempt: Number(row.attempt),
  gate_task_pk: row.gate_task_pk === null ? null : Number(row.gate_task_pk),
});

export class SqlBlueprintRuns implements BlueprintRunStore {
  constructor(private readonly db: SqlDb) {}

  async insertRun(tx: Tx, row: NewRunRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO blueprint_runs (id, blueprint_pk, project, params, status, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.blueprint_pk, row.project, row.params, row.status, row.created_by, row.created_at, row.updated_at,
    );
    return Number(inserted?.pk);
  }

  private async one(r: Reader, where: string, params: unknown[]): Promise<RunRow | undefined> {
    const [row] = await this.db.all<RunRow>(r, `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE ${where}`, ...params);
    return row && toRun(row);
  }

  byId(r: Reader, id: string): Promise<RunRow | undefined> {
    return this.one(r, "r.id = ?", [id]);
  }

  byPk(r: Reader, pk: number): Promise<RunRow | undefined> {
    return this.one(r, "r.pk = ?", [pk]);
  }

  visible(r: Reader, viewpoint: Viewpoint, id: string): Promise<RunRow | undefined> {
    const visible = visibleInProject("r", viewpoint);
    return this.one(r, `r.id = ? AND ${visible.sql}`, [id, ...visible.params]);
  }

  async list(r: Reader, viewpoint: Viewpoint, filters: RunFilters, afterPk: number | null, limit: number): Promise<RunRow[]> {
    const visible = visibleInProject("r", viewpoint);
    const where = [visible.sql];
    const params: unknown[] = [...visible.params];
    if (filters.name !== undefined) {
      where.push("b.name = ?");
      params.push(filters.name);
    }
    if (filters.project !== undefined) {
      where.push(filters.project === null ? "r.project IS NULL" : "r.project = ?");
      if (filters.project !== null) params.push(filters.project);
    }
    if (filters.status !== undefined) {
      where.push("r.status = ?");
      params.push(filters.status);
    }
    if (afterPk !== null) {
      where.push("r.pk < ?");
      params.push(afterPk);
    }
    const rows = await this.db.all<RunRow>(r, `SELECT ${RUN_COLUMNS} FROM ${RUN_FROM} WHERE ${where.join(" AND ")} ORDER BY r.pk DESC LIMIT ?`, ...params, limit);
    return rows.map(toRun);
  }

  async setStatus(tx: Tx, pk: number, status: RunStatus, at: string): Promise<void> {
    await this.db.all(tx, "UPDATE blueprint_runs SET status = ?, updated_at = ? WHERE pk = ? RETURNING pk", status, at, pk);
  }

  async touch(tx: Tx, pk: number, at: string): Promise<void> {
    await this.db.all(tx, "UPDATE blueprint_runs SET updated_at = ? WHERE pk = ? RETURNING pk", at, pk);
  }

  async insertNode(tx: Tx, row: NewRunNodeRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO blueprint_run_nodes (run_pk, node_id, key, task_pk, state, item, item_index, attempt, anchors, gate_task_pk)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.run_pk, row.node_id, row.key, row.task_pk, row.state, row.item, row.item_index, row.attempt, row.anchors, row.gate_task_pk,
    );
    return Number(inserted?.pk);
  }

  async nodes(r: Reader, runPk: number): Promise<RunNodeRow[]> {
    const rows = await this.db.all<RunNodeRow>(r, `SELECT ${NODE_COLUMNS} FROM ${NODE_FROM} WHERE n.run_pk = ? ORDER BY n.pk`, runPk);
    return rows.map(toNode);
  }

  async nodeOfTask(r: Reader, taskPk: number): Promise<RunNodeRow | undefined> {
    const [row] = await this.db.all<RunNodeRow>(r, `SELECT ${NODE_COLUMNS} FROM ${NODE_FROM} WHERE n.task_pk = ?`, taskPk);
    return row && toNode(row);
  }

  async patchNode(tx: Tx, pk: number, patch: { state?: RunNodeState; attempt?: number }): Promise<void> {
    if (patch.state !== undefined) await this.db.all(tx, "UPDATE blueprint_run_nodes SET state = ? WHERE pk = ? RETURNING pk", patch.state, pk);
    if (patch.attempt !== undefined) await this.db.all(tx, "UPDATE blueprint_run_nodes SET attempt = ? WHERE pk = ? RETURNING pk", patch.attempt, pk);
  }

  async deleteNode(tx: Tx, pk: number): Promise<void> {
    await this.db.all(tx, "DELETE FROM blueprint_run_nodes WHERE pk = ? RETURNING pk", pk);
  }

  async gatesWaitingOn(r: Reader, taskPk: number): Promise<RunNodeRow[]> {
    const rows = await this.db.all<RunNodeRow>(r, `SELECT ${NODE_COLUMNS} FROM ${NODE_FROM} WHERE n.gate_task_pk = ? AND t.status = 'open' ORDER BY n.pk`, taskPk);
    return rows.map(toNode);
  }

  async dueTimers(r: Reader, nowIso: string, limit: number): Promise<RunNodeRow[]> {
    const rows = await this.db.all<RunNodeRow>(
      r,
      `SELECT ${NODE_COLUMNS} FROM tasks t JOIN blueprint_run_nodes n ON n.task_pk = t.pk
       WHERE t.gate = 'timer' AND t.status = 'open' AND t.due_at IS NOT NULL AND t.due_at <= ? ORDER BY t.due_at LIMIT ?`,
      nowIso, limit,
    );
    return rows.map(toNode);
  }
}
