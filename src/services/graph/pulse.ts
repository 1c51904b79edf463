import { now } from "../../core/time.js";
import type { AgentActivityRow, GraphSelection, NodeLabel, TagAffinityRow } from "../../store/knowledge.js";
import type { StoreSource } from "../../store/open.js";
import type { Store } from "../../store/store.js";
import type { Pulse } from "../../wire/knowledge.js";
import { round6 } from "../memory-records.js";
import type { Presence } from "../presence.js";
import { selectionKey, type RankedSelection } from "./central-cache.js";
import { graphThread } from "./graph-thread.js";

const LABEL_CHARS = 110;
const PULSE_TTL_MS = 30_000;
const PULSE_CACHE = 64;
/** Also how many ranks a computation keeps: at least what central may list (limit ≤ 100). */
export const PULSE_NODES = 300;
export const PULSE_EDGES = 600;
const PULSE_CENTRAL = 8;
const PULSE_HOT = 12;
const PULSE_CONFLICTS = 20;
const PULSE_AGENTS = 50;
const MIN_AFFINITY = 0.05;
const AFFINITIES_PER_AGENT = 5;
const TAG_ROWS = 5000;
const MAX_AGENTS = 5000;
const DAY_MS = 86_400_000;

/** The label §14 gives a node: its headline, else its content with white space collapsed, cut to 110 characters. */
function labelOf(row: Pick<NodeLabel, "headline" | "head">): string {
  const text = (row.headline ?? row.head).replace(/\s+/gu, " ").trim();
  return text.length <= LABEL_CHARS ? text : `${text.slice(0, LABEL_CHARS - 1)}…`;
}

/** What a pulse reads through the knowledge service: a selection's ranks (cached there) and nodes' labels. */
export interface PulseReads {
  ranked(selection: GraphSelection): Promise<{ ranked: RankedSelection }>;
  labels(ids: string[]): Promise<Map<string, NodeLabel>>;
}

/**
 * A project's pulse (CONTRACT §14): its graph's top, what is read and disputed, who works on it
 * and on which tags. A selection's pulse is kept for 30 s (64 selections at most), so a dashboard
 * polling it costs one computation per half minute whoever polls.
 */
export class Pulses {
  /** Each selection's pulse, with when it was computed (performance.now(): a clock set back cannot keep it). */
  private readonly held = new Map<string, { at: number; pulse: Pulse }>();

  constructor(
    private readonly store: Store,
    private readonly presence: Presence,
    private readonly source: StoreSource,
    private readonly reads: PulseReads,
  ) {}

  async of(selection: GraphSelection, project: string | null, scope: Pulse["scope"]): Promise<Pulse> {
    const key = selectionKey(selection);
    const held = this.held.get(key);
    if (held && performance.now() - held.at < PULSE_TTL_MS) return held.pulse;
    const pulse = await this.compute(selection, project, scope);
    this.held.delete(key);
    this.held.set(key, { at: performance.now(), pulse });
    while (this.held.size > PULSE_CACHE) this.held.delete(this.held.keys().next().value as string);
    return pulse;
  }

