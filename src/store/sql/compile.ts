import type { AnchorChange, AnchorKey, AnchorRow, CompileStore, ListedAnchor, NewAnchorRow, ReachedEntry } from "../compile.js";
import type { MemoryRow } from "../memory.js";
import type { Reader, Tx } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { visibleMemory } from "./visibility.js";

// Compile's anchors as one set of statements for both backends. An anchor's project is kept as
// `project_key` ('' for global code), so one unique key covers both and every lookup uses it.

export const ANCHOR_COLUMNS = `a.pk, a.project, a.path, a.symbol, a.kind, a.lang, a.start_line, a.end_line, a.sha, a.previous_sha,
  a.signature, a.memory_pk, a.git_commit, a.created_at, a.updated_at`;

// Both stores compare text by its UTF-8 bytes (SQLite's BINARY, PostgreSQL's "C"), where nothing
// sorts after U+10FFFF: `path >= p AND path < p || U+10FFFF` is "starts with p", served by the key.
const AFTER_EVERYTHING = "\u{10FFFF}";

/** Paths per statement when each needs its own condition. */
const PATHS_PER_QUERY = 100;

const LIVE = "m.deleted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)";

export const toAnchor = <T extends AnchorRow>(row: T): T => ({
  ...row,
  pk: Number(row.pk),
  memory_pk: Number(row.memory_pk),
  start_line: Number(row.start_line),
  end_line: Number(row.end_line),
});

const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
};

export class SqlCompile implements CompileStore {
  constructor(private readonly db: SqlDb) {}

  async anchorSha(r: Reader, project: string | null, path: string, symbol: string): Promise<string | null> {
    const [row] = await this.db.all<{ sha: string }>(r, "SELECT a.sha FROM compile_anchors a WHERE a.project_key = ? AND a.path = ? AND a.symbol = ?", project ?? "", path, symbol);
    return row?.sha ?? null;
  }

  async anchorsAt(r: Reader, project: string | null, paths: readonly string[]): Promise<AnchorRow[]> {
    if (paths.length === 0) return [];
    const listed = this.db.dialect.inList("a.path", paths);
    const rows = await this.db.all<AnchorRow>(r, `SELECT ${ANCHOR_COLUMNS} FROM compile_anchors a WHERE a.project_key = ? AND ${listed.sql}${this.db.dialect.lockRows(r, "a")}`, project ?? "", ...listed.params);
    return rows.map(toAnchor);
  }

  async anchorsUnder(r: Reader, project: string | null, paths: readonly string[]): Promise<AnchorRow[]> {
    const found: AnchorRow[] = [];
    for (const part of chunks(paths, PATHS_PER_QUERY)) {
      const conditions = part.map(() => "(a.path = ? OR (a.path >= ? AND a.path < ?))").join(" OR ");
      const params = part.flatMap((path) => [path, `${path}/`, `${path}/${AFTER_EVERYTHING}`]);
      const rows = await this.db.all<AnchorRow>(r, `SELECT ${ANCHOR_COLUMNS} FROM compile_anchors a WHERE a.project_key = ? AND (${conditions})${this.db.dialect.lockRows(r, "a")}`, project ?? "", ...params);
      found.push(...rows.map(toAnchor));
    }
    // Overlapping paths (`a` and `a/b`) find some anchors twice.
    return [...new Map(found.map((row) => [row.pk, row])).values()];
  }

  async onlyAnchorsNamed(r: Reader, project: string | null, symbols: readonly string[]): Promise<AnchorRow[]> {
    if (symbols.length === 0) return [];
    const listed = this.db.dialect.inList("a.symbol", symbols);
    const rows = await this.db.all<AnchorRow>(
      r,
      `SELECT ${ANCHOR_COLUMNS} FROM compile_anchors a WHERE a.project_key = ? AND ${listed.sql}
        AND NOT EXISTS (SELECT 1 FROM compile_anchors b WHERE b.project_key = a.project_key AND b.symbol = a.symbol AND b.pk <> a.pk)`,
      project ?? "", ...listed.params,
    );
    return rows.map(toAnchor);
  }

  async list(
    r: Reader,
    project: string | null,
    filters: { path?: string | undefined; pathPrefix?: string | undefined },
    nowIso: string,
    after: AnchorKey | null,
    limit: number,
  ): Promise<ListedAnchor[]> {
    const where = ["a.project_key = ?", LIVE];
    const params: unknown[] = [project ?? "", nowIso];
    if (filters.path !== undefined) {
      where.push("a.path = ?");
      params.push(filters.path);
    }
    if (filters.pathPrefix !== undefined) {
      where.push("a.path >= ? AND a.path < ?");
      params.push(filters.pathPrefix, `${filters.pathPrefix}${AFTER_EVERYTHING}`);
    }
    if (after !== null) {
      where.push("(a.path > ? OR (a.path = ? AND a.symbol > ?))");
      params.push(after.path, after.path, after.symbol);
    }
    const rows = await this.db.all<ListedAnchor>(
      r,
      `SELECT ${ANCHOR_COLUMNS}, m.id AS memory_id FROM compile_anchors a JOIN memory m ON m.pk = a.memory_pk
        WHERE ${where.join(" AND ")} ORDER BY a.path, a.symbol LIMIT ?`,
      ...params, limit,
    );
    return rows.map(toAnchor);
  }

