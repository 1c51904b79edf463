import { describe, expect, it } from "vitest";
import {
  activationWeight,
  orderRelated,
  spreadActivation,
  type Activation,
  type ActivatedEntry,
  type EdgeQuery,
  type EdgeSource,
} from "../../src/services/graph/activation.js";
import type { GraphRel, TypedEdge } from "../../src/services/graph/edges.js";

// Hand computation: an entry u with activation A and degree d sends A · W · 0.6 / √d over each
// edge. √2 ≈ 1.414214, so 0.6/√2 ≈ 0.424264.

/** `edge("a", "supports", "b")` is stored as a → b, as the sentence reads. */
const edge = (src: string, rel: GraphRel, dst: string): TypedEdge => ({ src, dst, rel });

/** An edge source over `edges` that hides every edge touching `hidden`, as visibility does, and logs its queries. */
function sourceOf(edges: readonly TypedEdge[], hidden: ReadonlySet<string> = new Set()): { source: EdgeSource; queries: EdgeQuery[] } {
  const queries: EdgeQuery[] = [];
  const source: EdgeSource = (query) => {
    queries.push(query);
    const ids = new Set(query.ids);
    const rels = query.rels === null ? null : new Set(query.rels);
    const found = edges.filter(
      (e) => (ids.has(e.src) || ids.has(e.dst)) && !hidden.has(e.src) && !hidden.has(e.dst) && (rels === null || rels.has(e.rel)),
    );
    return Promise.resolve(found.slice(0, query.limit));
  };
  return { source, queries };
}

/** The entries' ids and activations, in order, activations to 9 places. */
function expectActivations(result: Activation, expected: [string, number][]): void {
  expect(result.entries.map((entry) => entry.id)).toEqual(expected.map(([id]) => id));
  for (const [index, [, activation]] of expected.entries()) expect(result.entries[index]?.activation).toBeCloseTo(activation, 9);
}

function entryOf(result: Activation, id: string): ActivatedEntry {
  const entry = result.entries.find((candidate) => candidate.id === id);
  if (entry === undefined) throw new Error(`${id} was not reached`);
  return entry;
}

const chain = [edge("seed", "supports", "a"), edge("a", "supports", "b"), edge("b", "supports", "c"), edge("c", "supports", "d")];

describe("spreading activation along a chain", () => {
  it("halves nothing at the seed and divides by √deg further on", async () => {
    // hop 1: seed (deg 1) → a: 1 · 1 · 0.6 / 1 = 0.6
    // hop 2: a (deg 2) → b: 0.6 · 0.6/√2 = 0.36/√2 ≈ 0.254558
    const result = await spreadActivation("seed", sourceOf(chain).source);
    expectActivations(result, [
      ["a", 0.6],
      ["b", 0.36 / Math.SQRT2],
    ]);
    expect(entryOf(result, "a")).toEqual({ id: "a", activation: 0.6, hops: 1, path: [{ id: "a", rel: "supports", direction: "out" }], via_similarity: false });
    expect(entryOf(result, "b").hops).toBe(2);
    expect(entryOf(result, "b").path).toEqual([
      { id: "a", rel: "supports", direction: "out" },
      { id: "b", rel: "supports", direction: "out" },
    ]);
  });

  it("walks against the stored direction too, saying so", async () => {
    const result = await spreadActivation("d", sourceOf(chain).source, { hops: 1 });
    expect(result.entries).toEqual([{ id: "c", activation: 0.6, hops: 1, path: [{ id: "c", rel: "supports", direction: "in" }], via_similarity: false }]);
  });

  it("adds the flow back into an entry that already fired without firing it again", async () => {
    // hop 3: b (deg 2, A = 0.36/√2) → a and c: 0.36/√2 · 0.6/√2 = 0.216/2 = 0.108 each
    // a = 0.6 + 0.108 = 0.708; a fired at hop 2 and never fires again
    const { source, queries } = sourceOf(chain);
    const result = await spreadActivation("seed", source, { hops: 3 });
    expectActivations(result, [
      ["a", 0.708],
      ["b", 0.36 / Math.SQRT2],
      ["c", 0.108],
    ]);
    expect(queries.map((query) => query.ids)).toEqual([["seed"], ["a"], ["b"]]);
  });
});

