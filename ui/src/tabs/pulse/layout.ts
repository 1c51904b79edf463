// A deterministic force-directed layout for the Pulse picture: springs along the edges, repulsion
// between every pair, a little gravity so that loose parts stay near the middle. Each node starts
// where its id's hash puts it, so the same graph always gives the same picture (and an entry keeps
// roughly its place when the graph around it changes). Pure functions, no DOM: ≤ 300 nodes and
// ≤ 600 edges take a few tens of milliseconds.

export interface LayoutEdge {
  src: string;
  dst: string;
  /** Spring strength: 1 for a strong link, less for a loose one. */
  weight: number;
}

/** Positions in the unit square, in the order of the ids given. */
export interface Layout {
  x: Float64Array;
  y: Float64Array;
}

/** FNV-1a over the id's characters: a 32-bit seed per id. */
function hashId(id: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < id.length; index++) {
    hash ^= id.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a small, good-enough generator seeded by one 32-bit number. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function forceLayout(ids: readonly string[], edges: readonly LayoutEdge[], iterations = 300): Layout {
  const n = ids.length;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  if (n === 0) return { x, y };
  if (n === 1) {
    x[0] = 0.5;
    y[0] = 0.5;
    return { x, y };
  }
  const index = new Map<string, number>();
  ids.forEach((id, position) => index.set(id, position));
  for (let i = 0; i < n; i++) {
    const random = generator(hashId(ids[i] ?? ""));
    // A disc around the middle: angle and radius from the id.
    const angle = random() * Math.PI * 2;
    const radius = 0.1 + 0.4 * Math.sqrt(random());
    x[i] = 0.5 + radius * Math.cos(angle);
    y[i] = 0.5 + radius * Math.sin(angle);
  }
  const springs: { a: number; b: number; w: number }[] = [];
  const degree = new Float64Array(n);
  for (const edge of edges) {
    const a = index.get(edge.src);
    const b = index.get(edge.dst);
    if (a === undefined || b === undefined || a === b) continue;
    springs.push({ a, b, w: edge.weight });
    degree[a] = (degree[a] ?? 0) + 1;
    degree[b] = (degree[b] ?? 0) + 1;
  }

  // Fruchterman–Reingold in the unit square: ideal distance k, repulsion k²/d, attraction d²/k.
  const k = 0.9 * Math.sqrt(1 / n);
  const k2 = k * k;
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  const gravity = 0.9;
  for (let step = 0; step < iterations; step++) {
    const temperature = 0.08 * (1 - step / iterations) + 0.002;
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i++) {
      const xi = x[i] as number;
      const yi = y[i] as number;
      for (let j = i + 1; j < n; j++) {
        let ddx = xi - (x[j] as number);
        let ddy = yi - (y[j] as number);
        let d2 = ddx * ddx + ddy * ddy;
        if (d2 < 1e-9) {
          // Two nodes on the same spot: part them along a direction fixed by their indexes.
          ddx = 1e-3 * Math.cos(i * 7 + j);
          ddy = 1e-3 * Math.sin(i * 7 + j);
          d2 = ddx * ddx + ddy * ddy;
        }
        const force = k2 / d2;
        dx[i] = (dx[i] as number) + ddx * force;
        dy[i] = (dy[i] as number) + ddy * force;
        dx[j] = (dx[j] as number) - ddx * force;
        dy[j] = (dy[j] as number) - ddy * force;
      }
    }
    for (const { a, b, w } of springs) {
      const ddx = (x[a] as number) - (x[b] as number);
      const ddy = (y[a] as number) - (y[b] as number);
      const d = Math.sqrt(ddx * ddx + ddy * ddy) || 1e-6;
      const force = (w * d) / k;
      dx[a] = (dx[a] as number) - ddx * force;
      dy[a] = (dy[a] as number) - ddy * force;
      dx[b] = (dx[b] as number) + ddx * force;
      dy[b] = (dy[b] as number) + ddy * force;
    }
    for (let i = 0; i < n; i++) {
      // Gravity, stronger for nodes without links, keeps islands from drifting off.
      const pull = gravity * (degree[i] === 0 ? 2 : 1);
      const gx = (dx[i] as number) - ((x[i] as number) - 0.5) * pull / k;
      const gy = (dy[i] as number) - ((y[i] as number) - 0.5) * pull / k;
      const length = Math.sqrt(gx * gx + gy * gy) || 1;
      const move = Math.min(length, temperature);
      x[i] = (x[i] as number) + (gx / length) * move;
      y[i] = (y[i] as number) + (gy / length) * move;
    }
  }
  return { x, y };
}

export interface Placed {
  x: number;
  y: number;
  r: number;
}

/**
 * Fits a layout into a `width`×`height` view with `pad` around it, then pushes overlapping
 * circles apart (a few passes), keeping them inside the view.
 */