  async count(r: Reader, project: string | null): Promise<number> {
    const [row] = await this.db.all<{ n: unknown }>(r, "SELECT count(*) AS n FROM compile_anchors a WHERE a.project_key = ?", project ?? "");
    return Number(row?.n ?? 0);
  }

  async insert(tx: Tx, row: NewAnchorRow): Promise<number> {
    const [inserted] = await this.db.all<{ pk: unknown }>(
      tx,
      `INSERT INTO compile_anchors (project, project_key, path, symbol, kind, lang, start_line, end_line, sha, previous_sha, signature,
         memory_pk, git_commit, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
      row.project, row.project ?? "", row.path, row.symbol, row.kind, row.lang, row.start_line, row.end_line, row.sha, row.previous_sha, row.signature, row.memory_pk, row.git_commit, row.created_at, row.updated_at,
    );
    return Number(inserted?.pk);
  }

  async update(tx: Tx, pk: number, change: AnchorChange): Promise<void> {
    const entries = Object.entries(change).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return;
    // The column names come from AnchorChange's keys, never from a request.
    await this.db.all(tx, `UPDATE compile_anchors SET ${entries.map(([column]) => `${column} = ?`).join(", ")} WHERE pk = ? RETURNING pk`, ...entries.map(([, value]) => value), pk);
  }

  async remove(tx: Tx, pks: readonly number[]): Promise<void> {
    for (const part of chunks(pks, 500)) {
      await this.db.all(tx, `DELETE FROM compile_anchors WHERE pk IN (${part.map(() => "?").join(", ")}) RETURNING pk`, ...part);
    }
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    return (await this.db.all(tx, "DELETE FROM compile_anchors WHERE project_key = ? RETURNING pk", project)).length;
  }

  grounded(r: Reader, ids: readonly string[], nowIso: string): Promise<ReachedEntry[]> {
    return this.reached(r, ids, nowIso, "grounds");
  }

  dependents(r: Reader, ids: readonly string[], nowIso: string): Promise<ReachedEntry[]> {
    return this.reached(r, ids, nowIso, "depends_on");
  }

  /**
   * `grounds` runs from the compiled entry to the entry about its code; `depends_on` from the
   * dependent to what it depends on. Either way the entry reached is read to be marked, so inside a
   * transaction it is held until that ends, in key order.
   */
  private async reached(r: Reader, ids: readonly string[], nowIso: string, rel: "grounds" | "depends_on"): Promise<ReachedEntry[]> {
    if (ids.length === 0) return [];
    const [from, to, only] = rel === "grounds" ? ["src_pk", "dst_pk", ""] : ["dst_pk", "src_pk", " AND m.type = 'compiled'"];
    const listed = this.db.dialect.inList("c.id", ids);
    const rows = await this.db.all<ReachedEntry>(
      r,
      `SELECT m.*, c.id AS via_id FROM graph_edges e JOIN memory c ON c.pk = e.${from} JOIN memory m ON m.pk = e.${to}
        WHERE ${listed.sql} AND e.rel = ? AND ${LIVE}${only} ORDER BY m.pk${this.db.dialect.lockRows(r, "m")}`,
      ...listed.params, rel, nowIso,
    );
    return rows.map((row) => ({ ...row, pk: Number(row.pk) }));
  }

  async dropDependsOn(tx: Tx, srcPk: number, keepIds: readonly string[]): Promise<void> {
    const kept = this.db.dialect.inList("k.id", keepIds);
    await this.db.all(
      tx,
      `DELETE FROM graph_edges WHERE src_pk = ? AND rel = 'depends_on' AND dst_pk NOT IN (SELECT k.pk FROM memory k WHERE ${kept.sql}) RETURNING pk`,
      srcPk, ...kept.params,
    );
  }

  async stale(r: Reader, viewpoint: Viewpoint, project: string | null, nowIso: string, after: { at: string; pk: number } | null, limit: number): Promise<MemoryRow[]> {
    const visible = visibleMemory("m", viewpoint);
    const where = [project === null ? "m.project IS NULL" : "m.project = ?", "m.stale_since IS NOT NULL", LIVE, visible.sql];
    const params: unknown[] = [...(project === null ? [] : [project]), nowIso, ...visible.params];
    if (after !== null) {
      where.push("(m.stale_since > ? OR (m.stale_since = ? AND m.pk > ?))");
      params.push(after.at, after.at, after.pk);
    }
    const rows = await this.db.all<MemoryRow>(r, `SELECT m.* FROM memory m WHERE ${where.join(" AND ")} ORDER BY m.stale_since, m.pk LIMIT ?`, ...params, limit);
    return rows.map((row) => ({ ...row, pk: Number(row.pk) }));
  }
}
