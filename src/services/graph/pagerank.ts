import type { GraphRel } from "./edges.js";

// Weighted PageRank for `GET /memory/central` (CONTRACT §14), on typed arrays so a selection of
// 100,000 entries and 400,000 edges ranks in well under a second (on the graph worker's thread:
// see graph-worker.ts).
//
// Each stored edge becomes arcs along which rank flows (from the entry that vouches to the entry
// vouched for): `supports`, `derived_from`, `grounds` 1.0 from src to dst; `relates_to` 0.5 each
// way; `depends_on` 0.5 from src to dst; `supersedes` 1.0 from dst to src, because in
// `src supersedes dst` the src is the newer entry (the replacement names what it replaces, as a
// decision's `supersedes` does in §12) and §14 sends rank from the older entry to the newer;
// `contradicts` adds no arc at all, so an entry whose only edges contradict is dangling.
// A node passes its rank on in proportion to the weights of its arcs (weight / its total out
// weight). Edges count once per (src, dst, rel); self-loops and edges with an end outside `ids`
// (private or unselected entries) are dropped, so they cannot move anyone's rank.

const DAMPING = 0.85;
const TOLERANCE = 1e-6;
export const MAX_ITERATIONS = 100;

export interface PageRankOptions {
  readonly damping?: number | undefined;
  /** Iteration stops once the L1 change of the scores falls below this. */
  readonly tolerance?: number | undefined;
  readonly maxIterations?: number | undefined;
}

/** Arcs by target, CSR: the arcs into v are `offsets[v] … offsets[v + 1] - 1`. */
export interface RankGraph {
  readonly size: number;
  readonly offsets: Int32Array;
  readonly sources: Int32Array;
  /** The arc's weight over its source's total out weight. */
  readonly shares: Float64Array;
  /** Nodes without out weight; their rank is spread evenly. */
  readonly dangling: Int32Array;
}

export interface GraphRanking {
  /** By position; they sum to 1. */
  readonly scores: Float64Array;
  /** 1 is the highest score; equal scores keep the order of the positions. */
  readonly ranks: Int32Array;
  /** Positions, highest score first. */
  readonly order: Int32Array;
  readonly iterations: number;
  readonly converged: boolean;
}

// Relation codes for packed edge keys; contradicts has none because it carries nothing. Codes
// below RELATES_TO carry 1.0 along the edge.
const RELATES_TO = 3;
const SUPERSEDES = 4;
const relCodes: Partial<Record<GraphRel, number>> = { supports: 0, derived_from: 1, grounds: 2, relates_to: RELATES_TO, supersedes: SUPERSEDES, depends_on: 5 };
const CODES = 8;

/** PageRank of a graph built from arcs by position; the positions' order is the order ties keep. */
export function rankGraph(graph: RankGraph, options: PageRankOptions = {}): GraphRanking {
  const { scores, iterations, converged } = rankScores(graph, options);
  const order = new Int32Array(graph.size);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b);
  const ranks = new Int32Array(graph.size);
  for (let position = 0; position < order.length; position++) ranks[order[position] as number] = position + 1;
  return { scores, ranks, order, iterations, converged };
}

/**
 * Edges by the positions of their ends, gathered before a graph is built. Keys pack (src, dst,
 * rel) exactly into a double: sorting them de-duplicates edges cheaply.
 */
export class ArcList {
  private sources: Int32Array;
  private targets: Int32Array;
  private codes: Uint8Array;
  private count = 0;

  constructor(capacity = 1024) {
    this.sources = new Int32Array(Math.max(1, capacity));
    this.targets = new Int32Array(this.sources.length);
    this.codes = new Uint8Array(this.sources.length);
  }

  /** Adds an edge; one whose relation carries no rank (`contradicts`), or a self-loop, is left out. */
  add(src: number, dst: number, rel: GraphRel): void {
    const code = relCodes[rel];
    if (code === undefined || src === dst) return;
    if (this.count === this.sources.length) {
      const capacity = this.count * 2;
      const sources = new Int32Array(capacity);
      const targets = new Int32Array(capacity);
      const codes = new Uint8Array(capacity);
      sources.set(this.sources);
      targets.set(this.targets);
      codes.set(this.codes);
      [this.sources, this.targets, this.codes] = [sources, targets, codes];
    }
    this.sources[this.count] = src;
    this.targets[this.count] = dst;
    this.codes[this.count] = code;
    this.count += 1;
  }

