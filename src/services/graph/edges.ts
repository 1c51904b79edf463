// The typed edges both graph computations read (CONTRACT §14).

export const graphRels = ["relates_to", "supports", "contradicts", "supersedes", "derived_from", "grounds", "depends_on"] as const;
export type GraphRel = (typeof graphRels)[number];

export type { TypedEdge } from "../../store/knowledge.js";
