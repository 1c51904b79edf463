// A blueprint's plan as a picture: one box per node in layers (plan-layout.ts), an arrow from each
// need, fan-out nodes as a stack with a row per item. In a run, boxes are coloured by their task's
// state and each one (each item of a stack) is a link to its task's page; a human gate waiting for
// you stands out. Every box is reachable with Tab, named by its title and state.

import type { ComponentChildren } from "preact";
import { useId, useMemo, useState } from "preact/hooks";
import { useWidth } from "../../hooks.js";
import { GEOMETRY, layoutPlan, type PlacedNode } from "./plan-layout.js";
import { NODE_STATES, type NodeState, type PlanItem, type PlanNodeView } from "./plan-model.js";

/** A stack lists this many items before it folds the rest behind "more". */
const FOLD_AFTER = 12;
const SHOWN_WHEN_FOLDED = FOLD_AFTER - 1;
const TITLE_CHAR = 7.4;
const META_CHAR = 6.5;
const PAD = 12;

const clip = (text: string, room: number, charWidth: number): string => {
  const fits = Math.max(3, Math.floor(room / charWidth));
  return text.length <= fits ? text : `${text.slice(0, fits - 1).trimEnd()}…`;
};

/** A fan-out's title names each item's task: in its header the item's part reads as "…". */
const stackTitle = (title: string): string => title.replace(/\{\{\s*(item|index)[^}]*\}\}/g, "…");

const GATE_TEXT = { human: "human gate", timer: "timer gate", task: "task gate" } as const;

function stateText(state: NodeState, assignee: string | null): string {
  return state === "claimed" && assignee ? `claimed by ${assignee}` : state;
}

/** The second line of a single task's box. */
function metaText(node: PlanNodeView): string {
  // A gate waiting for you says only that: it is a human gate, and the box is ringed.
  if (node.awaiting) return "waits for your approval";
  const parts: string[] = [];
  if (node.state !== null) parts.push(stateText(node.state, node.assignee));
  if (node.gate) parts.push(GATE_TEXT[node.gate]);
  if (node.state === null && node.gateDetail && node.gate !== "human") parts.push(node.gateDetail);
  if (parts.length === 0) parts.push(node.needs.length ? `needs ${node.needs.join(", ")}` : "starts the plan");
  return parts.join(" · ");
}

/** Why a stack shows no item. */
function emptyStackText(node: PlanNodeView): string {
  if (node.state === null) return `one task per item of ${node.fanout?.from ?? "a list"}`;
  if (node.state === "skipped") return "no items: skipped";
  return "waits for its items";
}

interface PlanPictureProps {
  nodes: PlanNodeView[];
  /** The picture's accessible name. */
  title: string;
}

