import type { GraphRel, TypedEdge } from "./edges.js";

// Bounded spreading activation for `GET /memory/{id}/related` (CONTRACT §14).
//
// The rules, where §14 leaves them open:
// - Hops are synchronous rounds. At hop h every reached entry that has not fired and holds at
//   least `minActivation` (hop 1: the seed alone) fires with the activation it held when the hop
//   began; the flows of the hop are added once all of them are computed, so the order in which
//   the source returns edges changes nothing.
// - deg(u) is the number of distinct `(src, dst, rel)` edges of u the source returned, after the
//   `rels` filter and without self-loops: the degree in the graph the caller may see, restricted
//   to the asked relations, so `rels=R` answers exactly as a graph holding only R-edges would.
//   Similarity links are not edges and do not count; the seed's degree is taken as at least 1 so a
//   seed with only similar entries can still spread.
// - Flows into an entry that already fired (back along the edge it was reached by, or from a
//   neighbour firing in the same hop) still add to its activation, as "activations add up" says;
//   they never make it fire again.
// - The strongest path of an entry is the one whose product of per-edge factors
//   W · 0.6 / deg^0.5 is largest, i.e. the single path that alone would carry the most activation
//   from the seed (not the neighbour that happened to send the largest flow, which rewards a hub's
//   accumulated activation rather than the chain of links). An entry's path is fixed when it fires,
//   so each path is the path it passed on: paths are simple and extend their predecessor's path.
//   Equal products keep the step from the smaller id, then relation, then direction.
// - Entries are returned when their final activation is at least `minActivation`: an entry too weak
//   to fire is too weak to be related.

/** The share of a node's activation one firing passes on, before weights and degree. */
const SPREAD = 0.6;
/** A similar entry joins the first hop with weight SIMILARITY_WEIGHT · cosine. */
const SIMILARITY_WEIGHT = 0.5;
/** Entries per call to the edge source: one bounded `IN (…)` list. */
const FIRING_BATCH = 64;

const MIN_HOPS = 1;
const MAX_HOPS = 4;
/**
 * Edges read per query. Every reached entry came over an edge read or is a similar entry, so this
 * also bounds the entries reached (≤ maxEdges + similar + 1) and the source's calls
 * (≤ hops + reached / 64).
 */
const DEFAULT_MAX_EDGES = 10_000;

/** Relative to the firing entry: `out` when it is the edge's `src`. */
export type Direction = "out" | "in";

/** W(rel, direction) of §14. */
export function activationWeight(rel: GraphRel, direction: Direction): number {
  switch (rel) {
    case "supports":
      return 1;
    case "derived_from":
    case "grounds":
      return 0.9;
    case "supersedes":
      // `src supersedes dst`: firing out of src reaches the older entry, firing in reaches the newer.
      return direction === "out" ? 0.4 : 0.8;
    case "contradicts":
      return 0.7;
    case "relates_to":
      return 0.6;
    case "depends_on":
      return 0.5;
  }
}

export interface EdgeQuery {
  /** The entries about to fire. */
  readonly ids: readonly string[];
  /** Only edges of these relations, or all when null. */
  readonly rels: readonly GraphRel[] | null;
  /** More edges than `limit - 1` end the query, so a source may stop reading at `limit`. */
  readonly limit: number;
}

/**
 * Every visible, live edge with an end among `ids`, as stored (merge parents included as
 * `derived_from`, see TypedEdge). An edge whose other end the caller cannot see is never
 * returned: the activation then equals the activation on a graph without that entry.
 */
export type EdgeSource = (query: EdgeQuery) => Promise<readonly TypedEdge[]>;

/** One of the seed's vector neighbours, chosen by the caller (k = 10, cosine ≥ SIMILAR_THRESHOLD, visible). */
export interface SimilarEntry {
  readonly id: string;
  readonly cosine: number;
}