  /** The graph of these arcs over `size` nodes (positions 0 … size − 1). */
  graph(size: number): RankGraph {
    if (size * size * CODES > Number.MAX_SAFE_INTEGER) throw new RangeError(`too many nodes to rank: ${size}`);
    const keys = new Float64Array(this.count);
    for (let i = 0; i < this.count; i++) keys[i] = ((this.sources[i] as number) * size + (this.targets[i] as number)) * CODES + (this.codes[i] as number);
    return graphOfKeys(distinctSorted(keys), size);
  }
}

function graphOfKeys(unique: Float64Array, size: number): RankGraph {

  const offsets = new Int32Array(size + 1);
  const outWeight = new Float64Array(size);
  forEachArc(unique, size, (from, to, weight) => {
    offsets[to + 1] = (offsets[to + 1] as number) + 1;
    outWeight[from] = (outWeight[from] as number) + weight;
  });
  for (let v = 0; v < size; v++) offsets[v + 1] = (offsets[v + 1] as number) + (offsets[v] as number);
  const fill = offsets.slice(0, size);
  const sources = new Int32Array(offsets[size] as number);
  const shares = new Float64Array(sources.length);
  forEachArc(unique, size, (from, to, weight) => {
    const at = fill[to] as number;
    fill[to] = at + 1;
    sources[at] = from;
    shares[at] = weight / (outWeight[from] as number);
  });
  const dangling: number[] = [];
  for (let v = 0; v < size; v++) if (outWeight[v] === 0) dangling.push(v);
  return { size, offsets, sources, shares, dangling: Int32Array.from(dangling) };
}

/** Power iteration from the uniform vector; scores sum to 1. */
function rankScores(graph: RankGraph, options: PageRankOptions = {}): { scores: Float64Array; iterations: number; converged: boolean } {
  const damping = options.damping ?? DAMPING;
  const tolerance = options.tolerance ?? TOLERANCE;
  const maxIterations = options.maxIterations ?? MAX_ITERATIONS;
  const { size, offsets, sources, shares, dangling } = graph;
  let rank = new Float64Array(size).fill(1 / size);
  let next = new Float64Array(size);
  let iterations = 0;
  let converged = size === 0;
  while (!converged && iterations < maxIterations) {
    iterations++;
    let danglingMass = 0;
    for (const v of dangling) danglingMass += rank[v] as number;
    const base = (1 - damping) / size + (damping * danglingMass) / size;
    let change = 0;
    for (let v = 0; v < size; v++) {
      let inflow = 0;
      const end = offsets[v + 1] as number;
      for (let k = offsets[v] as number; k < end; k++) inflow += (rank[sources[k] as number] as number) * (shares[k] as number);
      const value = base + damping * inflow;
      change += Math.abs(value - (rank[v] as number));
      next[v] = value;
    }
    [rank, next] = [next, rank];
    converged = change < tolerance;
  }
  // Rounding drifts the sum by a few ulps per iteration; the contract promises a distribution.
  let total = 0;
  for (const value of rank) total += value;
  for (let v = 0; v < size; v++) rank[v] = (rank[v] as number) / total;
  return { scores: rank, iterations, converged };
}

function distinctSorted(keys: Float64Array): Float64Array {
  keys.sort();
  let count = 0;
  for (let i = 0; i < keys.length; i++) if (i === 0 || keys[i] !== keys[i - 1]) keys[count++] = keys[i] as number;
  return keys.subarray(0, count);
}

/** The weighted arcs of each packed edge key, in key order. */
function forEachArc(keys: Float64Array, size: number, visit: (from: number, to: number, weight: number) => void): void {
  for (const key of keys) {
    const code = key % CODES;
    const pair = (key - code) / CODES;
    const src = Math.floor(pair / size);
    const dst = pair - src * size;
    if (code < RELATES_TO) visit(src, dst, 1);
    else if (code === RELATES_TO) {
      visit(src, dst, 0.5);
      visit(dst, src, 0.5);
    } else if (code === SUPERSEDES) visit(dst, src, 1);
    else visit(src, dst, 0.5);
  }
}
