import { z } from "zod";
import { edgeRel } from "./graph.js";
import { memoryEntry, memoryType } from "./memory.js";
import { timestamp } from "./timestamp.js";

// The knowledge graph read three ways (CONTRACT §14): related, central, pulse.



const pathStep = z.object({
  id: z.uuid(),
  rel: z.union([edgeRel, z.literal("similar")]).describe("similar: a vector neighbour of the seed"),
  direction: z.enum(["out", "in"]).describe("out: along the edge from the entry before; in: against it"),
});

export const relatedEntry = memoryEntry
  .extend({
    activation: z.number(),
    hops: z.number().int().describe("the hop at which it was first reached"),
    path: z.array(pathStep).describe("the strongest path from the seed, ending at this entry"),
    via_similarity: z.boolean().describe("reached through a vector neighbour of the seed"),
  })
  .meta({ id: "RelatedEntry" });
export type RelatedEntry = z.output<typeof relatedEntry>;

export const centralEntry = memoryEntry.extend({ score: z.number(), rank: z.number().int().min(1) }).meta({ id: "CentralEntry" });
export type CentralEntry = z.output<typeof centralEntry>;

const labelled = { id: z.uuid(), label: z.string().describe("the headline, else the content with white space collapsed, at most 110 characters") };

export const pulse = z
  .object({
    project: z.string().nullable().describe("null: global entries, or everything for the owner and the archivist"),
    scope: z.enum(["project", "global", "all"]),
    generated_at: timestamp,
    counts: z.object({
      entries: z.number().int(),
      edges: z.number().int(),
      open_tasks: z.number().int(),
      claimed_tasks: z.number().int(),
      stale_entries: z.number().int(),
      agents_online: z.number().int(),
    }),
    graph: z.object({
      nodes: z.array(z.object({ ...labelled, type: memoryType, confidence: z.number(), score: z.number() })).describe("at most 300, by score then recency"),
      edges: z.array(z.object({ src: z.uuid(), dst: z.uuid(), rel: edgeRel })).describe("at most 600, both ends among the nodes"),
      truncated: z.boolean(),
    }),
    central: z.array(z.object({ ...labelled, score: z.number(), rank: z.number().int() })).describe("top 8"),
    hot: z.array(z.object({ ...labelled, reads: z.number().int(), readers: z.number().int() })).describe("top 12 by reads in 7 days"),
    conflicts: z
      .array(z.object({ id: z.uuid(), src: z.uuid(), dst: z.uuid(), src_label: z.string(), dst_label: z.string(), note: z.string().nullable(), created_at: timestamp }))
      .describe("live contradicts edges, newest first, at most 20"),
    activity: z.array(
      z.object({
        agent_id: z.string(),
        writes_24h: z.number().int(),
        reads_24h: z.number().int(),
        claimed: z.number().int(),
        completed_24h: z.number().int(),
        last_seen_at: timestamp.nullable(),
        online: z.boolean(),
      }),
    ),
    affinities: z.array(z.object({ agent_id: z.string(), tag: z.string(), weight: z.number() })),
  })
  .meta({ id: "Pulse" });
export type Pulse = z.output<typeof pulse>;
