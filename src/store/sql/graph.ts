import type { EdgeFilters, EdgeRow, GraphStore, NewEdge } from "../graph.js";
import type { Reader, Tx } from "../store.js";
import type { ImportedEdge } from "../transfer.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { visibleMemory, type SqlFragment } from "./visibility.js";

const SELECT_EDGE = `SELECT e.pk, e.id, s.id AS src, d.id AS dst, e.rel, e.note, e.project, e.agent_id, e.created_at, e.updated_at
  FROM graph_edges e JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk`;

/** Both ends visible to `viewpoint` and live: the only edges anyone is ever shown. */
function bothEndsVisible(viewpoint: Viewpoint, nowIso: string): SqlFragment {
  const src = visibleMemory("s", viewpoint);
  const dst = visibleMemory("d", viewpoint);
  return {
    sql: `${src.sql} AND ${dst.sql} AND s.deleted_at IS NULL AND d.deleted_at IS NULL
      AND (s.expires_at IS NULL OR s.expires_at > ?) AND (d.expires_at IS NULL OR d.expires_at > ?)`,
    params: [...src.params, ...dst.params, nowIso, nowIso],
  };
}

/** Inserts an edge with its own id and times (an import keeps another instance's); returns its row key. */
export async function insertEdge(db: SqlDb, tx: Tx, edge: ImportedEdge): Promise<number> {
  const [inserted] = await db.all<{ pk: unknown }>(
    tx,
    `INSERT INTO graph_edges (id, src_pk, dst_pk, rel, note, project, agent_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
    edge.id, edge.srcPk, edge.dstPk, edge.rel, edge.note, edge.project, edge.agentId, edge.createdAt, edge.updatedAt,
  );
  return Number(inserted?.pk);
}

export class SqlGraph implements GraphStore {
  constructor(private readonly db: SqlDb) {}

  // On PostgreSQL two transactions recording the same new edge at once both find none and insert;
  // the second breaks the (src, dst, rel) key, and its transaction runs again and takes the update path.
  async upsert(tx: Tx, edge: NewEdge): Promise<{ pk: number; created: boolean }> {
    const existing = await this.db.get<{ pk: number }>(tx, "SELECT pk FROM graph_edges WHERE src_pk = ? AND dst_pk = ? AND rel = ?", edge.srcPk, edge.dstPk, edge.rel);
    if (existing) {
      await this.db.run(tx, "UPDATE graph_edges SET note = ?, updated_at = ? WHERE pk = ?", edge.note, edge.at, existing.pk);
      return { pk: existing.pk, created: false };
    }
    return { pk: await insertEdge(this.db, tx, { ...edge, createdAt: edge.at, updatedAt: edge.at }), created: true };
  }

  byPk(r: Reader, pk: number): Promise<EdgeRow | undefined> {
    return this.db.get<EdgeRow>(r, `${SELECT_EDGE} WHERE e.pk = ?`, pk);
  }

  list(r: Reader, viewpoint: Viewpoint, nowIso: string, filters: EdgeFilters, beforePk: number | null, limit: number): Promise<EdgeRow[]> {
    const visible = bothEndsVisible(viewpoint, nowIso);
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
    return this.db.all<EdgeRow>(r, `${SELECT_EDGE} WHERE ${sql.join(" AND ")} ORDER BY e.pk DESC LIMIT ?`, ...params, limit);
  }

  edgesOf(r: Reader, viewpoint: Viewpoint, nowIso: string, memoryPk: number, direction: "out" | "in", limit: number): Promise<EdgeRow[]> {
    const visible = bothEndsVisible(viewpoint, nowIso);
    const column = direction === "out" ? "e.src_pk" : "e.dst_pk";
    return this.db.all<EdgeRow>(r, `${SELECT_EDGE} WHERE ${column} = ? AND ${visible.sql} ORDER BY e.pk DESC LIMIT ?`, memoryPk, ...visible.params, limit);
  }
}