export interface ActivationOptions {
  /** Firing rounds, 1–4 (default 2). */
  readonly hops?: number | undefined;
  /** To fire and to be returned (default 0.05). */
  readonly minActivation?: number | undefined;
  /** Traverse only these relations (default all). */
  readonly rels?: readonly GraphRel[] | null | undefined;
  /** The seed's similar entries (with include_similar), which join the first hop. */
  readonly similar?: readonly SimilarEntry[] | undefined;
  /** Default DEFAULT_MAX_EDGES; a seed with more edges than this returns nothing, truncated. */
  readonly maxEdges?: number | undefined;
}

/** A step of a path from the seed (which is not in it) to an entry (which ends it). */
interface PathStep {
  readonly id: string;
  /** `similar` for a similarity link from the seed. */
  readonly rel: GraphRel | "similar";
  readonly direction: Direction;
}

export interface ActivatedEntry {
  readonly id: string;
  readonly activation: number;
  /** The hop at which the entry was first reached. */
  readonly hops: number;
  readonly path: PathStep[];
  readonly via_similarity: boolean;
}

export interface Activation {
  /** Every entry but the seed holding at least minActivation, by activation, then id. */
  readonly entries: ActivatedEntry[];
  /** The edge budget ran out: the entries that did not fire yet never fired. */
  readonly truncated: boolean;
  readonly edgesRead: number;
}

interface Reached {
  activation: number;
  readonly hop: number;
  fired: boolean;
  /** Product of per-edge factors along the path; 1 for the seed. */
  strength: number;
  /** The entry the path's last step came from, and that step; null for the seed. */
  from: string | null;
  step: PathStep | null;
  viaSimilarity: boolean;
}

interface Flow {
  readonly to: string;
  readonly amount: number;
  readonly strength: number;
  readonly from: string;
  readonly step: PathStep;
}

interface Incident {
  readonly other: string;
  readonly rel: GraphRel;
  readonly direction: Direction;
}

export async function spreadActivation(seed: string, edgesOf: EdgeSource, options: ActivationOptions = {}): Promise<Activation> {
  const hops = options.hops ?? 2;
  if (!Number.isInteger(hops) || hops < MIN_HOPS || hops > MAX_HOPS) throw new RangeError(`hops must be ${MIN_HOPS}–${MAX_HOPS}, not ${hops}`);
  const minActivation = options.minActivation ?? 0.05;
  const rels = options.rels ?? null;
  const maxEdges = options.maxEdges ?? DEFAULT_MAX_EDGES;

  const reached = new Map<string, Reached>();
  reached.set(seed, { activation: 1, hop: 0, fired: false, strength: 1, from: null, step: null, viaSimilarity: false });
  let edgesRead = 0;
  let truncated = false;

  for (let hop = 1; hop <= hops && !truncated; hop++) {
    const frontier = hop === 1 ? [seed] : firingOrder(reached, minActivation);
    if (frontier.length === 0) break;
    const flows: Flow[] = [];
    for (let start = 0; start < frontier.length; start += FIRING_BATCH) {
      const batch = frontier.slice(start, start + FIRING_BATCH);
      const remaining = maxEdges - edgesRead;
      const edges = await edgesOf({ ids: batch, rels, limit: remaining + 1 });
      edgesRead += edges.length;
      if (edges.length > remaining) {
        truncated = true;
        break;
      }
      const incidence = incidentEdges(batch, edges, rels);
      for (const id of batch) {
        const node = reached.get(id) as Reached;
        const similar = id === seed ? (options.similar ?? []) : [];
        fire(id, node, incidence.get(id) ?? [], similar, flows);
      }
    }
    for (const flow of flows) receive(reached, flow, hop);
  }

  const entries: ActivatedEntry[] = [];
  for (const [id, node] of reached) {
    if (id === seed || node.activation < minActivation) continue;
    entries.push({ id, activation: node.activation, hops: node.hop, path: pathTo(reached, node), via_similarity: node.viaSimilarity });
  }
  entries.sort((a, b) => b.activation - a.activation || compareText(a.id, b.id));
  return { entries, truncated, edgesRead };
}

/** The caller's tie-break for equal activations: higher confidence, then more recently updated. */
export interface RelatedTiebreak {
  readonly confidence: number;
  /** ISO-8601 UTC, so text order is time order. */
  readonly updatedAt: string;
}