  private async compute(selection: GraphSelection, project: string | null, scope: Pulse["scope"]): Promise<Pulse> {
    const generatedAt = now();
    const nowMs = Date.parse(generatedAt);
    const { ranked } = await this.reads.ranked(selection);
    const aggregates = await graphThread.run(this.source, {
      kind: "aggregates",
      selection,
      nowIso: generatedAt,
      dayAgoIso: new Date(nowMs - DAY_MS).toISOString(),
      weekAgoIso: new Date(nowMs - 7 * DAY_MS).toISOString(),
      monthAgoIso: new Date(nowMs - 30 * DAY_MS).toISOString(),
      limits: { hot: PULSE_HOT, conflicts: PULSE_CONFLICTS, agents: MAX_AGENTS, tagRows: TAG_ROWS },
    });
    const { hot, conflicts } = aggregates;
    const central = ranked.top.slice(0, PULSE_CENTRAL);
    const labels = await this.reads.labels([...ranked.top.map((entry) => entry.id), ...hot.map((entry) => entry.id), ...conflicts.flatMap((edge) => [edge.src, edge.dst])]);
    const label = (id: string): string => {
      const row = labels.get(id);
      return row ? labelOf(row) : "";
    };
    const { activity, online } = await this.activity(selection, aggregates.activity);
    const affinities = this.affinities(aggregates.tags, new Set(activity.map((row) => row.agent_id)));
    return {
      project,
      scope,
      generated_at: generatedAt,
      counts: { ...aggregates.counts, edges: ranked.storedEdges, agents_online: online },
      graph: {
        nodes: ranked.top.flatMap((entry) => {
          const row = labels.get(entry.id);
          return row ? [{ id: entry.id, label: labelOf(row), type: row.type, confidence: row.confidence, score: round6(entry.score) }] : [];
        }),
        edges: ranked.topEdges.map((edge) => ({ src: edge.src, dst: edge.dst, rel: edge.rel })),
        truncated: ranked.truncated || ranked.entries > PULSE_NODES || ranked.topEdgesFound > PULSE_EDGES,
      },
      central: central.map((entry, position) => ({ id: entry.id, label: label(entry.id), score: round6(entry.score), rank: position + 1 })),
      hot: hot.map((entry) => ({ id: entry.id, label: label(entry.id), reads: entry.reads, readers: entry.readers })),
      conflicts: conflicts.map((edge) => ({ ...edge, src_label: label(edge.src), dst_label: label(edge.dst) })),
      activity,
      affinities,
    };
  }

  /** Who worked on the selection in the last day, and how many of its agents are online. */
  private async activity(selection: GraphSelection, rows: readonly AgentActivityRow[]): Promise<{ activity: Pulse["activity"]; online: number }> {
    const reader = this.store.reader;
    const byAgent = new Map(rows.map((row) => [row.agent_id, row]));
    const agents = await this.store.agents.list(reader, null, MAX_AGENTS);
    const members =
      selection.projects === null
        ? null
        : new Set(await this.store.projects.memberIds(reader, selection.projects));
    let online = 0;
    const activity: Pulse["activity"] = [];
    for (const agent of agents) {
      const isOnline = this.presence.isOnline(agent);
      if (isOnline && (members === null || members.has(agent.agent_id) || selection.projects?.length === 0)) online++;
      const row = byAgent.get(agent.agent_id);
      if (!row && !(isOnline && (members === null || members.has(agent.agent_id)))) continue;
      activity.push({
        agent_id: agent.agent_id,
        writes_24h: row?.writes ?? 0,
        reads_24h: row?.reads ?? 0,
        claimed: row?.claimed ?? 0,
        completed_24h: row?.completed ?? 0,
        last_seen_at: agent.last_seen_at,
        online: isOnline,
      });
    }
    const busy = (row: Pulse["activity"][number]): number => row.writes_24h + row.reads_24h + row.claimed + row.completed_24h;
    activity.sort((a, b) => busy(b) - busy(a) || (b.last_seen_at ?? "").localeCompare(a.last_seen_at ?? "") || a.agent_id.localeCompare(b.agent_id));
    return { activity: activity.slice(0, PULSE_AGENTS), online };
  }

  /**
   * Each active agent's share of its writes and reads (last 30 days) carrying each tag: the tags
   * it works on. At most five per agent, each at least 0.05.
   */
  private affinities(rows: readonly TagAffinityRow[], agents: Set<string>): Pulse["affinities"] {
    const byAgent = new Map<string, Map<string, number>>();
    for (const row of rows) {
      if (!agents.has(row.agent_id)) continue;
      const tags = byAgent.get(row.agent_id) ?? new Map<string, number>();
      tags.set(row.tag, (tags.get(row.tag) ?? 0) + row.count);
      byAgent.set(row.agent_id, tags);
    }
    const result: Pulse["affinities"] = [];
    for (const [agent, tags] of [...byAgent].sort(([a], [b]) => a.localeCompare(b))) {
      const total = [...tags.values()].reduce((sum, count) => sum + count, 0);
      const ranked = [...tags].map(([tag, count]) => ({ agent_id: agent, tag, weight: round6(count / total) }));
      ranked.sort((a, b) => b.weight - a.weight || a.tag.localeCompare(b.tag));
      result.push(...ranked.filter((entry) => entry.weight >= MIN_AFFINITY).slice(0, AFFINITIES_PER_AGENT));
    }
    return result;
  }
}
