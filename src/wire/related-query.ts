import { z } from "zod";
import { limitParam } from "./fields.js";
import { edgeRel } from "./graph.js";
import { memoryType } from "./memory.js";

/** How far \`memory_related\` reads from its entry, and what it keeps: what \`KnowledgeService.related\` takes. */
export const relatedQuery = z.strictObject({
  limit: limitParam(50, 10),
  hops: z.number().int().min(1).max(4).default(2),
  rels: z.array(edgeRel).min(1).max(7).optional(),
  type: memoryType.optional(),
  include_similar: z.boolean().default(true),
  min_activation: z.number().min(0.001).max(1).default(0.05),
});
export type RelatedQuery = z.output<typeof relatedQuery>;
