// A deterministic layered layout for a blueprint's plan: a node's layer is the length of the
// longest chain of `needs` leading to it, so every arrow points forward; within a layer, nodes
// start in the document's order and a few barycentre sweeps move each towards the nodes it is
// linked to, ties keeping the earlier order; an edge that skips layers runs along a lane of its own
// through each layer it crosses. Layers are columns (left to right) when they fit the width given,
// else rows (top to bottom); when neither fits, the narrower one, which the caller lets scroll.
// Pure functions, no DOM: the same plan and width always give the same picture.

export interface PlanLayoutNode {
  id: string;
  needs: readonly string[];
  /** Rows of a fan-out stack (its items, or one line saying why there are none); 0: a single task. */
  rows: number;
}

type Orientation = "columns" | "rows";

export interface PlacedNode {
  id: string;
  layer: number;
  /** Position in its layer, from the top (columns) or the left (rows). */
  order: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** A fan-out stack, drawn with shadow cards behind it. */
  stacked: boolean;
}

interface PlacedEdge {
  from: string;
  to: string;
  /** An SVG path from the edge of `from` to the edge of `to`, a gentle S-curve. */
  path: string;
}

export interface PlanLayout {
  orientation: Orientation;
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  /** Whether the picture is wider than the width given (the caller scrolls it). */
  overflows: boolean;
}

/** Sizes, in SVG user units (CSS pixels). */
export const GEOMETRY = {
  margin: 12,
  nodeHeight: 54,
  headerHeight: 32,
  rowHeight: 24,
  rowGap: 4,
  stackPad: 8,
  /** How far the shadow cards of a fan-out stack stick out, right and down. */
  stackOffset: 6,
  /** Where edges meet a node, from its top: the middle of a task, the header of a stack. */
  anchor: 27,
  minWidth: 140,
  maxColumnWidth: 220,
  maxRowWidth: 260,
  columnGap: 56,
  columnNodeGap: 18,
  rowLayerGap: 44,
  rowNodeGap: 18,
  /** The room an edge takes where it passes through a layer. */
  lane: 10,
} as const;

function nodeHeight(rows: number): number {
  if (rows <= 0) return GEOMETRY.nodeHeight;
  return GEOMETRY.headerHeight + rows * (GEOMETRY.rowHeight + GEOMETRY.rowGap) - GEOMETRY.rowGap + GEOMETRY.stackPad;
}

/** Each node's layer: 0 for a node that needs nothing, else one more than its deepest need. */
export function layersOf(nodes: readonly PlanLayoutNode[]): Map<string, number> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const layers = new Map<string, number>();
  const visiting = new Set<string>();
  const depth = (id: string): number => {
    const known = layers.get(id);
    if (known !== undefined) return known;
    // A saved blueprint has no cycle; should one arrive anyway, the loop is cut rather than followed forever.
    if (visiting.has(id)) return 0;
    visiting.add(id);
    let layer = 0;
    for (const need of byId.get(id)?.needs ?? []) if (byId.has(need)) layer = Math.max(layer, depth(need) + 1);
    visiting.delete(id);
    layers.set(id, layer);
    return layer;
  };
  for (const node of nodes) depth(node.id);
  return layers;
}

/** A node of the ordering: a plan node, or a waypoint of an edge that crosses a layer. */
interface Slot {
  id: string;
  layer: number;
  /** The slots it is linked to in the previous layer. */
  ins: string[];
  waypoint: boolean;
}

/**
 * An edge that skips layers gets a waypoint in each layer it crosses (ids `need>node@layer`),
 * ordered with the nodes, so that it has a lane of its own instead of running behind the boxes in
 * between.
 */
function slotsOf(nodes: readonly PlanLayoutNode[], layers: ReadonlyMap<string, number>): Slot[] {
  const known = new Set(nodes.map((node) => node.id));
  const slots: Slot[] = [];
  for (const node of nodes) {
    const layer = layers.get(node.id) ?? 0;
    const ins: string[] = [];
    for (const need of node.needs) {
      if (!known.has(need)) continue;
      let previous = need;
      for (let between = (layers.get(need) ?? 0) + 1; between < layer; between++) {
        const id = waypointId(need, node.id, between);
        slots.push({ id, layer: between, ins: [previous], waypoint: true });
        previous = id;
      }
      ins.push(previous);
    }
    slots.push({ id: node.id, layer, ins, waypoint: false });
  }
  return slots;
}

const waypointId = (from: string, to: string, layer: number): string => `${from}>${to}@${layer}`;

