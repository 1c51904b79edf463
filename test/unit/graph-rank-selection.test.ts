import { describe, expect, it } from "vitest";
import type { EdgeKey, SelectionNode } from "../../src/store/knowledge.js";
import type { GraphRel } from "../../src/services/graph/edges.js";
import { pageRank } from "../helpers/pagerank.js";
import { MAX_RANKED_ENTRIES, rankSelection } from "../../src/services/graph/rank-selection.js";

// What the graph worker computes from the rows it reads (CONTRACT §14, issue 25): the same ranks
// as PageRank over the whole selection, of which only the best-ranked entries and the edges
// between them travel back to the server's thread.

const node = (pk: number, parents: string[] = [], expiresAt: string | null = null): SelectionNode => ({ pk, id: `e${pk}`, parents: JSON.stringify(parents), expires_at: expiresAt });
const key = (src: number, rel: GraphRel, dst: number): EdgeKey => ({ src_pk: src, dst_pk: dst, rel });

describe("ranking a selection from its rows", () => {
  it("ranks as PageRank over its edges and merge parents does, ids and scores alike", () => {
    const nodes = [node(1), node(2, ["e1"]), node(3), node(4), node(9, ["e404"])];
    const keys = [key(3, "supports", 1), key(4, "relates_to", 3), key(4, "supports", 1), key(1, "contradicts", 4), key(3, "supports", 77)];
    const ranking = rankSelection(nodes, keys, { entries: 10, edges: 10 });
    const reference = pageRank(
      nodes.map((entry) => entry.id),
      [
        { src: "e3", dst: "e1", rel: "supports" },
        { src: "e4", dst: "e3", rel: "relates_to" },
        { src: "e4", dst: "e1", rel: "supports" },
        { src: "e1", dst: "e4", rel: "contradicts" },
        { src: "e2", dst: "e1", rel: "derived_from" },
      ],
    );
    expect(ranking.top.map((entry) => entry.id)).toEqual(Array.from(reference.order, (position) => reference.ids[position]));
    for (const entry of ranking.top) expect(entry.score).toBeCloseTo(reference.scores[reference.ids.indexOf(entry.id)] as number, 12);
    // The edge to an entry outside the selection is not stored between its entries; the contradiction is.
    expect(ranking).toMatchObject({ entries: 5, storedEdges: 4, truncated: false, validUntilMs: Number.POSITIVE_INFINITY });
  });

  it("keeps the best-ranked entries and the edges between them, each pair and relation once, better pairs first", () => {
    const nodes = Array.from({ length: 5 }, (_, index) => node(index + 1));
    // e1 is the hub; e2 gets from e3 and e4, e3 from e2; e4 and e5 from nobody.
    const keys = [key(2, "supports", 1), key(3, "supports", 1), key(3, "supports", 1), key(4, "supports", 1), key(5, "supports", 1), key(3, "relates_to", 2), key(4, "supports", 2)];
    const ranking = rankSelection(nodes, keys, { entries: 3, edges: 2 });
    expect(ranking.top.map((entry) => entry.id)).toEqual(["e1", "e2", "e3"]);
    expect(ranking.topEdges).toEqual([
      { src: "e2", dst: "e1", rel: "supports" },
      { src: "e3", dst: "e1", rel: "supports" },
    ]);
    expect(ranking.topEdgesFound).toBe(3);
  });

  it("ranks at most MAX_RANKED_ENTRIES entries, the newest, and says the answer was truncated", () => {
    const nodes = Array.from({ length: MAX_RANKED_ENTRIES + 1 }, (_, index) => node(index + 1));
    const ranking = rankSelection(nodes, [key(MAX_RANKED_ENTRIES + 1, "supports", 1)], { entries: 1, edges: 1 });
    expect(ranking).toMatchObject({ entries: MAX_RANKED_ENTRIES, storedEdges: 0, truncated: true });
  });

  it("holds until the first of its entries expires", () => {
    const ranking = rankSelection([node(1, [], "2031-01-01T00:00:00.000Z"), node(2, [], "2030-06-01T00:00:00.000Z")], [], { entries: 2, edges: 0 });
    expect(ranking.validUntilMs).toBe(Date.parse("2030-06-01T00:00:00.000Z"));
  });
});