export function fitToView(layout: Layout, radii: readonly number[], width: number, height: number, pad: number): Placed[] {
  const n = radii.length;
  if (n === 0) return [];
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, layout.x[i] as number);
    maxX = Math.max(maxX, layout.x[i] as number);
    minY = Math.min(minY, layout.y[i] as number);
    maxY = Math.max(maxY, layout.y[i] as number);
  }
  const spanX = Math.max(maxX - minX, 1e-6);
  const spanY = Math.max(maxY - minY, 1e-6);
  let scaleX = (width - 2 * pad) / spanX;
  let scaleY = (height - 2 * pad) / spanY;
  // Stretch to the view's shape, but not so much that the picture looks squashed.
  if (scaleX > scaleY * 1.6) scaleX = scaleY * 1.6;
  if (scaleY > scaleX * 1.6) scaleY = scaleX * 1.6;
  if (n === 1) scaleX = scaleY = 0;
  const offsetX = (width - spanX * scaleX) / 2;
  const offsetY = (height - spanY * scaleY) / 2;
  const placed: Placed[] = radii.map((r, i) => ({
    x: n === 1 ? width / 2 : offsetX + ((layout.x[i] as number) - minX) * scaleX,
    y: n === 1 ? height / 2 : offsetY + ((layout.y[i] as number) - minY) * scaleY,
    r,
  }));
  const gap = 3;
  for (let pass = 0; pass < 40; pass++) {
    let moved = false;
    for (let i = 0; i < n; i++) {
      const a = placed[i] as Placed;
      for (let j = i + 1; j < n; j++) {
        const b = placed[j] as Placed;
        const ddx = b.x - a.x;
        const ddy = b.y - a.y;
        const want = a.r + b.r + gap;
        const d2 = ddx * ddx + ddy * ddy;
        if (d2 >= want * want) continue;
        const d = Math.sqrt(d2) || 0.01;
        const push = (want - d) / 2;
        const ux = d2 === 0 ? Math.cos(i + j) : ddx / d;
        const uy = d2 === 0 ? Math.sin(i + j) : ddy / d;
        a.x -= ux * push;
        a.y -= uy * push;
        b.x += ux * push;
        b.y += uy * push;
        moved = true;
      }
    }
    for (const node of placed) {
      node.x = Math.min(width - node.r - 2, Math.max(node.r + 2, node.x));
      node.y = Math.min(height - node.r - 2, Math.max(node.r + 2, node.y));
    }
    if (!moved) break;
  }
  return placed;
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const overlaps = (a: Box, b: Box): number => {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
};

export interface LabelPlacement {
  index: number;
  /** The text's anchor point and alignment. */
  x: number;
  y: number;
  anchor: "start" | "middle" | "end";
}

/** Whether the segment from (x1, y1) to (x2, y2) passes through the box (Liang–Barsky). */
function crosses(box: Box, x1: number, y1: number, x2: number, y2: number): boolean {
  const dx = x2 - x1;
  const dy = y2 - y1;
  let t0 = 0;
  let t1 = 1;
  const edges: [number, number][] = [
    [-dx, x1 - box.x],
    [dx, box.x + box.width - x1],
    [-dy, y1 - box.y],
    [dy, box.y + box.height - y1],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

/**
 * Places the labels of `wanted` (node indexes, most important first) beside their nodes where they
 * cover neither another label nor a node, and cross as few links as can be; a large node's label
 * goes below it first. The first `always` get their least-bad place anyway, the others only a
 * place that covers nothing.
 */
export function placeLabels(
  placed: readonly Placed[],
  segments: readonly [number, number][],
  wanted: readonly { index: number; width: number }[],
  view: { width: number; height: number },
  lineHeight: number,
  always: number,
): LabelPlacement[] {
  const taken: Box[] = [];
  const result: LabelPlacement[] = [];
  const nodeBoxes = placed.map((node) => ({ x: node.x - node.r, y: node.y - node.r, width: 2 * node.r, height: 2 * node.r }));
  wanted.forEach(({ index, width }, order) => {
    const node = placed[index];
    if (!node) return;
    const gap = 4;
    const half = lineHeight / 2;
    const right = { box: { x: node.x + node.r + gap, y: node.y - half, width, height: lineHeight }, label: { index, x: node.x + node.r + gap, y: node.y, anchor: "start" as const } };
    const left = { box: { x: node.x - node.r - gap - width, y: node.y - half, width, height: lineHeight }, label: { index, x: node.x - node.r - gap, y: node.y, anchor: "end" as const } };
    const below = { box: { x: node.x - width / 2, y: node.y + node.r + gap, width, height: lineHeight }, label: { index, x: node.x, y: node.y + node.r + gap + half, anchor: "middle" as const } };
    const above = { box: { x: node.x - width / 2, y: node.y - node.r - gap - lineHeight, width, height: lineHeight }, label: { index, x: node.x, y: node.y - node.r - gap - half, anchor: "middle" as const } };
    const candidates = node.r >= 12 ? [below, above, right, left] : [right, left, below, above];
    let best: { box: Box; label: LabelPlacement } | undefined;
    let bestCost = Infinity;
    let bestHard = Infinity;
    candidates.forEach((candidate, preference) => {
      const { box } = candidate;
      const outside = Math.max(0, -box.x) + Math.max(0, box.x + box.width - view.width) + Math.max(0, -box.y) + Math.max(0, box.y + box.height - view.height);
      let hard = outside * lineHeight * 4;
      for (const other of taken) hard += overlaps(box, other) * 3;
      nodeBoxes.forEach((other, otherIndex) => {
        if (otherIndex !== index) hard += overlaps(box, other);
      });
      let soft = preference * 5;
      for (const [a, b] of segments) {
        const from = placed[a];
        const to = placed[b];
        if (from && to && crosses(box, from.x, from.y, to.x, to.y)) soft += 40;
      }
      if (hard + soft < bestCost) {
        bestCost = hard + soft;
        bestHard = hard;
        best = candidate;
      }
    });
    if (!best || (bestHard > 0 && order >= always)) return;
    taken.push(best.box);
    result.push(best.label);
  });
  return result;
}