/** The slots of each layer in drawing order, after barycentre sweeps down and up. */
function orderSlots(slots: readonly Slot[], sweeps: number): string[][] {
  const count = Math.max(0, ...slots.map((slot) => slot.layer)) + 1;
  const ordered: string[][] = Array.from({ length: count }, () => []);
  // Plan nodes in the document's order; a waypoint starts after the nodes of its layer.
  for (const slot of slots) if (!slot.waypoint) ordered[slot.layer]?.push(slot.id);
  for (const slot of slots) if (slot.waypoint) ordered[slot.layer]?.push(slot.id);
  const ins = new Map<string, string[]>();
  const outs = new Map<string, string[]>();
  for (const slot of slots) {
    ins.set(slot.id, slot.ins);
    for (const from of slot.ins) outs.set(from, [...(outs.get(from) ?? []), slot.id]);
  }
  const positions = new Map<string, number>();
  const remember = () => ordered.forEach((layer) => layer.forEach((id, index) => positions.set(id, index)));
  remember();
  const sortBy = (layer: string[], neighbours: Map<string, string[]>) => {
    const keyed = layer.map((id, index) => {
      const linked = (neighbours.get(id) ?? []).map((other) => positions.get(other)).filter((value): value is number => value !== undefined);
      const key = linked.length ? linked.reduce((sum, value) => sum + value, 0) / linked.length : index;
      return { id, key, index };
    });
    keyed.sort((a, b) => a.key - b.key || a.index - b.index);
    return keyed.map((entry) => entry.id);
  };
  for (let sweep = 0; sweep < sweeps; sweep++) {
    for (let layer = 1; layer < count; layer++) {
      ordered[layer] = sortBy(ordered[layer] ?? [], ins);
      remember();
    }
    for (let layer = count - 2; layer >= 0; layer--) {
      ordered[layer] = sortBy(ordered[layer] ?? [], outs);
      remember();
    }
  }
  return ordered;
}

const clamp = (value: number, low: number, high: number) => Math.max(low, Math.min(high, value));

/** Where a slot sits: its box, or for a waypoint, the lane an edge runs along. */
interface Spot {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Lays the plan out for a view `available` pixels wide. */
export function layoutPlan(nodes: readonly PlanLayoutNode[], available: number): PlanLayout {
  const g = GEOMETRY;
  const layers = layersOf(nodes);
  const slots = slotsOf(nodes, layers);
  const ordered = orderSlots(slots, 4);
  const isWaypoint = new Set(slots.filter((slot) => slot.waypoint).map((slot) => slot.id));
  const rows = new Map(nodes.map((node) => [node.id, node.rows]));
  const layerCount = ordered.length;
  const nodesIn = (layer: string[]) => layer.filter((id) => !isWaypoint.has(id));
  const lanesIn = (layer: string[]) => layer.length - nodesIn(layer).length;
  const usable = available - 2 * g.margin - g.stackOffset;

  const columnWidth = Math.floor((usable - (layerCount - 1) * g.columnGap) / layerCount);
  // As rows, each layer's boxes share the width left by its lanes and gaps: a lone box gets more.
  const rowRoom = (layer: string[]) => Math.floor((usable - lanesIn(layer) * g.lane - (layer.length - 1) * g.rowNodeGap) / Math.max(1, nodesIn(layer).length));
  const rowWidth = Math.min(...ordered.filter((layer) => nodesIn(layer).length > 0).map(rowRoom));
  let orientation: Orientation;
  let width: number;
  if (columnWidth >= g.minWidth) {
    orientation = "columns";
    width = clamp(columnWidth, g.minWidth, g.maxColumnWidth);
  } else if (rowWidth >= g.minWidth) {
    orientation = "rows";
    width = clamp(rowWidth, g.minWidth, g.maxRowWidth);
  } else {
    // Neither fits: the narrower picture, at the smallest width, scrolls sideways in its frame.
    const asColumns = layerCount * g.minWidth + (layerCount - 1) * g.columnGap;
    const asRows = Math.max(...ordered.map((layer) => nodesIn(layer).length * (g.minWidth + g.rowNodeGap) + lanesIn(layer) * (g.lane + g.rowNodeGap)));
    orientation = asColumns <= asRows ? "columns" : "rows";
    width = g.minWidth;
  }

  const heightOf = (id: string) => nodeHeight(rows.get(id) ?? 0);
  const spots = new Map<string, Spot>();
  const placed = new Map<string, PlacedNode>();
  const place = (id: string, layer: number, order: number, spot: Spot) => {
    spots.set(id, spot);
    if (!isWaypoint.has(id)) placed.set(id, { id, layer, order, ...spot, stacked: (rows.get(id) ?? 0) > 0 });
  };
  let totalWidth: number;
  let totalHeight: number;
  if (orientation === "columns") {
    // Along a column: boxes, and a lane for each edge that passes through it.
    const along = (id: string) => (isWaypoint.has(id) ? g.lane : heightOf(id));
    const columnHeights = ordered.map((layer) => layer.reduce((sum, id) => sum + along(id), 0) + Math.max(0, layer.length - 1) * g.columnNodeGap);
    const tallest = Math.max(...columnHeights);
    ordered.forEach((layer, index) => {
      let y = g.margin + (tallest - (columnHeights[index] ?? 0)) / 2;
      const x = g.margin + index * (width + g.columnGap);
      let order = 0;
      for (const id of layer) {
        place(id, index, isWaypoint.has(id) ? -1 : order++, { x, y, width, height: along(id) });
        y += along(id) + g.columnNodeGap;
      }
    });
    totalWidth = 2 * g.margin + layerCount * width + (layerCount - 1) * g.columnGap + g.stackOffset;
    totalHeight = 2 * g.margin + tallest + g.stackOffset;
  } else {
    const boxWidths = ordered.map((layer) => (rowWidth >= g.minWidth ? clamp(rowRoom(layer), g.minWidth, g.maxRowWidth) : width));
    const rowWidths = ordered.map((layer, index) => layer.reduce((sum, id) => sum + (isWaypoint.has(id) ? g.lane : (boxWidths[index] ?? width)), 0) + Math.max(0, layer.length - 1) * g.rowNodeGap);
    const broadest = Math.max(...rowWidths);
    let y = g.margin;
    ordered.forEach((layer, index) => {
      let x = g.margin + (broadest - (rowWidths[index] ?? 0)) / 2;
      const height = Math.max(g.lane, ...nodesIn(layer).map(heightOf));
      const across = (id: string) => (isWaypoint.has(id) ? g.lane : (boxWidths[index] ?? width));
      let order = 0;
      for (const id of layer) {
        place(id, index, isWaypoint.has(id) ? -1 : order++, { x, y, width: across(id), height: isWaypoint.has(id) ? height : heightOf(id) });
        x += across(id) + g.rowNodeGap;
      }
      y += height + g.rowLayerGap;
    });
    totalWidth = 2 * g.margin + broadest + g.stackOffset;
    totalHeight = y - g.rowLayerGap + g.margin + g.stackOffset;
  }

  const edges: PlacedEdge[] = [];
  for (const node of nodes) {
    const to = placed.get(node.id);
    if (!to) continue;
    for (const need of node.needs) {
      const from = placed.get(need);
      if (!from) continue;
      const through: Spot[] = [];
      for (let between = from.layer + 1; between < to.layer; between++) {
        const spot = spots.get(waypointId(need, node.id, between));
        if (spot) through.push(spot);
      }
      edges.push({ from: need, to: node.id, path: orientation === "columns" ? columnPath(from, through, to) : rowPath(from, through, to) });
    }
  }
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    orientation,
    width: Math.ceil(totalWidth),
    height: Math.ceil(totalHeight),
    nodes: nodes
      .map((node) => placed.get(node.id))
      .filter((node): node is PlacedNode => node !== undefined)
      .map((node) => ({ ...node, x: round(node.x), y: round(node.y) })),
    edges,
    overflows: totalWidth > available,
  };
}

