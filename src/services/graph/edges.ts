// The typed edges both graph computations read (CONTRACT §14).

export const graphRels = ["relates_to", "supports", "contradicts", "supersedes", "derived_from", "grounds", "depends_on"] as const;
export type GraphRel = (typeof graphRels)[number];

/**
 * An edge as stored: `src rel dst` reads as a sentence, so in `a supersedes b` the entry `a` is
 * the newer one (a decision's `supersedes` names the older decision it replaces, §12), and in
 * `a derived_from b` the entry `a` was made from `b`. A merge's parents take part as
 * `{src: merged, dst: parent, rel: "derived_from"}`. Both computations count an edge once per
 * `(src, dst, rel)`, so a parent that is also linked by an explicit `derived_from` counts once.
 */
export interface TypedEdge {
  readonly src: string;
  readonly dst: string;
  readonly rel: GraphRel;
}
