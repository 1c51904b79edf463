// The Pulse picture: the knowledge graph in SVG. Nodes are sized by centrality (area ∝ score) and
// coloured by type; edges are styled by kind; the most central nodes are labelled; ends of a
// `contradicts` edge wear a red ring. Every node is a focusable button named by its label: click
// or Enter opens the entry.

import { useMemo, useRef, useState } from "preact/hooks";
import type { Pulse } from "../../../../src/wire/knowledge.js";
import type { EdgeRel } from "../../../../src/wire/graph.js";
import type { MemoryType } from "../../../../src/wire/memory.js";
import { useWidth } from "../../hooks.js";
import { fitToView, forceLayout, placeLabels, type Placed } from "./layout.js";

type PulseGraph = Pulse["graph"];
type PulseNode = PulseGraph["nodes"][number];

/** Edge kinds in legend order, with how strongly each one pulls its ends together. */
const EDGE_KINDS: { rel: EdgeRel; label: string; pull: number }[] = [
  { rel: "supports", label: "supports", pull: 1 },
  { rel: "derived_from", label: "derived from", pull: 0.9 },
  { rel: "grounds", label: "grounds", pull: 0.9 },
  { rel: "depends_on", label: "depends on", pull: 0.6 },
  { rel: "supersedes", label: "supersedes", pull: 0.8 },
  { rel: "relates_to", label: "relates to", pull: 0.4 },
  { rel: "contradicts", label: "contradicts", pull: 0.5 },
];

const NODE_TYPES: MemoryType[] = ["memory", "doc", "directive", "skill", "compiled"];

/** Edges drawn with an arrowhead at their `dst` (`src rel dst` reads as a sentence). */
const ARROWS = new Set<EdgeRel>(["supersedes", "depends_on"]);

const LABELLED = 12;
const LABEL_CHARS = 30;
const FONT = 12;

const shorten = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);

/** Tall on a phone; on a wide screen as much as fits beside the header, within bounds. */
function viewHeight(width: number): number {
  if (width < 640) return Math.round(Math.min(560, width * 1.1));
  return Math.round(Math.max(380, Math.min(640, width * 0.62, window.innerHeight - 320)));
}

interface Drawn {
  placed: Placed[];
  labels: { index: number; x: number; y: number; anchor: "start" | "middle" | "end"; text: string }[];
}

function draw(graph: PulseGraph, positions: ReturnType<typeof forceLayout>, width: number, height: number): Drawn {
  const { nodes } = graph;
  const n = nodes.length;
  const maxScore = Math.max(...nodes.map((node) => node.score), 1e-9);
  const rMax = Math.max(12, Math.min(30, Math.sqrt((width * height) / Math.max(n, 1)) * 0.3));
  const rMin = n > 120 ? 3.5 : n > 40 ? 4.5 : 6;
  const radii = nodes.map((node) => Math.max(rMin, rMax * Math.sqrt(Math.max(node.score, 0) / maxScore)));
  const placed = fitToView(positions, radii, width, height, rMax + 8);
  // The most central nodes get a label: nodes come by score, best first.
  const wanted = nodes.slice(0, LABELLED).map((node, index) => ({ index, width: shorten(node.label, LABEL_CHARS).length * FONT * 0.56 + 4 }));
  const index = new Map(nodes.map((node, position) => [node.id, position]));
  const segments: [number, number][] = [];
  for (const edge of graph.edges) {
    const a = index.get(edge.src);
    const b = index.get(edge.dst);
    if (a !== undefined && b !== undefined) segments.push([a, b]);
  }
  const labels = placeLabels(placed, segments, wanted, { width, height }, FONT + 4, 3).map((label) => ({ ...label, text: shorten(nodes[label.index]?.label ?? "", LABEL_CHARS) }));
  return { placed, labels };
}