export function PlanPicture({ nodes, title }: PlanPictureProps) {
  const [measure, available] = useWidth();
  const [unfolded, setUnfolded] = useState<ReadonlySet<string>>(new Set());
  const markerId = `plan-arrow-${useId()}`;
  const rowsOf = (node: PlanNodeView): number => {
    if (!node.fanout) return 0;
    const count = node.fanout.items.length;
    if (count === 0) return 1;
    return count > FOLD_AFTER && !unfolded.has(node.id) ? SHOWN_WHEN_FOLDED + 1 : count;
  };
  const layoutKey = nodes.map((node) => `${node.id}:${rowsOf(node)}:${node.needs.join(",")}`).join(";");
  const layout = useMemo(
    () => (available > 0 ? layoutPlan(nodes.map((node) => ({ id: node.id, needs: node.needs, rows: rowsOf(node) })), available) : undefined),
    // The layout depends only on the nodes' ids, needs and rows, not on their states.
    [layoutKey, available],
  );
  const byId = useMemo(() => new Map(nodes.map((node) => [node.id, node])), [nodes]);
  const unfold = (id: string) => setUnfolded((current) => new Set([...current, id]));

  return (
    <div class={layout?.overflows ? "plan-frame is-scrolling" : "plan-frame"} ref={measure}>
      {layout && (
        <svg class={`plan-picture orientation-${layout.orientation}`} role="group" aria-label={title} viewBox={`0 0 ${layout.width} ${layout.height}`} width={layout.width} height={layout.height} data-orientation={layout.orientation}>
          <defs>
            {["", "-done"].map((kind) => (
              <marker key={kind} id={`${markerId}${kind}`} class={`plan-arrow${kind ? " is-done" : ""}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10 z" />
              </marker>
            ))}
          </defs>
          <g class="plan-edges" aria-hidden="true">
            {layout.edges.map((edge) => {
              const from = byId.get(edge.from);
              // In a run, an edge is solid once what it comes from is done; a blueprint's preview has no states.
              const done = from?.state === "completed" || from?.state === "skipped";
              const kind = from?.state === null ? " is-plan" : done ? " is-done" : "";
              return <path key={`${edge.from}>${edge.to}`} class={`plan-edge${kind}`} d={edge.path} marker-end={`url(#${markerId}${done ? "-done" : ""})`} data-from={edge.from} data-to={edge.to} />;
            })}
          </g>
          <g class="plan-nodes">
            {/* In reading order, layer by layer, so that Tab walks the plan as it is drawn. */}
            {[...layout.nodes].sort((a, b) => a.layer - b.layer || a.order - b.order).map((placed) => {
              const node = byId.get(placed.id);
              if (!node) return null;
              return node.fanout ? <StackBox key={node.id} node={node} placed={placed} folded={rowsOf(node) < node.fanout.items.length} onUnfold={() => unfold(node.id)} /> : <TaskBox key={node.id} node={node} placed={placed} />;
            })}
          </g>
        </svg>
      )}
    </div>
  );
}

const stateClass = (state: NodeState | null) => `state-${state ?? "none"}`;

/** A link to the task's page when there is a task, else a focusable shape that names itself. */
function Focusable({ taskId, label, className, children, transform }: { taskId: string | null; label: string; className: string; children: ComponentChildren; transform?: string }) {
  // Inside the <svg>, Preact makes this an SVG <a>: a real link, focusable, followed with Enter.
  if (taskId)
    return (
      <g transform={transform}>
        <a href={`#/tasks/${taskId}`} class={className} aria-label={label} data-task-id={taskId}>
          <title>{label}</title>
          {children}
        </a>
      </g>
    );
  return (
    // `tabindex` in lower case: on an SVG element `tabIndex` would be an attribute of that exact name, which focuses nothing.
    <g class={className} role="img" tabindex={0} aria-label={label} transform={transform}>
      <title>{label}</title>
      {children}
    </g>
  );
}

function TaskBox({ node, placed }: { node: PlanNodeView; placed: PlacedNode }) {
  const { width, height } = placed;
  const meta = metaText(node);
  const label = `${node.title}: ${meta}`;
  const classes = ["plan-node", stateClass(node.state), node.gate ? `gate-${node.gate}` : "", node.awaiting ? "is-awaiting" : ""].filter(Boolean).join(" ");
  return (
    <g class="plan-node-wrap" data-node-id={node.id} data-state={node.state ?? "none"} data-layer={placed.layer} data-order={placed.order} transform={`translate(${placed.x} ${placed.y})`}>
      <Focusable taskId={node.taskId} label={label} className={classes}>
        <rect class="focus-ring" x={-4} y={-4} width={width + 8} height={height + 8} rx={11} />
        {node.awaiting && <rect class="awaiting-ring" x={-3} y={-3} width={width + 6} height={height + 6} rx={10} />}
        <rect class="node-box" width={width} height={height} rx={8} />
        <rect class="node-bar" width={5} height={height} rx={2.5} />
        <text class="node-title" x={PAD} y={22}>
          {clip(node.title, width - PAD - 8, TITLE_CHAR)}
        </text>
        <text class="node-meta" x={PAD} y={41}>
          {clip(meta, width - PAD - 8, META_CHAR)}
        </text>
      </Focusable>
    </g>
  );
}

function StackBox({ node, placed, folded, onUnfold }: { node: PlanNodeView; placed: PlacedNode; folded: boolean; onUnfold: () => void }) {
  const { width, height } = placed;
  const items = node.fanout?.items ?? [];
  const shown = folded ? items.slice(0, SHOWN_WHEN_FOLDED) : items;
  const header = stackTitle(node.title);
  const count = items.length ? `× ${items.length}` : "";
  const offset = GEOMETRY.stackOffset;
  const rowTop = (index: number) => GEOMETRY.headerHeight + index * (GEOMETRY.rowHeight + GEOMETRY.rowGap);
  const rowWidth = width - 16;
  const summary = node.state === null ? emptyStackText(node) : items.length ? `${items.length} items, ${node.state}` : emptyStackText(node);
  return (
    <g
      class={`plan-stack ${stateClass(node.state)}`}
      role="group"
      aria-label={`${header} (one task per item): ${summary}`}
      data-node-id={node.id}
      data-state={node.state ?? "none"}
      data-layer={placed.layer}
      data-order={placed.order}
      transform={`translate(${placed.x} ${placed.y})`}
    >
      <rect class="stack-shadow" x={offset} y={offset} width={width} height={height} rx={8} />
      <rect class="stack-shadow" x={offset / 2} y={offset / 2} width={width} height={height} rx={8} />
      <rect class="node-box" width={width} height={height} rx={8} />
      <rect class="node-bar" width={5} height={height} rx={2.5} />
      <text class="node-title" x={PAD} y={21}>
        {clip(header, width - PAD - 8 - count.length * META_CHAR - 6, TITLE_CHAR)}
      </text>
      {count && (
        <text class="node-count" x={width - 10} y={21} text-anchor="end">
          {count}
        </text>
      )}
      {items.length === 0 ? (
        <Focusable taskId={null} label={`${header}: ${emptyStackText(node)}`} className="plan-item is-empty" transform={`translate(8 ${rowTop(0)})`}>
          <rect class="focus-ring" x={-3} y={-3} width={rowWidth + 6} height={GEOMETRY.rowHeight + 6} rx={7} />
          <rect class="item-box" width={rowWidth} height={GEOMETRY.rowHeight} rx={5} />
          <text class="item-label is-note" x={8} y={16}>
            {clip(emptyStackText(node), rowWidth - 16, META_CHAR)}
          </text>
        </Focusable>
      ) : (
        shown.map((item, index) => <ItemRow key={item.key} item={item} top={rowTop(index)} width={rowWidth} />)
      )}
      {folded && (
        <g
          class="plan-item is-more"
          role="button"
          tabindex={0}
          aria-label={`Show all ${items.length} items of ${header}`}
          transform={`translate(8 ${rowTop(SHOWN_WHEN_FOLDED)})`}
          onClick={onUnfold}
          onKeyDown={(event) => {
            if (event.key === "Enter" || event.key === " ") {
              event.preventDefault();
              onUnfold();
            }
          }}
        >
          <rect class="focus-ring" x={-3} y={-3} width={rowWidth + 6} height={GEOMETRY.rowHeight + 6} rx={7} />
          <rect class="item-box" width={rowWidth} height={GEOMETRY.rowHeight} rx={5} />
          <text class="item-label is-note" x={8} y={16}>
            {`+ ${items.length - SHOWN_WHEN_FOLDED} more: show all`}
          </text>
        </g>
      )}
    </g>
  );
}

function ItemRow({ item, top, width }: { item: PlanItem; top: number; width: number }) {
  const state = stateText(item.state, item.assignee);
  const stateWidth = Math.min(width / 2, state.length * META_CHAR + 4);
  return (
    <Focusable taskId={item.taskId} label={`${item.title ?? item.label} (${item.key}): ${state}`} className={`plan-item ${stateClass(item.state)}`} transform={`translate(8 ${top})`}>
      <rect class="focus-ring" x={-3} y={-3} width={width + 6} height={GEOMETRY.rowHeight + 6} rx={7} />
      <rect class="item-box" width={width} height={GEOMETRY.rowHeight} rx={5} />
      <text class="item-label" x={8} y={16}>
        {clip(item.label, width - 24 - stateWidth, META_CHAR)}
      </text>
      <text class="item-state" x={width - 8} y={16} text-anchor="end">
        {clip(state, width / 2, META_CHAR)}
      </text>
    </Focusable>
  );
}

/** What the colours and shapes mean. */
export function PlanLegend() {
  return (
    <div class="plan-legend">
      <h3 class="visually-hidden">Legend</h3>
      <ul class="legend-list" aria-label="Task states">
        {NODE_STATES.map(({ state, label, meaning }) => (
          <li key={state} title={meaning}>
            <svg class={`legend-swatch ${stateClass(state)}`} viewBox="0 0 18 14" width="18" height="14" aria-hidden="true" focusable="false">
              <rect class="node-box" x="1" y="1" width="16" height="12" rx="3" />
            </svg>
            {label}
            <span class="visually-hidden">: {meaning}</span>
          </li>
        ))}
        <li>
          <svg class="legend-swatch state-open is-awaiting" viewBox="0 0 22 18" width="22" height="18" aria-hidden="true" focusable="false">
            <rect class="awaiting-ring" x="1.5" y="1.5" width="19" height="15" rx="4" />
            <rect class="node-box" x="4" y="4" width="14" height="10" rx="3" />
          </svg>
          waits for your approval
        </li>
        <li>
          <svg class="legend-swatch legend-stack state-none" viewBox="0 0 22 18" width="22" height="18" aria-hidden="true" focusable="false">
            <rect class="stack-shadow" x="6" y="5" width="15" height="12" rx="3" />
            <rect class="node-box" x="1" y="1" width="15" height="12" rx="3" />
          </svg>
          one task per item
        </li>
      </ul>
    </div>
  );
}