describe("the hops bound", () => {
  it("fires only the seed with hops 1 and reaches one entry further per hop", async () => {
    const reachedWith = async (hops: number): Promise<string[]> =>
      (await spreadActivation("seed", sourceOf(chain).source, { hops, minActivation: 0 })).entries.map((entry) => entry.id).sort();
    expect(await reachedWith(1)).toEqual(["a"]);
    expect(await reachedWith(2)).toEqual(["a", "b"]);
    expect(await reachedWith(3)).toEqual(["a", "b", "c"]);
    expect(await reachedWith(4)).toEqual(["a", "b", "c", "d"]);
  });

  it("refuses hops outside 1–4", async () => {
    const { source } = sourceOf(chain);
    await expect(spreadActivation("seed", source, { hops: 0 })).rejects.toThrow(RangeError);
    await expect(spreadActivation("seed", source, { hops: 5 })).rejects.toThrow(RangeError);
  });
});

describe("spreading activation in a star", () => {
  it("shares the seed's activation among its leaves by √deg", async () => {
    // seed (deg 4) → each leaf: 0.6 · 0.6 / √4 = 0.18; equal activations fall back to the id
    const star = ["l1", "l2", "l3", "l4"].map((leaf) => edge("seed", "relates_to", leaf));
    const result = await spreadActivation("seed", sourceOf(star).source);
    expectActivations(result, [
      ["l1", 0.18],
      ["l2", 0.18],
      ["l3", 0.18],
      ["l4", 0.18],
    ]);
  });

  it("reaches the other leaves through the hub", async () => {
    // l1 (deg 1) → hub: 0.6 · 0.6 = 0.36; hub (deg 4) → l2, l3, l4: 0.36 · 0.6 · 0.6 / 2 = 0.0648
    const star = ["l1", "l2", "l3", "l4"].map((leaf) => edge("hub", "relates_to", leaf));
    const result = await spreadActivation("l1", sourceOf(star).source);
    expectActivations(result, [
      ["hub", 0.36],
      ["l2", 0.0648],
      ["l3", 0.0648],
      ["l4", 0.0648],
    ]);
    expect(entryOf(result, "l3").path).toEqual([
      { id: "hub", rel: "relates_to", direction: "in" },
      { id: "l3", rel: "relates_to", direction: "out" },
    ]);
  });
});

describe("spreading activation in a diamond", () => {
  it("adds the activations arriving by both sides", async () => {
    // seed (deg 2) → a, b: 0.6/√2 ≈ 0.424264; a, b (deg 2) → t: 0.6/√2 · 0.6/√2 = 0.18 each, t = 0.36
    const diamond = [edge("seed", "supports", "a"), edge("seed", "supports", "b"), edge("a", "supports", "t"), edge("b", "supports", "t")];
    const result = await spreadActivation("seed", sourceOf(diamond).source);
    expectActivations(result, [
      ["a", 0.6 / Math.SQRT2],
      ["b", 0.6 / Math.SQRT2],
      ["t", 0.36],
    ]);
    // Both sides are equally strong: the smaller id's side is the path.
    expect(entryOf(result, "t").path.map((step) => step.id)).toEqual(["a", "t"]);
  });
});

describe("relation weights", () => {
  it("returns a contradicting entry with a path that says so, either way round", async () => {
    // seed (deg 2) → c, x: 0.7 · 0.6/√2 ≈ 0.296985
    const result = await spreadActivation("seed", sourceOf([edge("seed", "contradicts", "c"), edge("x", "contradicts", "seed")]).source);
    expectActivations(result, [
      ["c", 0.42 / Math.SQRT2],
      ["x", 0.42 / Math.SQRT2],
    ]);
    expect(entryOf(result, "c").path).toEqual([{ id: "c", rel: "contradicts", direction: "out" }]);
    expect(entryOf(result, "x").path).toEqual([{ id: "x", rel: "contradicts", direction: "in" }]);
  });

  it("weighs supersedes 0.8 towards the newer entry and 0.4 towards the older", async () => {
    // `seed supersedes old`: old is older, 0.4 · 0.6/√2 ≈ 0.169706; `new supersedes seed`: 0.8 · 0.6/√2 ≈ 0.339411
    const result = await spreadActivation("seed", sourceOf([edge("seed", "supersedes", "old"), edge("new", "supersedes", "seed")]).source);
    expectActivations(result, [
      ["new", 0.48 / Math.SQRT2],
      ["old", 0.24 / Math.SQRT2],
    ]);
    expect(entryOf(result, "new").path).toEqual([{ id: "new", rel: "supersedes", direction: "in" }]);
  });

  it("has the weights of §14", () => {
    const weights = (["supports", "derived_from", "grounds", "contradicts", "relates_to", "depends_on"] as const).map((rel) => [
      activationWeight(rel, "out"),
      activationWeight(rel, "in"),
    ]);
    expect(weights).toEqual([
      [1, 1],
      [0.9, 0.9],
      [0.9, 0.9],
      [0.7, 0.7],
      [0.6, 0.6],
      [0.5, 0.5],
    ]);
    expect([activationWeight("supersedes", "out"), activationWeight("supersedes", "in")]).toEqual([0.4, 0.8]);
  });

  it("counts an edge once however often it is returned, as a merge parent also linked by derived_from is", async () => {
    // merged (deg 1) → parent: 0.9 · 0.6 = 0.54
    const twice = [edge("merged", "derived_from", "parent"), edge("merged", "derived_from", "parent")];
    expectActivations(await spreadActivation("merged", sourceOf(twice).source, { hops: 1 }), [["parent", 0.54]]);
  });
});

