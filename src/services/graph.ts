import { invalid } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { Db } from "../store/db.js";
import { edgeByPk, edgesOf, listEdges, upsertEdge, type EdgeRel, type EdgeRow } from "../store/graph.js";
import { viewerOf, type Caller } from "./caller.js";
import { toEntry, type MemoryEntry } from "./memory-records.js";
import type { MemoryService } from "./memory.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import { checkProjectWrite } from "./projects.js";

export interface Edge {
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

export interface GraphNode {
  node: MemoryEntry;
  edges: { out: Edge[]; in: Edge[] };
}

/** Edges shown with one node, per direction. */
export const NODE_EDGE_LIMIT = 200;

const toEdge = (row: EdgeRow): Edge => ({
  id: row.id,
  src: row.src,
  dst: row.dst,
  rel: row.rel,
  note: row.note,
  project: row.project,
  agent_id: row.agent_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const isPkCursor = (value: unknown): value is { pk: number } =>
  typeof value === "object" && value !== null && Number.isSafeInteger((value as { pk?: unknown }).pk);

/** Typed relations between memory entries. Nobody is shown an edge unless they can see both ends. */
export class GraphService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly memory: MemoryService,
  ) {}

  /** Adds an edge, or updates the note of the same one; 201 either way with the edge. */
  link(caller: Caller, input: { src: string; dst: string; rel: EdgeRel; note?: string | null | undefined }): Edge {
    return this.db.write(() => {
      const viewer = viewerOf(caller);
      const src = this.memory.resolve(viewer, input.src);
      const dst = this.memory.resolve(viewer, input.dst);
      if (src.pk === dst.pk) throw invalid("dst", "an entry cannot be linked to itself");
      if (src.project !== null && dst.project !== null && src.project !== dst.project) {
        throw invalid("dst", "entries of different projects cannot be linked");
      }
      const project = src.project ?? dst.project;
      checkProjectWrite(this.db, caller, project);
      const { pk } = upsertEdge(this.db, {
        id: newId(),
        srcPk: src.pk,
        dstPk: dst.pk,
        rel: input.rel,
        note: input.note ?? null,
        project,
        agentId: caller.agentId,
        at: now(),
      });
      const edge = toEdge(edgeByPk(this.db, pk) as EdgeRow);
      // An edge touching a private entry is as private as the entry.
      const privateTo = src.scope === "agent" ? src.agent_id : dst.scope === "agent" ? dst.agent_id : null;
      this.bus.emit({
        type: "graph.linked",
        agentId: caller.agentId,
        project,
        privateTo,
        payload: { edge_id: edge.id, src: edge.src, dst: edge.dst, rel: edge.rel, project },
      });
      return edge;
    });
  }

  list(caller: Caller, input: { project?: string | null | undefined; rel?: EdgeRel | undefined; limit: number; cursor?: string | undefined }): Page<Edge> {
    const after = decodeCursor(input.cursor, isPkCursor);
    const rows = listEdges(this.db, viewerOf(caller), now(), input, after?.pk ?? null, input.limit + 1);
    return pageOf(rows, input.limit, toEdge, (row) => ({ pk: row.pk }));
  }

  node(caller: Caller, ref: string): GraphNode {
    const viewer = viewerOf(caller);
    const row = this.memory.resolve(viewer, ref);
    const at = now();
    return {
      node: toEntry(row),
      edges: {
        out: edgesOf(this.db, viewer, at, row.pk, "out", NODE_EDGE_LIMIT).map(toEdge),
        in: edgesOf(this.db, viewer, at, row.pk, "in", NODE_EDGE_LIMIT).map(toEdge),
      },
    };
  }
}