const fixed = (value: number) => value.toFixed(1);

/** Left to right: out of the source's right side, along each lane it passes, into the target's left side. */
function columnPath(from: PlacedNode, through: readonly Spot[], to: PlacedNode): string {
  let x = from.x + from.width + (from.stacked ? GEOMETRY.stackOffset : 0);
  let y = from.y + GEOMETRY.anchor;
  let path = `M${fixed(x)},${fixed(y)}`;
  const curveTo = (x2: number, y2: number) => {
    const bend = Math.max(16, (x2 - x) / 2);
    path += ` C${fixed(x + bend)},${fixed(y)} ${fixed(x2 - bend)},${fixed(y2)} ${fixed(x2)},${fixed(y2)}`;
    x = x2;
    y = y2;
  };
  for (const lane of through) {
    const middle = lane.y + lane.height / 2;
    curveTo(lane.x, middle);
    x = lane.x + lane.width;
    path += ` L${fixed(x)},${fixed(middle)}`;
  }
  // Stop short of the box, so that the arrowhead's tip touches it.
  curveTo(to.x - 2, to.y + GEOMETRY.anchor);
  return path;
}

/** Top to bottom: out of the source's bottom, down each lane it passes, into the target's top. */
function rowPath(from: PlacedNode, through: readonly Spot[], to: PlacedNode): string {
  let x = from.x + from.width / 2;
  let y = from.y + from.height + (from.stacked ? GEOMETRY.stackOffset : 0);
  let path = `M${fixed(x)},${fixed(y)}`;
  const curveTo = (x2: number, y2: number) => {
    const bend = Math.max(12, (y2 - y) / 2);
    path += ` C${fixed(x)},${fixed(y + bend)} ${fixed(x2)},${fixed(y2 - bend)} ${fixed(x2)},${fixed(y2)}`;
    x = x2;
    y = y2;
  };
  for (const lane of through) {
    const middle = lane.x + lane.width / 2;
    curveTo(middle, lane.y);
    y = lane.y + lane.height;
    path += ` L${fixed(middle)},${fixed(y)}`;
  }
  curveTo(to.x + to.width / 2, to.y - 2);
  return path;
}