describe("the rels filter", () => {
  it("answers as the graph holding only those relations would, degrees included", async () => {
    const graph = [edge("seed", "supports", "a"), edge("seed", "relates_to", "r"), edge("a", "derived_from", "b"), edge("a", "contradicts", "c")];
    const { source, queries } = sourceOf(graph);
    const filtered = await spreadActivation("seed", source, { rels: ["supports", "derived_from"] });
    const only = await spreadActivation("seed", sourceOf(graph.filter((e) => e.rel === "supports" || e.rel === "derived_from")).source);
    expect(filtered).toEqual(only);
    // seed (deg 1) → a: 0.6; a (deg 2) → b: 0.6 · 0.9 · 0.6/√2 ≈ 0.229103
    expectActivations(filtered, [
      ["a", 0.6],
      ["b", 0.324 / Math.SQRT2],
    ]);
    expect(queries.every((query) => query.rels?.join() === "supports,derived_from")).toBe(true);
  });
});

describe("min_activation", () => {
  const graph = [edge("seed", "supports", "a"), edge("seed", "depends_on", "w"), edge("a", "supports", "b"), edge("w", "supports", "z")];
  // seed (deg 2) → a: 0.6/√2 ≈ 0.424264, w: 0.5 · 0.6/√2 ≈ 0.212132
  // a (deg 2) → b: 0.424264 · 0.6/√2 = 0.18; w (deg 2) → z: 0.212132 · 0.6/√2 = 0.09

  it("fires and returns every entry at or above it", async () => {
    expectActivations(await spreadActivation("seed", sourceOf(graph).source), [
      ["a", 0.6 / Math.SQRT2],
      ["w", 0.3 / Math.SQRT2],
      ["b", 0.18],
      ["z", 0.09],
    ]);
  });

  it("neither returns an entry below it nor lets it fire", async () => {
    const { source, queries } = sourceOf(graph);
    const result = await spreadActivation("seed", source, { minActivation: 0.15 });
    expectActivations(result, [
      ["a", 0.6 / Math.SQRT2],
      ["w", 0.3 / Math.SQRT2],
      ["b", 0.18],
    ]);
    const strict = sourceOf(graph);
    expectActivations(await spreadActivation("seed", strict.source, { minActivation: 0.25 }), [["a", 0.6 / Math.SQRT2]]);
    expect(strict.queries.map((query) => query.ids)).toEqual([["seed"], ["a"]]);
    expect(queries.map((query) => query.ids)).toEqual([["seed"], ["a", "w"]]);
  });
});

describe("firing once", () => {
  it("fires each entry once even when the graph has a cycle", async () => {
    // seed (deg 2) → a, b: 0.6 · 0.6/√2 ≈ 0.254558; hop 2: a and b (deg 2) fire into each other:
    // 0.254558 · 0.6 · 0.6/√2 = 0.0648, so a = b ≈ 0.319558; nothing is left to fire at hop 3
    const triangle = [edge("seed", "relates_to", "a"), edge("seed", "relates_to", "b"), edge("a", "relates_to", "b")];
    const { source, queries } = sourceOf(triangle);
    const result = await spreadActivation("seed", source, { hops: 4, minActivation: 0 });
    expectActivations(result, [
      ["a", 0.36 / Math.SQRT2 + 0.0648],
      ["b", 0.36 / Math.SQRT2 + 0.0648],
    ]);
    expect(queries.map((query) => query.ids)).toEqual([["seed"], ["a", "b"]]);
    // b's flow reached a after a fired: a's path is the one it passed on.
    expect(entryOf(result, "a").path).toEqual([{ id: "a", rel: "relates_to", direction: "out" }]);
  });
});