/** The entries in §14's order: by activation, then confidence, then `updated_at`, then id. */
export function orderRelated(entries: readonly ActivatedEntry[], keyOf: (id: string) => RelatedTiebreak): ActivatedEntry[] {
  const keys = new Map(entries.map((entry) => [entry.id, keyOf(entry.id)]));
  return [...entries].sort((a, b) => {
    const ka = keys.get(a.id) as RelatedTiebreak;
    const kb = keys.get(b.id) as RelatedTiebreak;
    return b.activation - a.activation || kb.confidence - ka.confidence || compareText(kb.updatedAt, ka.updatedAt) || compareText(a.id, b.id);
  });
}

/** Unfired entries at or above the threshold, strongest first, so a budget that runs out spares them. */
function firingOrder(reached: Map<string, Reached>, minActivation: number): string[] {
  const ready: [string, number][] = [];
  for (const [id, node] of reached) if (!node.fired && node.activation >= minActivation) ready.push([id, node.activation]);
  ready.sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]));
  return ready.map(([id]) => id);
}

/** Each batch entry's distinct edges, seen from it; other relations, self-loops and strangers dropped. */
function incidentEdges(batch: readonly string[], edges: readonly TypedEdge[], rels: readonly GraphRel[] | null): Map<string, Incident[]> {
  const firing = new Set(batch);
  const allowed = rels === null ? null : new Set(rels);
  const seen = new Set<string>();
  const incidence = new Map<string, Incident[]>();
  const add = (id: string, incident: Incident): void => {
    const list = incidence.get(id);
    if (list === undefined) incidence.set(id, [incident]);
    else list.push(incident);
  };
  for (const edge of edges) {
    if (edge.src === edge.dst || (allowed !== null && !allowed.has(edge.rel))) continue;
    const key = `${edge.src}\n${edge.dst}\n${edge.rel}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (firing.has(edge.src)) add(edge.src, { other: edge.dst, rel: edge.rel, direction: "out" });
    if (firing.has(edge.dst)) add(edge.dst, { other: edge.src, rel: edge.rel, direction: "in" });
  }
  return incidence;
}

function fire(id: string, node: Reached, incident: readonly Incident[], similar: readonly SimilarEntry[], flows: Flow[]): void {
  const scale = SPREAD / Math.sqrt(Math.max(1, incident.length));
  const send = (to: string, factor: number, step: PathStep): void => {
    flows.push({ to, amount: node.activation * factor, strength: node.strength * factor, from: id, step });
  };
  for (const { other, rel, direction } of incident) send(other, activationWeight(rel, direction) * scale, { id: other, rel, direction });
  for (const { id: other, cosine } of similar) {
    if (other !== id && cosine > 0) send(other, SIMILARITY_WEIGHT * cosine * scale, { id: other, rel: "similar", direction: "out" });
  }
  node.fired = true;
}

function receive(reached: Map<string, Reached>, flow: Flow, hop: number): void {
  let node = reached.get(flow.to);
  if (node === undefined) {
    node = { activation: 0, hop, fired: false, strength: -1, from: null, step: null, viaSimilarity: false };
    reached.set(flow.to, node);
  }
  node.activation += flow.amount;
  if (flow.step.rel === "similar") node.viaSimilarity = true;
  if (!node.fired && isStronger(flow, node)) {
    node.strength = flow.strength;
    node.from = flow.from;
    node.step = flow.step;
  }
}

function isStronger(flow: Flow, node: Reached): boolean {
  if (flow.strength !== node.strength) return flow.strength > node.strength;
  const current = node.step as PathStep;
  return (
    (compareText(flow.from, node.from as string) || compareText(flow.step.rel, current.rel) || compareText(flow.step.direction, current.direction)) < 0
  );
}

function pathTo(reached: Map<string, Reached>, node: Reached): PathStep[] {
  const steps: PathStep[] = [];
  for (let at = node; at.step !== null && at.from !== null; at = reached.get(at.from) as Reached) steps.push(at.step);
  return steps.reverse();
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
