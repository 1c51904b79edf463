import { describe, expect, it } from "vitest";
import type { GraphRel, TypedEdge } from "../../src/services/graph/edges.js";
import { MAX_ITERATIONS } from "../../src/services/graph/pagerank.js";
import { pageRank, topCentral, type Centrality } from "../helpers/pagerank.js";

const d = 0.85;

/** `edge("a", "supports", "b")` is stored as a → b, as the sentence reads. */
const edge = (src: string, rel: GraphRel, dst: string): TypedEdge => ({ src, dst, rel });

/**
 * An independent reference: PageRank by dense matrix power iteration over arcs written out by
 * hand as [from, to, weight], run until the scores stop changing.
 */
function densePageRank(ids: readonly string[], arcs: readonly [string, string, number][]): number[] {
  const n = ids.length;
  const at = (id: string): number => ids.indexOf(id);
  const matrix = ids.map(() => new Array<number>(n).fill(0));
  const out = new Array<number>(n).fill(0);
  for (const [from, , weight] of arcs) out[at(from)] = (out[at(from)] as number) + weight;
  for (const [from, to, weight] of arcs) {
    const row = matrix[at(from)] as number[];
    row[at(to)] = (row[at(to)] as number) + weight / (out[at(from)] as number);
  }
  let rank = new Array<number>(n).fill(1 / n);
  for (let iteration = 0; iteration < 10_000; iteration++) {
    const next = new Array<number>(n).fill(0);
    for (let u = 0; u < n; u++) {
      for (let v = 0; v < n; v++) {
        const share = out[u] === 0 ? 1 / n : (matrix[u] as number[])[v] as number;
        next[v] = (next[v] as number) + (rank[u] as number) * share;
      }
    }
    const updated = next.map((value) => (1 - d) / n + d * value);
    const change = updated.reduce((sum, value, v) => sum + Math.abs(value - (rank[v] as number)), 0);
    rank = updated;
    if (change < 1e-15) break;
  }
  return rank;
}

function expectScores(result: Centrality, expected: Record<string, number>): void {
  for (const [id, score] of Object.entries(expected)) {
    expect(Math.abs((result.scores[result.ids.indexOf(id)] as number) - score), id).toBeLessThan(1e-6);
  }
}

const sum = (scores: Float64Array): number => scores.reduce((total, value) => total + value, 0);

describe("PageRank in closed form", () => {
  it("ranks the hub of a star whose leaves support it", () => {
    // Leaves l get x, the dangling hub gets y, n = 4: x = (1 − d)/4 + d·y/4 and 3x + y = 1,
    // so y = 1 − 3(0.15 + 0.85y)/4, 6.55y = 3.55: y = 3.55/6.55 ≈ 0.541985, x = (1 − y)/3 ≈ 0.152672
    const result = pageRank(["hub", "l1", "l2", "l3"], ["l1", "l2", "l3"].map((leaf) => edge(leaf, "supports", "hub")));
    const hub = 3.55 / 6.55;
    expectScores(result, { hub, l1: (1 - hub) / 3, l2: (1 - hub) / 3, l3: (1 - hub) / 3 });
    expect(Array.from(result.ranks)).toEqual([1, 2, 3, 4]);
  });

  it("ranks a chain in growing order", () => {
    // a → b → c, c dangling: with β = (1 − d)/3 + d·c/3, a = β, b = β + d·a = β(1 + d), c = β(1 + d + d²);
    // the sum gives β = 1/(3 + 2d + d²) = 1/5.4225 ≈ 0.184417
    const result = pageRank(["a", "b", "c"], [edge("a", "derived_from", "b"), edge("b", "grounds", "c")]);
    const beta = 1 / (3 + 2 * d + d * d);
    expectScores(result, { a: beta, b: beta * (1 + d), c: beta * (1 + d + d * d) });
  });

  it("gives every entry of a cycle the same score", () => {
    const result = pageRank(["a", "b", "c"], [edge("a", "supports", "b"), edge("b", "supports", "c"), edge("c", "supports", "a")]);
    expectScores(result, { a: 1 / 3, b: 1 / 3, c: 1 / 3 });
  });

  it("spreads a dangling entry's rank evenly", () => {
    // a → b, b dangling: β = (1 − d)/2 + d·b/2, a = β, b = β(1 + d); sum: β = 1/(2 + d) ≈ 0.350877
    const result = pageRank(["a", "b"], [edge("a", "supports", "b")]);
    expectScores(result, { a: 1 / (2 + d), b: (1 + d) / (2 + d) });
  });

  it("sends supersedes rank from the older entry to the newer", () => {
    // `new supersedes old` is an arc old → new: the dangling pair above with new in b's place
    const result = pageRank(["new", "old"], [edge("new", "supersedes", "old")]);
    expectScores(result, { old: 1 / (2 + d), new: (1 + d) / (2 + d) });
    expect(Array.from(result.ranks)).toEqual([1, 2]);
  });

  it("sends relates_to rank both ways", () => {
    // a – b – c, each link both ways: a = c = x, b = y with x = (1 − d)/3 + d·y/2 (b halves its rank)
    // and y = 1 − 2x: 1.85x = 0.475, x ≈ 0.256757, y ≈ 0.486486
    const result = pageRank(["a", "b", "c"], [edge("a", "relates_to", "b"), edge("b", "relates_to", "c")]);
    const x = 0.475 / 1.85;
    expectScores(result, { a: x, b: 1 - 2 * x, c: x });
  });
});

