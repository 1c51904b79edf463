/**
 * Every relation an edge may hold (CONTRACT §14): compile records `grounds` and `depends_on`. A
 * plain list, apart from the wire's schema, so the graph worker reads it without loading zod.
 */
export const EDGE_RELS = ["relates_to", "supports", "contradicts", "supersedes", "derived_from", "grounds", "depends_on"] as const;
