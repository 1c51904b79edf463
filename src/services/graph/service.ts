import { invalid } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { EdgeRow } from "../../store/graph.js";
import type { Store } from "../../store/store.js";
import { checkProjectWrite } from "../access.js";
import { viewpointOf, type Caller } from "../caller.js";
import { toEntry } from "../memory-records.js";
import type { MemoryWrites } from "../memory-writes.js";
import { decodeCursor, pageOf, type Page } from "../paging.js";
import type { EdgeRel, GraphEdge, GraphNode } from "../../wire/graph.js";

/** Edges shown with one node, per direction. */
const NODE_EDGE_LIMIT = 200;

const toEdge = (row: EdgeRow): GraphEdge => ({
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
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly writes: MemoryWrites,
  ) {}

  /** Adds an edge, or updates the note of the same one; 201 either way with the edge. */
  async link(caller: Caller, input: { src: string; dst: string; rel: EdgeRel; note?: string | null | undefined }): Promise<GraphEdge> {
    return this.store.transaction(async (tx) => {
      const viewpoint = viewpointOf(caller);
      const src = await this.writes.resolve(tx, viewpoint, input.src);
      const dst = await this.writes.resolve(tx, viewpoint, input.dst);
      if (src.pk === dst.pk) throw invalid("dst", "an entry cannot be linked to itself");
      // Compile marks what a compiled entry grounds stale when its code changes (§18): the edge
      // runs from the code's entry to an entry about that code, never between two compiled ones.
      if (input.rel === "grounds" && src.type !== "compiled") throw invalid("src", "a grounds edge starts at a compiled entry");
      if (input.rel === "grounds" && dst.type === "compiled") throw invalid("dst", "a grounds edge ends at an entry about the code, not a compiled one");
      if (src.project !== null && dst.project !== null && src.project !== dst.project) {
        throw invalid("dst", "entries of different projects cannot be linked");
      }
      const project = src.project ?? dst.project;
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const { pk } = await this.store.graph.upsert(tx, {
        id: newId(),
        srcPk: src.pk,
        dstPk: dst.pk,
        rel: input.rel,
        note: input.note ?? null,
        project,
        agentId: caller.agentId,
        at: now(),
      });
      const edge = toEdge((await this.store.graph.byPk(tx, pk)) as EdgeRow);
      // An edge touching a private entry is as private as the entry.
      const privateTo = src.scope === "agent" ? src.agent_id : dst.scope === "agent" ? dst.agent_id : null;
      await this.bus.emit(tx, {
        type: "graph.linked",
        agentId: caller.agentId,
        project,
        privateTo,
        payload: { edge_id: edge.id, src: edge.src, dst: edge.dst, rel: edge.rel, project },
      });
      return edge;
    });
  }

  async list(
    caller: Caller,
    input: { project?: string | null | undefined; rel?: EdgeRel | undefined; limit: number; cursor?: string | undefined },
  ): Promise<Page<GraphEdge>> {
    const after = decodeCursor(input.cursor, isPkCursor);
    const rows = await this.store.graph.list(this.store.reader, viewpointOf(caller), now(), input, after?.pk ?? null, input.limit + 1);
    return pageOf(rows, input.limit, toEdge, (row) => ({ pk: row.pk }));
  }

  async node(caller: Caller, ref: string): Promise<GraphNode> {
    const viewpoint = viewpointOf(caller);
    const reader = this.store.reader;
    const row = await this.writes.resolve(reader, viewpoint, ref);
    const at = now();
    const out = await this.store.graph.edgesOf(reader, viewpoint, at, row.pk, "out", NODE_EDGE_LIMIT);
    const into = await this.store.graph.edgesOf(reader, viewpoint, at, row.pk, "in", NODE_EDGE_LIMIT);
    return { node: toEntry(row), edges: { out: out.map(toEdge), in: into.map(toEdge) } };
  }
}