describe("similar entries", () => {
  it("join the first hop with weight 0.5 · cosine and spread from there", async () => {
    // the seed's degree counts edges only: seed (deg 1) → a: 0.6, and as a similar entry
    // 0.5 · 0.8 · 0.6 = 0.24, so a = 0.84; s1: 0.5 · 0.9 · 0.6 = 0.27; s1 (deg 1) → t: 0.27 · 0.6 = 0.162
    const graph = [edge("seed", "supports", "a"), edge("s1", "supports", "t")];
    const similar = [
      { id: "s1", cosine: 0.9 },
      { id: "a", cosine: 0.8 },
      { id: "seed", cosine: 1 },
    ];
    const result = await spreadActivation("seed", sourceOf(graph).source, { similar });
    expectActivations(result, [
      ["a", 0.84],
      ["s1", 0.27],
      ["t", 0.162],
    ]);
    expect(entryOf(result, "s1")).toEqual({ id: "s1", activation: 0.27, hops: 1, path: [{ id: "s1", rel: "similar", direction: "out" }], via_similarity: true });
    // a's edge is the stronger path; it was still reached by similarity.
    expect(entryOf(result, "a")).toMatchObject({ via_similarity: true, path: [{ id: "a", rel: "supports", direction: "out" }] });
    expect(entryOf(result, "t")).toMatchObject({ hops: 2, via_similarity: false, path: [{ id: "s1", rel: "similar" }, { id: "t", rel: "supports" }] });
  });
});

describe("the strongest path", () => {
  it("is the largest product of edge factors, not the neighbour that sent the largest flow", async () => {
    // seed (deg 5) → a, b, c, e, d: 0.6/√5 ≈ 0.268328 each
    // hop 2: a, b, c, e (deg 2) → m: 0.6/√5 · 0.6/√2 = 0.36/√10 ≈ 0.113842 each, m = 1.44/√10 ≈ 0.455368;
    //        d (deg 2) → v: 0.36/√10 ≈ 0.113842, path strength 0.113842 (below 0.12: v never fires)
    // hop 3: m (deg 5) → v: 1.44/√10 · 0.6/√5 = 0.864/√50 ≈ 0.122188, the larger flow, but along a path of
    //        strength 0.36/√10 · 0.6/√5 ≈ 0.030548; v = 0.36/√10 + 0.864/√50 ≈ 0.236030
    //        and a, b, c, e get 0.864/√50 back: 0.6/√5 + 0.864/√50 ≈ 0.390516
    const fans = ["a", "b", "c", "e"];
    const graph = [
      ...fans.map((id) => edge("seed", "supports", id)),
      edge("seed", "supports", "d"),
      ...fans.map((id) => edge(id, "supports", "m")),
      edge("m", "supports", "v"),
      edge("d", "supports", "v"),
    ];
    const result = await spreadActivation("seed", sourceOf(graph).source, { hops: 3, minActivation: 0.12 });
    const back = 0.6 / Math.sqrt(5) + 0.864 / Math.sqrt(50);
    expectActivations(result, [
      ["m", 1.44 / Math.sqrt(10)],
      ["a", back],
      ["b", back],
      ["c", back],
      ["e", back],
      ["d", 0.6 / Math.sqrt(5)],
      ["v", 0.36 / Math.sqrt(10) + 0.864 / Math.sqrt(50)],
    ]);
    expect(entryOf(result, "v").path.map((step) => step.id)).toEqual(["d", "v"]);
  });

  it("may be longer than the first link that reached the entry", async () => {
    // seed (deg 2) → u over `seed supersedes u` (u older): 0.4 · 0.6/√2 ≈ 0.169706, below 0.2, so u
    // never fires; → x: 0.6/√2 ≈ 0.424264; x (deg 2) → u: 0.424264 · 0.6/√2 = 0.18 > 0.169706
    const graph = [edge("seed", "supersedes", "u"), edge("seed", "supports", "x"), edge("x", "supports", "u")];
    const result = await spreadActivation("seed", sourceOf(graph).source, { minActivation: 0.2 });
    expectActivations(result, [
      ["x", 0.6 / Math.SQRT2],
      ["u", 0.24 / Math.SQRT2 + 0.18],
    ]);
    expect(entryOf(result, "u")).toMatchObject({
      hops: 1,
      path: [
        { id: "x", rel: "supports", direction: "out" },
        { id: "u", rel: "supports", direction: "out" },
      ],
    });
  });

  it("is fixed when the entry fires, so the paths it passed on extend it", async () => {
    // As above, but u fires at hop 2 (0.169706 ≥ 0.05), at the same time as x, so x's stronger
    // 0.18 arrives after: it adds to u's activation, not its path. u (deg 3) → w: 0.169706 · 0.6/√3
    // ≈ 0.058788, and x gets as much back: x ≈ 0.483052
    const graph = [edge("seed", "supersedes", "u"), edge("seed", "supports", "x"), edge("x", "supports", "u"), edge("u", "supports", "w")];
    const result = await spreadActivation("seed", sourceOf(graph).source);
    const uToW = ((0.24 / Math.SQRT2) * 0.6) / Math.sqrt(3);
    expectActivations(result, [
      ["x", 0.6 / Math.SQRT2 + uToW],
      ["u", 0.24 / Math.SQRT2 + 0.18],
      ["w", uToW],
    ]);
    expect(entryOf(result, "u").path).toEqual([{ id: "u", rel: "supersedes", direction: "out" }]);
    expect(entryOf(result, "w").path).toEqual([
      { id: "u", rel: "supersedes", direction: "out" },
      { id: "w", rel: "supports", direction: "out" },
    ]);
  });
});

