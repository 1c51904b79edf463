import type { BlueprintRow, BlueprintStore, NewBlueprintRow } from "../blueprints.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { visibleInProject } from "./visibility.js";

// Blueprints as one set of statements for both backends (an insert returns its key with
// RETURNING, which SQLite has too).

export const BLUEPRINT_COLUMNS = "b.pk, b.id, b.project, b.name, b.version, b.document, b.doc_hash, b.node_count, b.created_by, b.created_at";

export const toBlueprintRow = (row: BlueprintRow): BlueprintRow => ({ ...row, pk: Number(row.pk), version: Number(row.version), node_count: Number(row.node_count) });

export class SqlBlueprints implements BlueprintStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: NewBlueprintRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO blueprints (id, project, project_key, name, version, document, doc_hash, node_count, created_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.id, row.project, row.project ?? "", row.name, row.version, row.document, row.doc_hash, row.node_count, row.created_by, row.created_at,
    );
    return Number(inserted?.pk);
  }

  async latest(r: Reader, project: string | null, name: string): Promise<BlueprintRow | undefined> {
    const [row] = await this.db.all<BlueprintRow>(
      r,
      `SELECT ${BLUEPRINT_COLUMNS} FROM blueprints b WHERE b.project_key = ? AND b.name = ? ORDER BY b.version DESC LIMIT 1`,
      project ?? "", name,
    );
    return row && toBlueprintRow(row);
  }

  async current(
    r: Reader,
    viewpoint: Viewpoint,
    filters: { project?: string | null | undefined; name?: string | undefined },
    after: string | null,
    limit: number,
  ): Promise<BlueprintRow[]> {
    const visible = visibleInProject("b", viewpoint);
    const where = [visible.sql, "b.version = (SELECT max(x.version) FROM blueprints x WHERE x.project_key = b.project_key AND x.name = b.name)"];
    const params: unknown[] = [...visible.params];
    if (filters.project !== undefined) {
      where.push("b.project_key = ?");
      params.push(filters.project ?? "");
    }
    if (filters.name !== undefined) {
      where.push("b.name = ?");
      params.push(filters.name);
    }
    if (after !== null) {
      const [key, name] = JSON.parse(after) as [string, string];
      where.push("(b.project_key > ? OR (b.project_key = ? AND b.name > ?))");
      params.push(key, key, name);
    }
    const rows = await this.db.all<BlueprintRow>(r, `SELECT ${BLUEPRINT_COLUMNS} FROM blueprints b WHERE ${where.join(" AND ")} ORDER BY b.project_key, b.name LIMIT ?`, ...params, limit);
    return rows.map(toBlueprintRow);
  }

  async versions(r: Reader, viewpoint: Viewpoint, project: string | null, name: string, limit: number): Promise<BlueprintRow[]> {
    const visible = visibleInProject("b", viewpoint);
    const rows = await this.db.all<BlueprintRow>(
      r,
      `SELECT ${BLUEPRINT_COLUMNS} FROM blueprints b WHERE b.project_key = ? AND b.name = ? AND ${visible.sql} ORDER BY b.version DESC LIMIT ?`,
      project ?? "", name, ...visible.params, limit,
    );
    return rows.map(toBlueprintRow);
  }
}
