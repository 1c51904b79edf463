import { z } from "zod";
import { EDGE_RELS } from "./edge-rels.js";
import { memoryEntry } from "./memory.js";
import { timestamp } from "./timestamp.js";

// Typed relations between memory entries.

/** Every relation an edge may hold (`EDGE_RELS`). */
export const edgeRel = z.enum(EDGE_RELS);
export type EdgeRel = z.output<typeof edgeRel>;

/**
 * The relations agents record themselves: `grounds` only from a compiled entry to an entry about
 * its code; `depends_on` comes from compiling code alone.
 */
export const linkRel = z.enum(["relates_to", "supports", "contradicts", "supersedes", "derived_from", "grounds"]);

export const graphEdge = z
  .object({
    id: z.uuid(),
    src: z.uuid(),
    dst: z.uuid(),
    rel: edgeRel,
    note: z.string().nullable(),
    project: z.string().nullable().describe("the ends' project; null when both are global"),
    agent_id: z.string().describe("who recorded the edge"),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "GraphEdge" });
export type GraphEdge = z.output<typeof graphEdge>;

/** One entry with the edges leaving it (`out`) and reaching it (`in`). */
export const graphNode = z.object({ node: memoryEntry, edges: z.object({ out: z.array(graphEdge), in: z.array(graphEdge) }) }).meta({ id: "GraphNode" });
export type GraphNode = z.output<typeof graphNode>;
