// PageRank by entry id, for the tests: the server ranks by position (rankGraph over an ArcList,
// src/services/graph/rank-selection.ts); these name the nodes so expectations can.
import type { TypedEdge } from "../../src/services/graph/edges.js";
import { ArcList, rankGraph, type GraphRanking, type PageRankOptions } from "../../src/services/graph/pagerank.js";

export interface Centrality extends GraphRanking {
  readonly ids: readonly string[];
}

/** PageRank of `ids` (each once; in the order ties should keep) over `edges`. */
export function pageRank(ids: readonly string[], edges: readonly TypedEdge[], options: PageRankOptions = {}): Centrality {
  const index = new Map<string, number>();
  for (const [position, id] of ids.entries()) {
    if (index.has(id)) throw new Error(`node ${id} is listed twice`);
    index.set(id, position);
  }
  const arcs = new ArcList(edges.length);
  for (const edge of edges) {
    const src = index.get(edge.src);
    const dst = index.get(edge.dst);
    if (src !== undefined && dst !== undefined) arcs.add(src, dst, edge.rel);
  }
  return { ids, ...rankGraph(arcs.graph(ids.length), options) };
}

/** The `limit` highest-ranked entries. */
export function topCentral(centrality: Centrality, limit: number): { id: string; score: number; rank: number }[] {
  return Array.from(centrality.order.subarray(0, limit), (index, position) => ({
    id: centrality.ids[index] as string,
    score: centrality.scores[index] as number,
    rank: position + 1,
  }));
}
