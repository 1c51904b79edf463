import type { Db } from "./db.js";
import { visibleMemory, type Viewer } from "./visibility.js";

export type EdgeRel = "relates_to" | "supports" | "contradicts" | "supersedes" | "derived_from";

/** An edge with the ids of its ends (the table holds their row keys). */
export interface EdgeRow {
  pk: number;
  id: string;
  src: string;
  dst: string;
  rel: EdgeRel;
  note: string | null;
  project: string | null;
  agent_id: string;
  created_at: string;
  updated_at: string;
}

export interface NewEdge {
  id: string;
  srcPk: number;
  dstPk: number;
  rel: EdgeRel;
  note: string | null;
  project: string | null;
  agentId: string;
  at: string;
}

const SELECT_EDGE = `SELECT e.pk, e.id, s.id AS src, d.id AS dst, e.rel, e.note, e.project, e.agent_id, e.created_at, e.updated_at
  FROM graph_edges e JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk`;

/** Both ends visible to `viewer` and live: the only edges anyone is ever shown. */
function bothEndsVisible(viewer: Viewer, nowIso: string): { sql: string; params: unknown[] } {
  const src = visibleMemory("s", viewer);
  const dst = visibleMemory("d", viewer);
  return {
    sql: `${src.sql} AND ${dst.sql} AND s.deleted_at IS NULL AND d.deleted_at IS NULL
      AND (s.expires_at IS NULL OR s.expires_at > ?) AND (d.expires_at IS NULL OR d.expires_at > ?)`,
    params: [...src.params, ...dst.params, nowIso, nowIso],
  };
}

/** Inserts the edge, or updates the note of the same (src, dst, rel); returns its key and whether it is new. */
export function upsertEdge(db: Db, edge: NewEdge): { pk: number; created: boolean } {
  const existing = db.get<{ pk: number }>(
    "SELECT pk FROM graph_edges WHERE src_pk = ? AND dst_pk = ? AND rel = ?",
    edge.srcPk,
    edge.dstPk,
    edge.rel,
  );
  if (existing) {
    db.run("UPDATE graph_edges SET note = ?, updated_at = ? WHERE pk = ?", edge.note, edge.at, existing.pk);
    return { pk: existing.pk, created: false };
  }
  const result = db.run(
    `INSERT INTO graph_edges (id, src_pk, dst_pk, rel, note, project, agent_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    edge.id,
    edge.srcPk,
    edge.dstPk,
    edge.rel,
    edge.note,
    edge.project,
    edge.agentId,
    edge.at,
    edge.at,
  );
  return { pk: Number(result.lastInsertRowid), created: true };
}

export const edgeByPk = (db: Db, pk: number): EdgeRow | undefined => db.get<EdgeRow>(`${SELECT_EDGE} WHERE e.pk = ?`, pk);

export interface EdgeFilters {
  /** null selects edges between global entries. */
  project?: string | null | undefined;
  rel?: EdgeRel | undefined;
}

/** Newest first; `beforePk` continues a previous page. */
export function listEdges(db: Db, viewer: Viewer, nowIso: string, filters: EdgeFilters, beforePk: number | null, limit: number): EdgeRow[] {
  const visible = bothEndsVisible(viewer, nowIso);
  const sql = [visible.sql];
  const params = [...visible.params];
  if (filters.project === null) sql.push("e.project IS NULL");
  else if (filters.project !== undefined) {
    sql.push("e.project = ?");
    params.push(filters.project);
  }
  if (filters.rel !== undefined) {
    sql.push("e.rel = ?");
    params.push(filters.rel);
  }
  if (beforePk !== null) {
    sql.push("e.pk < ?");
    params.push(beforePk);
  }
  return db.all<EdgeRow>(`${SELECT_EDGE} WHERE ${sql.join(" AND ")} ORDER BY e.pk DESC LIMIT ?`, ...params, limit);
}

/** The visible edges leaving (`out`) or reaching (`in`) one entry, newest first. */
export function edgesOf(db: Db, viewer: Viewer, nowIso: string, memoryPk: number, direction: "out" | "in", limit: number): EdgeRow[] {
  const visible = bothEndsVisible(viewer, nowIso);
  const column = direction === "out" ? "e.src_pk" : "e.dst_pk";
  return db.all<EdgeRow>(
    `${SELECT_EDGE} WHERE ${column} = ? AND ${visible.sql} ORDER BY e.pk DESC LIMIT ?`,
    memoryPk,
    ...visible.params,
    limit,
  );
}
