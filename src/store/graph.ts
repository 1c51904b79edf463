import type { EdgeRel } from "../wire/graph.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";
import type { Viewpoint } from "./visibility.js";

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

export const EDGE_ROW_COLUMNS = rowColumns<EdgeRow, "src" | "dst">(
  "graph_edges",
  { pk: true, id: true, rel: true, note: true, project: true, agent_id: true, created_at: true, updated_at: true },
  ["src_pk", "dst_pk"],
);

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

export interface EdgeFilters {
  /** null selects edges between global entries. */
  project?: string | null | undefined;
  rel?: EdgeRel | undefined;
}

/** Edges between memory entries. Every read shows only edges whose both ends are live and visible. */
export interface GraphStore {
  /** Inserts the edge, or updates the note of the same (src, dst, rel); returns its key and whether it is new. */
  upsert(tx: Tx, edge: NewEdge): Promise<{ pk: number; created: boolean }>;
  byPk(r: Reader, pk: number): Promise<EdgeRow | undefined>;
  /** Newest first; `beforePk` continues a previous page. */
  list(r: Reader, viewpoint: Viewpoint, nowIso: string, filters: EdgeFilters, beforePk: number | null, limit: number): Promise<EdgeRow[]>;
  /** The visible edges leaving (`out`) or reaching (`in`) one entry, newest first. */
  edgesOf(r: Reader, viewpoint: Viewpoint, nowIso: string, memoryPk: number, direction: "out" | "in", limit: number): Promise<EdgeRow[]>;
}