export function PulseGraphView({ graph, onOpen, title }: { graph: PulseGraph; onOpen: (id: string) => void; title: string }) {
  const [measure, width] = useWidth();
  const height = viewHeight(width);
  const [active, setActive] = useState<number | undefined>(undefined);
  const svgRef = useRef<SVGSVGElement>(null);

  // The layout depends on the graph only; fitting it to the view is cheap and follows resizes.
  const positions = useMemo(() => {
    const pull = new Map(EDGE_KINDS.map((kind) => [kind.rel, kind.pull]));
    return forceLayout(
      graph.nodes.map((node) => node.id),
      graph.edges.map((edge) => ({ src: edge.src, dst: edge.dst, weight: pull.get(edge.rel) ?? 0.5 })),
    );
  }, [graph]);
  const drawn = useMemo(() => (width > 0 ? draw(graph, positions, width, height) : undefined), [graph, positions, width, height]);

  const index = useMemo(() => new Map(graph.nodes.map((node, position) => [node.id, position])), [graph]);
  const conflicted = useMemo(() => {
    const ends = new Set<string>();
    for (const edge of graph.edges) {
      if (edge.rel !== "contradicts") continue;
      ends.add(edge.src);
      ends.add(edge.dst);
    }
    return ends;
  }, [graph]);
  const neighbours = useMemo(() => {
    if (active === undefined) return undefined;
    const id = graph.nodes[active]?.id;
    const near = new Set<string>(id === undefined ? [] : [id]);
    for (const edge of graph.edges) {
      if (edge.src === id) near.add(edge.dst);
      if (edge.dst === id) near.add(edge.src);
    }
    return near;
  }, [active, graph]);

  const activeId = active === undefined ? undefined : graph.nodes[active]?.id;
  const open = (node: PulseNode) => onOpen(node.id);

  return (
    <div class="pulse-canvas" ref={measure}>
      {drawn && (
        <svg
          ref={svgRef}
          class={active === undefined ? "pulse-graph" : "pulse-graph has-active"}
          role="group"
          aria-label={title}
          viewBox={`0 0 ${width} ${height}`}
          width={width}
          height={height}
        >
          <defs>
            {[...ARROWS].map((rel) => (
              <marker key={rel} id={`pulse-arrow-${rel}`} class={`arrow arrow-${rel}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10 z" />
              </marker>
            ))}
          </defs>
          <g class="pulse-edges">
            {graph.edges.map((edge) => {
              const a = index.get(edge.src);
              const b = index.get(edge.dst);
              if (a === undefined || b === undefined) return null;
              const from = drawn.placed[a];
              const to = drawn.placed[b];
              if (!from || !to) return null;
              const dx = to.x - from.x;
              const dy = to.y - from.y;
              const length = Math.sqrt(dx * dx + dy * dy) || 1;
              const ux = dx / length;
              const uy = dy / length;
              const x1 = from.x + ux * from.r;
              const y1 = from.y + uy * from.r;
              const x2 = to.x - ux * (to.r + (ARROWS.has(edge.rel) ? 2 : 0));
              const y2 = to.y - uy * (to.r + (ARROWS.has(edge.rel) ? 2 : 0));
              const near = activeId !== undefined && (edge.src === activeId || edge.dst === activeId);
              const classes = `pulse-edge edge-${edge.rel}${near ? " is-near" : ""}`;
              return (
                <g key={`${edge.src}-${edge.rel}-${edge.dst}`} class={classes} data-rel={edge.rel}>
                  <line x1={x1} y1={y1} x2={x2} y2={y2} marker-end={ARROWS.has(edge.rel) ? `url(#pulse-arrow-${edge.rel})` : undefined} />
                  {edge.rel === "contradicts" && (
                    <g class="edge-mark" transform={`translate(${(x1 + x2) / 2} ${(y1 + y2) / 2})`}>
                      <circle r="6" />
                      <path d="M-2.6,-2.6 L2.6,2.6 M2.6,-2.6 L-2.6,2.6" />
                    </g>
                  )}
                </g>
              );
            })}
          </g>
          <g class="pulse-nodes">
            {graph.nodes.map((node, position) => {
              const at = drawn.placed[position];
              if (!at) return null;
              const conflict = conflicted.has(node.id);
              const near = neighbours?.has(node.id) === true;
              const classes = ["pulse-node", `type-${node.type}`, conflict ? "is-conflict" : "", near ? "is-near" : ""].filter(Boolean).join(" ");
              return (
                <g
                  key={node.id}
                  class={classes}
                  data-id={node.id}
                  data-r={at.r.toFixed(2)}
                  transform={`translate(${at.x.toFixed(1)} ${at.y.toFixed(1)})`}
                  role="button"
                  // Lower case: on an SVG element the attribute's name is case-sensitive, and only `tabindex` makes it focusable.
                  tabindex={0}
                  aria-label={node.label}
                  onClick={() => open(node)}
                  onKeyDown={(event) => {
                    if (event.key === "Enter" || event.key === " ") {
                      event.preventDefault();
                      open(node);
                    }
                  }}
                  onMouseEnter={() => setActive(position)}
                  onMouseLeave={() => setActive(undefined)}
                  onFocus={() => setActive(position)}
                  onBlur={() => setActive(undefined)}
                >
                  <title>{node.label}</title>
                  <circle class="focus-ring" r={at.r + 6} />
                  {conflict && <circle class="conflict-ring" r={at.r + 3.5} />}
                  <circle class="node-shape" r={at.r} />
                </g>
              );
            })}
          </g>
          <g class="pulse-labels" aria-hidden="true">
            {drawn.labels.map((label) => (
              <text key={label.index} x={label.x.toFixed(1)} y={label.y.toFixed(1)} text-anchor={label.anchor} dominant-baseline="central" class={active === label.index ? "is-near" : undefined}>
                {label.text}
              </text>
            ))}
          </g>
        </svg>
      )}
    </div>
  );
}

/** What the shapes and lines mean. */
export function PulseLegend() {
  return (
    <div class="pulse-legend">
      <h3 class="visually-hidden">Legend</h3>
      <ul class="legend-list" aria-label="Entry types">
        {NODE_TYPES.map((type) => (
          <li key={type}>
            <svg class={`legend-node type-${type}`} viewBox="0 0 14 14" width="14" height="14" aria-hidden="true" focusable="false">
              <circle class="node-shape" cx="7" cy="7" r="5.5" />
            </svg>
            {type}
          </li>
        ))}
        <li>
          <svg class="legend-node type-memory is-conflict" viewBox="0 0 18 18" width="18" height="18" aria-hidden="true" focusable="false">
            <circle class="conflict-ring" cx="9" cy="9" r="7.5" />
            <circle class="node-shape" cx="9" cy="9" r="4.5" />
          </svg>
          in a conflict
        </li>
        <li class="muted">size: centrality</li>
      </ul>
      <ul class="legend-list" aria-label="Link kinds">
        {EDGE_KINDS.map(({ rel, label }) => (
          <li key={rel}>
            <svg class={`legend-edge pulse-edge edge-${rel}`} viewBox="0 0 34 12" width="34" height="12" aria-hidden="true" focusable="false">
              <line x1="2" y1="6" x2={ARROWS.has(rel) ? 27 : 32} y2="6" />
              {ARROWS.has(rel) && <path class={`arrow arrow-${rel}`} d="M26,2 L33,6 L26,10 z" />}
              {rel === "contradicts" && (
                <g class="edge-mark" transform="translate(17 6)">
                  <circle r="5" />
                  <path d="M-2.2,-2.2 L2.2,2.2 M2.2,-2.2 L-2.2,2.2" />
                </g>
              )}
            </svg>
            {label}
          </li>
        ))}
      </ul>
    </div>
  );
}
