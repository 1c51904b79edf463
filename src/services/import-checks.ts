import type { Config } from "../core/config.js";
import type { EventBus } from "../events/bus.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { ImportCounts } from "../wire/transfer.js";
import type { Caller } from "./caller.js";
import { LineRefusal } from "./transfer-lines.js";

// What every kind of import line shares: what it did, for whom, and the checks most of them make.

/** What one line did: created a record of a kind, found it there already, or (a header) nothing. */
export type Applied = keyof ImportCounts | "skipped" | "nothing";

export interface ImportContext {
  caller: Caller;
  /** The project memory.json entities go to. */
  project: string | null;
}

export async function requireProject(store: Store, r: Reader, project: string | null): Promise<void> {
  if (project !== null && !(await store.projects.byId(r, project))) {
    throw new LineRefusal(`project ${project} does not exist here: import its project line first`);
  }
}

export function requireSize(config: Config, field: string, text: string): void {
  if (Buffer.byteLength(text, "utf8") > config.MAX_CONTENT_BYTES) throw new LineRefusal(`${field} exceeds ${config.MAX_CONTENT_BYTES} bytes`);
}

/** The event of an edge an import made or extended. */
export async function announceEdge(
  bus: EventBus,
  tx: Tx,
  context: ImportContext,
  edge: { id: string; src: string; dst: string; rel: string; project: string | null },
): Promise<void> {
  await bus.emit(tx, {
    type: "graph.linked",
    agentId: context.caller.agentId,
    project: edge.project,
    payload: { edge_id: edge.id, src: edge.src, dst: edge.dst, rel: edge.rel, project: edge.project, reason: "imported" },
  });
}
