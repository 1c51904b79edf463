import { describe, expect, it } from "vitest";
import { GEOMETRY, layersOf, layoutPlan, type PlanLayoutNode } from "../../ui/src/tabs/blueprints/plan-layout.js";

// The plan picture's layout (ui/src/tabs/blueprints/plan-layout.ts): pure, so it is checked here
// without a browser; the Blueprints tab's Chromium tests check the picture drawn from it.

const node = (id: string, needs: string[] = [], rows = 0): PlanLayoutNode => ({ id, needs, rows });

/** build → test, lint → approve → publish (a stack of 3) → announce, which also needs build. */
const RELEASE = [node("build"), node("test", ["build"]), node("lint", ["build"]), node("approve", ["test", "lint"]), node("publish", ["approve"], 3), node("announce", ["publish", "build"])];

describe("The plan layout", () => {
  it("puts each node one layer after its deepest need", () => {
    expect(Object.fromEntries(layersOf(RELEASE))).toEqual({ build: 0, test: 1, lint: 1, approve: 2, publish: 3, announce: 4 });
    // Needs naming no node of the plan are ignored; a loop (never saved) does not hang it.
    expect(Object.fromEntries(layersOf([node("a", ["ghost"]), node("b", ["a", "ghost"])]))).toEqual({ a: 0, b: 1 });
    const looped = layersOf([node("a", ["b"]), node("b", ["a"])]);
    expect([...looped.values()].every(Number.isInteger)).toBe(true);
    expect(layoutPlan([node("a", ["b"]), node("b", ["a"])], 800).nodes).toHaveLength(2);
  });

  it("lays layers out as columns when they fit, every edge pointing forward", () => {
    const layout = layoutPlan(RELEASE, 1200);
    expect(layout.orientation).toBe("columns");
    expect(layout.overflows).toBe(false);
    expect(layout.width).toBeLessThanOrEqual(1200);
    const at = new Map(layout.nodes.map((placed) => [placed.id, placed]));
    for (const { id, needs } of RELEASE) for (const need of needs) expect((at.get(need)?.x ?? 0) + (at.get(need)?.width ?? 0)).toBeLessThan(at.get(id)?.x ?? 0);
    expect(at.get("publish")).toMatchObject({ stacked: true, height: GEOMETRY.headerHeight + 3 * (GEOMETRY.rowHeight + GEOMETRY.rowGap) - GEOMETRY.rowGap + GEOMETRY.stackPad });
    expect(layout.edges.map((edge) => `${edge.from}>${edge.to}`).sort()).toEqual(["approve>publish", "build>announce", "build>lint", "build>test", "lint>approve", "publish>announce", "test>approve"]);
  });

  it("gives an edge that skips layers a lane of its own, clear of the boxes it passes", () => {
    const layout = layoutPlan(RELEASE, 1200);
    const skipping = layout.edges.find((edge) => edge.from === "build" && edge.to === "announce");
    // One straight run along a lane in each of the three layers it crosses.
    expect(skipping?.path.match(/ L/g)?.length).toBe(3);
    const lanes = [...(skipping?.path.matchAll(/ C[^C]*? ([\d.]+),([\d.]+) L([\d.]+),([\d.]+)/g) ?? [])].map((match) => ({ y: Number(match[2]), from: Number(match[1]), to: Number(match[3]) }));
    expect(lanes).toHaveLength(3);
    for (const lane of lanes) {
      for (const box of layout.nodes) {
        const crossesBox = lane.to > box.x && lane.from < box.x + box.width && lane.y > box.y && lane.y < box.y + box.height;
        expect(crossesBox, `the lane at y=${lane.y} runs through ${box.id}`).toBe(false);
      }
    }
  });

  it("turns to rows, top to bottom, when the columns do not fit, and scrolls only when neither does", () => {
    const narrow = layoutPlan(RELEASE, 360);
    expect(narrow.orientation).toBe("rows");
    expect(narrow.overflows).toBe(false);
    expect(narrow.width).toBeLessThanOrEqual(360);
    const at = new Map(narrow.nodes.map((placed) => [placed.id, placed]));
    expect((at.get("build")?.y ?? 0) + (at.get("build")?.height ?? 0)).toBeLessThan(at.get("test")?.y ?? 0);
    // A lone box in its layer is wider than the two that share one.
    expect(at.get("approve")?.width ?? 0).toBeGreaterThan(at.get("test")?.width ?? 0);

    const wide = [node("root"), ...Array.from({ length: 6 }, (_, index) => node(`leaf${index}`, ["root"])), node("end", ["leaf0"]), node("last", ["end"]), node("final", ["last"])];
    const cramped = layoutPlan(wide, 360);
    expect(cramped.overflows).toBe(true);
    expect(cramped.nodes.every((placed) => placed.width === GEOMETRY.minWidth)).toBe(true);
  });

  it("draws the same plan the same way every time, whatever order the needs are listed in", () => {
    expect(layoutPlan(RELEASE, 900)).toEqual(layoutPlan(RELEASE, 900));
    const reordered = RELEASE.map((entry) => ({ ...entry, needs: [...entry.needs].reverse() }));
    const positions = (nodes: PlanLayoutNode[]) => layoutPlan(nodes, 900).nodes.map(({ id, x, y }) => ({ id, x, y }));
    expect(positions(reordered)).toEqual(positions(RELEASE));
  });
});