describe("PageRank against a dense reference", () => {
  it("makes contradicts carry nothing", () => {
    const ids = ["a", "b", "c"];
    const base = [edge("a", "supports", "b"), edge("c", "relates_to", "b")];
    const result = pageRank(ids, [...base, edge("b", "contradicts", "a"), edge("a", "contradicts", "c")]);
    expect(result.scores).toEqual(pageRank(ids, base).scores);
    const reference = densePageRank(ids, [
      ["a", "b", 1],
      ["c", "b", 0.5],
      ["b", "c", 0.5],
    ]);
    expectScores(result, { a: reference[0] as number, b: reference[1] as number, c: reference[2] as number });
    // Only contradictions: nobody passes anything on, so all are dangling and equal.
    expectScores(pageRank(["a", "b"], [edge("a", "contradicts", "b")]), { a: 0.5, b: 0.5 });
  });

  it("weighs every relation as §14 says", () => {
    const ids = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const edges = [
      edge("a", "supports", "b"),
      edge("a", "depends_on", "c"),
      edge("b", "derived_from", "d"),
      edge("b", "relates_to", "e"),
      edge("c", "grounds", "d"),
      edge("d", "supersedes", "f"),
      edge("e", "contradicts", "a"),
      edge("e", "supports", "a"),
      edge("f", "relates_to", "g"),
      edge("g", "depends_on", "h"),
      edge("h", "supports", "b"),
      edge("g", "supports", "a"),
    ];
    const arcs: [string, string, number][] = [
      ["a", "b", 1],
      ["a", "c", 0.5],
      ["b", "d", 1],
      ["b", "e", 0.5],
      ["e", "b", 0.5],
      ["c", "d", 1],
      ["f", "d", 1],
      ["e", "a", 1],
      ["f", "g", 0.5],
      ["g", "f", 0.5],
      ["g", "h", 0.5],
      ["h", "b", 1],
      ["g", "a", 1],
    ];
    const result = pageRank(ids, edges);
    const reference = densePageRank(ids, arcs);
    expectScores(result, Object.fromEntries(ids.map((id, index) => [id, reference[index] as number])));
    expect(result.converged).toBe(true);
  });

  it("adds the weights of different relations between the same pair", () => {
    // a → b carries 1 + 0.5, a → c carries 1: a gives b 60 % and c 40 % of its rank
    const ids = ["a", "b", "c"];
    const result = pageRank(ids, [edge("a", "supports", "b"), edge("a", "relates_to", "b"), edge("a", "supports", "c")]);
    const reference = densePageRank(ids, [
      ["a", "b", 1.5],
      ["b", "a", 0.5],
      ["a", "c", 1],
    ]);
    expectScores(result, { a: reference[0] as number, b: reference[1] as number, c: reference[2] as number });
  });
});

describe("what PageRank leaves out", () => {
  it("counts an edge once however often it is given, as a merge parent also linked by derived_from is", () => {
    const ids = ["merged", "parent", "other"];
    const once = pageRank(ids, [edge("merged", "derived_from", "parent"), edge("merged", "supports", "other")]);
    const twice = pageRank(ids, [edge("merged", "derived_from", "parent"), edge("merged", "derived_from", "parent"), edge("merged", "supports", "other")]);
    expect(twice.scores).toEqual(once.scores);
  });

  it("ignores edges to entries outside the selection and self-loops, so they move no rank", () => {
    const ids = ["a", "b"];
    const plain = pageRank(ids, [edge("a", "supports", "b")]);
    const noisy = pageRank(ids, [edge("private", "supports", "a"), edge("a", "supports", "private"), edge("b", "supports", "b"), edge("a", "supports", "b")]);
    expect(noisy.scores).toEqual(plain.scores);
  });

  it("refuses an id listed twice", () => {
    expect(() => pageRank(["a", "a"], [])).toThrow(/twice/);
  });
});

describe("scores and ranks", () => {
  it("sum to 1 and rank from 1, equal scores keeping the order of the ids", () => {
    const result = pageRank(["z", "y", "x", "hub"], ["z", "y", "x"].map((leaf) => edge(leaf, "supports", "hub")));
    expect(sum(result.scores)).toBeCloseTo(1, 12);
    expect(Array.from(result.ranks)).toEqual([2, 3, 4, 1]);
    expect(Array.from(result.order)).toEqual([3, 0, 1, 2]);
    expect(topCentral(result, 2)).toEqual([
      { id: "hub", score: result.scores[3], rank: 1 },
      { id: "z", score: result.scores[0], rank: 2 },
    ]);
  });

  it("stops at 100 iterations, saying it did not converge", () => {
    const ids = Array.from({ length: 50 }, (_, i) => `n${i}`);
    // Targets repeat, so the uniform start is not already the answer.
    const edges = ids.map((id, i) => edge(id, "supports", ids[(i * i + 1) % ids.length] as string));
    expect(pageRank(ids, edges, { tolerance: 0 })).toMatchObject({ iterations: MAX_ITERATIONS, converged: false });
    expect(pageRank(ids, edges, { maxIterations: 3 })).toMatchObject({ iterations: 3, converged: false });
    expect(pageRank(ids, edges).converged).toBe(true);
  });

  it("ranks an empty selection as empty", () => {
    expect(pageRank([], [])).toMatchObject({ iterations: 0, converged: true, scores: new Float64Array(0) });
  });
});
