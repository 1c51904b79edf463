import type { EdgeKey, SelectionNode, TypedEdge } from "../../store/knowledge.js";
import { EDGE_RELS } from "../../wire/edge-rels.js";
import type { GraphRel } from "./edges.js";
import { ArcList, rankGraph, type PageRankOptions } from "./pagerank.js";

// A selection's ranks (CONTRACT §14) from the rows the store reads: its entries, newest change
// first, and its stored edges by their ends' row keys. What comes out is small whatever the
// selection's size: the best-ranked entries and the edges between them, which is all that central
// and pulse show; so it crosses from the graph worker's thread to the server's in microseconds.

/** Entries and edges one computation reads; beyond them the newest entries are ranked, and the answer says it was truncated. */
export const MAX_RANKED_ENTRIES = 200_000;
export const MAX_RANKED_EDGES = 1_000_000;

export interface SelectionRanking {
  /** The best-ranked entries, highest score first (equal scores: newest change first). */
  top: { id: string; score: number }[];
  /** Entries ranked. */
  entries: number;
  /** Stored edges between them (merge parents are not counted). */
  storedEdges: number;
  /** Edges between entries of `top`, each pair and relation once, those between better-ranked entries first. */
  topEdges: TypedEdge[];
  /** How many such edges there were before `topEdges` was cut. */
  topEdgesFound: number;
  /** True when the selection had more entries or edges than one computation reads. */
  truncated: boolean;
  /** The ranks hold until the first entry of the selection expires. */
  validUntilMs: number;
  iterations: number;
  converged: boolean;
}

export interface KeepSizes {
  /** Entries of `top`. */
  entries: number;
  /** Edges of `topEdges`. */
  edges: number;
}

/** Edges between the selection's entries, by position, in the order they were read (stored edges, then merge parents). */
class PositionedEdges {
  readonly src: number[] = [];
  readonly dst: number[] = [];
  readonly rel: GraphRel[] = [];

  add(src: number, dst: number, rel: GraphRel): void {
    this.src.push(src);
    this.dst.push(dst);
    this.rel.push(rel);
  }

  get length(): number {
    return this.src.length;
  }
}

/**
 * Ranks `nodes` (read with a limit one past MAX_RANKED_ENTRIES, newest change first) over `keys`
 * (read with a limit one past MAX_RANKED_EDGES) and their merge parents.
 */
export function rankSelection(nodes: readonly SelectionNode[], keys: readonly EdgeKey[], keep: KeepSizes, options: PageRankOptions = {}): SelectionRanking {
  const truncated = nodes.length > MAX_RANKED_ENTRIES || keys.length > MAX_RANKED_EDGES;
  const kept = nodes.length > MAX_RANKED_ENTRIES ? nodes.slice(0, MAX_RANKED_ENTRIES) : nodes;
  const positionOfPk = new Map<number, number>();
  kept.forEach((node, position) => positionOfPk.set(node.pk, position));
  // An edge takes part when both its ends are entries of the selection: live, shared, visible.
  const edges = new PositionedEdges();
  const edgeLimit = Math.min(keys.length, MAX_RANKED_EDGES);
  for (let index = 0; index < edgeLimit; index++) {
    const key = keys[index] as EdgeKey;
    const src = positionOfPk.get(key.src_pk);
    const dst = positionOfPk.get(key.dst_pk);
    if (src !== undefined && dst !== undefined) edges.add(src, dst, key.rel);
  }
  const storedEdges = edges.length;
  let validUntilMs = Number.POSITIVE_INFINITY;
  let positionOfId: Map<string, number> | null = null;
  kept.forEach((node, position) => {
    if (node.expires_at !== null) validUntilMs = Math.min(validUntilMs, Date.parse(node.expires_at));
    if (node.parents === "[]") return;
    positionOfId ??= new Map(kept.map((entry, at) => [entry.id, at]));
    for (const parent of JSON.parse(node.parents) as string[]) {
      const at = positionOfId.get(parent);
      if (at !== undefined) edges.add(position, at, "derived_from");
    }
  });
  const arcs = new ArcList(edges.length);
  for (let index = 0; index < edges.length; index++) arcs.add(edges.src[index] as number, edges.dst[index] as number, edges.rel[index] as GraphRel);
  const { scores, order, iterations, converged } = rankGraph(arcs.graph(kept.length), options);
  const topCount = Math.min(keep.entries, kept.length);
  const top = Array.from(order.subarray(0, topCount), (position) => ({ id: (kept[position] as SelectionNode).id, score: scores[position] as number }));
  const between = edgesBetweenTop(edges, order, topCount, keep.edges);
  return {
    top,
    entries: kept.length,
    storedEdges,
    topEdges: between.edges.map((edge) => ({ src: (kept[edge.src] as SelectionNode).id, dst: (kept[edge.dst] as SelectionNode).id, rel: edge.rel })),
    topEdgesFound: between.found,
    truncated,
    validUntilMs,
    iterations,
    converged,
  };
}

/** The edges between the `topCount` best-ranked positions, deduplicated, the pair's worse rank ascending, at most `limit`. */
function edgesBetweenTop(edges: PositionedEdges, order: Int32Array, topCount: number, limit: number): { edges: { src: number; dst: number; rel: GraphRel }[]; found: number } {
  const rankOf = new Map<number, number>();
  for (let rank = 0; rank < topCount; rank++) rankOf.set(order[rank] as number, rank);
  const seen = new Set<number>();
  const found: { src: number; dst: number; rel: GraphRel; worse: number }[] = [];
  for (let index = 0; index < edges.length; index++) {
    const src = edges.src[index] as number;
    const dst = edges.dst[index] as number;
    const rel = edges.rel[index] as GraphRel;
    const srcRank = rankOf.get(src);
    const dstRank = rankOf.get(dst);
    if (srcRank === undefined || dstRank === undefined || src === dst) continue;
    const key = (srcRank * topCount + dstRank) * EDGE_RELS.length + EDGE_RELS.indexOf(rel);
    if (seen.has(key)) continue;
    seen.add(key);
    found.push({ src, dst, rel, worse: Math.max(srcRank, dstRank) });
  }
  // A stable sort: among equals, the order the edges were read in.
  found.sort((a, b) => a.worse - b.worse);
  return { edges: found.slice(0, limit).map(({ src, dst, rel }) => ({ src, dst, rel })), found: found.length };
}