describe("visibility", () => {
  it("gives the answer of a graph without the entries the source hides", async () => {
    const graph = [
      edge("seed", "supports", "a"),
      edge("seed", "relates_to", "secret"),
      edge("secret", "supports", "b"),
      edge("a", "derived_from", "b"),
      edge("b", "contradicts", "secret"),
      edge("a", "supports", "c"),
    ];
    const hidden = await spreadActivation("seed", sourceOf(graph, new Set(["secret"])).source, { hops: 3 });
    const without = await spreadActivation("seed", sourceOf(graph.filter((e) => e.src !== "secret" && e.dst !== "secret")).source, { hops: 3 });
    const visible = await spreadActivation("seed", sourceOf(graph).source, { hops: 3 });
    expect(hidden).toEqual(without);
    expect(hidden.entries.map((entry) => entry.id)).not.toContain("secret");
    // The hidden entry would have changed the answer, degrees included.
    expect(entryOf(visible, "a").activation).not.toBeCloseTo(entryOf(hidden, "a").activation, 6);
  });
});

describe("the work bound", () => {
  it("stops, saying so, when the edges read would pass the budget", async () => {
    // hop 1 reads 1 edge; hop 2 asks for at most 2 (1 left + 1) and gets 2 (seed–a, a–b): over budget
    const { source, queries } = sourceOf(chain);
    const result = await spreadActivation("seed", source, { hops: 4, maxEdges: 2 });
    expect(result).toMatchObject({ truncated: true, edgesRead: 3 });
    expectActivations(result, [["a", 0.6]]);
    expect(queries.map((query) => query.limit)).toEqual([3, 2]);
  });

  it("fires the strongest entries first, in batches of at most 64", async () => {
    const leaves = Array.from({ length: 150 }, (_, i) => `l${String(i).padStart(3, "0")}`);
    const { source, queries } = sourceOf(leaves.map((leaf) => edge("seed", "supports", leaf)));
    const result = await spreadActivation("seed", source, { minActivation: 0 });
    expect(result).toMatchObject({ truncated: false, edgesRead: 300 });
    expect(queries.map((query) => query.ids.length)).toEqual([1, 64, 64, 22]);
  });
});

describe("the order of related entries", () => {
  it("breaks equal activations by confidence, then the latest update, then id", async () => {
    const star = ["l1", "l2", "l3", "l4"].map((leaf) => edge("seed", "relates_to", leaf));
    const { entries } = await spreadActivation("seed", sourceOf([...star, edge("seed", "supports", "top")]).source);
    const keys: Record<string, { confidence: number; updatedAt: string }> = {
      top: { confidence: 0.1, updatedAt: "2024-01-01T00:00:00.000Z" },
      l1: { confidence: 0.5, updatedAt: "2024-05-01T00:00:00.000Z" },
      l2: { confidence: 0.9, updatedAt: "2024-01-01T00:00:00.000Z" },
      l3: { confidence: 0.5, updatedAt: "2024-06-01T00:00:00.000Z" },
      l4: { confidence: 0.5, updatedAt: "2024-06-01T00:00:00.000Z" },
    };
    const ordered = orderRelated(entries, (id) => keys[id] as { confidence: number; updatedAt: string });
    expect(ordered.map((entry) => entry.id)).toEqual(["top", "l2", "l3", "l4", "l1"]);
  });
});
