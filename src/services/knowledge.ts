import type { Config } from "../core/config.js";
import { notFound } from "../core/errors.js";
import { databasePath } from "../core/paths.js";
import { now } from "../core/time.js";
import type { AgentActivityRow, GraphSelection, NodeLabel, TagAffinityRow } from "../store/knowledge.js";
import type { StoreSource } from "../store/open.js";
import type { Store } from "../store/store.js";
import type { MemoryType } from "../wire/memory.js";
import type { CentralEntry, Pulse, RelatedEntry } from "../wire/knowledge.js";
import { seesAllProjects, viewpointOf, type Caller } from "./caller.js";
import { spreadActivation, orderRelated, type ActivatedEntry, type SimilarEntry } from "./graph/activation.js";
import { CentralCache, selectionKey, type RankedSelection } from "./graph/central-cache.js";
import type { GraphRel } from "./graph/edges.js";
import { graphThread } from "./graph/graph-thread.js";
import { round6, toEntry } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import type { Presence } from "./presence.js";

const SIMILAR_NEIGHBOURS = 10;
const LABEL_CHARS = 110;
const LABEL_BATCH = 1000;
const PULSE_TTL_MS = 30_000;
const PULSE_CACHE = 64;
/** Also how many ranks a computation keeps: at least what central may list (limit ≤ 100). */
const PULSE_NODES = 300;
const PULSE_EDGES = 600;
const PULSE_CENTRAL = 8;
const PULSE_HOT = 12;
const PULSE_CONFLICTS = 20;
const PULSE_AGENTS = 50;
const MIN_AFFINITY = 0.05;
const AFFINITIES_PER_AGENT = 5;
const TAG_ROWS = 5000;
const MAX_AGENTS = 5000;
const DAY_MS = 86_400_000;

export interface RelatedInput {
  limit: number;
  hops: number;
  rels?: GraphRel[] | undefined;
  type?: MemoryType | undefined;
  include_similar: boolean;
  min_activation: number;
}

/** The label §14 gives a node: its headline, else its content with white space collapsed, cut to 110 characters. */
export function labelOf(row: Pick<NodeLabel, "headline" | "head">): string {
  const text = (row.headline ?? row.head).replace(/\s+/gu, " ").trim();
  return text.length <= LABEL_CHARS ? text : `${text.slice(0, LABEL_CHARS - 1)}…`;
}

/**
 * The knowledge graph read three ways (CONTRACT §14): what is related to one entry, what the
 * team's knowledge hangs on, and a project's pulse. Every read applies the caller's visibility;
 * central and pulse read shared entries only, so they answer the same to everyone who may ask.
 * What grows with the whole selection (ranking it, pulse's counts and aggregates) runs on the graph
 * worker's thread; this one reads only the change stamp and the rows it shows.
 */
export class KnowledgeService {
  private readonly central = new CentralCache();
  private readonly pulses = new Map<string, { at: number; pulse: Pulse }>();
  private readonly source: StoreSource;

  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly config: Config,
    private readonly presence: Presence,
  ) {
    this.source = { databaseUrl: config.DATABASE_URL, file: databasePath(config.DATA_DIR) };
  }

  /** Lets the graph worker close what it opened for this server's store. */
  close(): Promise<void> {
    return graphThread.release(this.source);
  }

  async related(caller: Caller, ref: string, input: RelatedInput): Promise<RelatedEntry[]> {
    const reader = this.store.reader;
    const viewpoint = viewpointOf(caller);
    const at = now();
    const seed = await this.writes.resolve(reader, viewpoint, ref);
    const similar: SimilarEntry[] = [];
    if (input.include_similar) {
      const vector = (await this.store.vectors.get(reader, [seed.pk])).get(seed.pk);
      if (vector) {
        const found = await this.store.vectors.nearest(reader, vector, SIMILAR_NEIGHBOURS + 1, {
          within: { viewpoint },
          nowMs: Date.parse(at),
          maxDistance: 1 - this.config.SIMILAR_THRESHOLD,
        });
        const rows = await this.store.memory.byPks(reader, found.map((hit) => hit.pk).filter((pk) => pk !== seed.pk));
        for (const hit of found) {
          const row = rows.get(hit.pk);
          if (row && similar.length < SIMILAR_NEIGHBOURS) similar.push({ id: row.id, cosine: 1 - hit.distance });
        }
      }
    }
    const activation = await spreadActivation(seed.id, (query) => this.store.knowledge.around(reader, viewpoint, at, query.ids, query.rels, query.limit), {
      hops: input.hops,
      minActivation: input.min_activation,
      rels: input.rels ?? null,
      similar,
    });
    const labels = await this.labels(activation.entries.map((entry) => entry.id));
    const candidates = activation.entries.filter((entry) => {
      const label = labels.get(entry.id);
      return label !== undefined && (input.type === undefined || label.type === input.type);
    });
    const ordered = orderRelated(candidates, (id) => {
      const label = labels.get(id) as NodeLabel;
      return { confidence: label.confidence, updatedAt: label.updated_at };
    }).slice(0, input.limit);
    const rows = await this.store.memory.byPks(reader, ordered.map((entry) => (labels.get(entry.id) as NodeLabel).pk));
    return ordered.flatMap((entry: ActivatedEntry) => {
      const row = rows.get((labels.get(entry.id) as NodeLabel).pk);
      if (!row) return [];
      return [{ ...toEntry(row), activation: round6(entry.activation), hops: entry.hops, path: entry.path.map((step) => ({ ...step })), via_similarity: entry.via_similarity }];
    });
  }

  async centralEntries(
    caller: Caller,
    input: { project?: string | undefined; type?: MemoryType | undefined; include_code?: boolean | undefined; limit: number },
  ): Promise<CentralEntry[]> {
    const selection = { ...(await this.selectionFor(caller, input.project ?? null, input.project === undefined)), type: input.type, code: input.include_code === true };
    const { ranked } = await this.ranked(selection);
    const top = ranked.top.slice(0, input.limit).map((entry, position) => ({ ...entry, rank: position + 1 }));
    const labels = await this.labels(top.map((entry) => entry.id));
    const rows = await this.store.memory.byPks(this.store.reader, top.flatMap((entry) => labels.get(entry.id)?.pk ?? []));
    return top.flatMap((entry) => {
      const pk = labels.get(entry.id)?.pk;
      const row = pk === undefined ? undefined : rows.get(pk);
      return row ? [{ ...toEntry(row), score: round6(entry.score), rank: entry.rank }] : [];
    });
  }

  /** The ranks of a selection: from the cache while nothing in it changed, else computed now, on the graph worker. */
  async ranked(selection: GraphSelection): Promise<{ ranked: RankedSelection; cached: boolean }> {
    const stamp = await this.store.knowledge.changeStamp(this.store.reader, selection);
    const at = now();
    return this.central.get(selection, stamp, Date.parse(at), async () => {
      const ranking = await graphThread.run(this.source, { kind: "rank", selection, nowIso: at, keep: { entries: PULSE_NODES, edges: PULSE_EDGES } });
      return { ...ranking, stamp };
    });
  }

  async pulse(caller: Caller, input: { project?: string | undefined; include_code?: boolean | undefined }): Promise<Pulse> {
    const reader = this.store.reader;
    // The roles that see every project get everything when they name none; an agent its current project.
    const everything = input.project === undefined && seesAllProjects(caller.role);
    let project = input.project ?? null;
    if (input.project === undefined && !everything) project = (await this.store.agents.get(reader, caller.agentId))?.current_project ?? null;
    const selection = { ...(await this.selectionFor(caller, project, false, everything)), code: input.include_code === true };
    const key = selectionKey(selection);
    const held = this.pulses.get(key);
    if (held && Date.now() - held.at < PULSE_TTL_MS) return held.pulse;
    const pulse = await this.computePulse(selection, project, everything ? "all" : project === null ? "global" : "project");
    this.pulses.delete(key);
    this.pulses.set(key, { at: Date.now(), pulse });
    while (this.pulses.size > PULSE_CACHE) this.pulses.delete(this.pulses.keys().next().value as string);
    return pulse;
  }

  private async computePulse(selection: GraphSelection, project: string | null, scope: Pulse["scope"]): Promise<Pulse> {
    const generatedAt = now();
    const nowMs = Date.parse(generatedAt);
    const { ranked } = await this.ranked(selection);
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
    const labels = await this.labels([...ranked.top.map((entry) => entry.id), ...hot.map((entry) => entry.id), ...conflicts.flatMap((edge) => [edge.src, edge.dst])]);
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
        : new Set((await Promise.all(selection.projects.map((id) => this.store.projects.memberIds(reader, id)))).flat());
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

  private async labels(ids: string[]): Promise<Map<string, NodeLabel>> {
    const unique = [...new Set(ids)];
    const labels = new Map<string, NodeLabel>();
    for (let start = 0; start < unique.length; start += LABEL_BATCH) {
      for (const row of await this.store.knowledge.labels(this.store.reader, unique.slice(start, start + LABEL_BATCH))) labels.set(row.id, row);
    }
    return labels;
  }

  /**
   * The entries a computation reads. A named project needs membership (404 otherwise, as if it did
   * not exist); no project means the caller's projects and the global entries, or everything for
   * the roles that see every project.
   */
  private async selectionFor(caller: Caller, project: string | null, useDefault: boolean, everything = false): Promise<GraphSelection> {
    const reader = this.store.reader;
    const allSeeing = seesAllProjects(caller.role);
    if (everything || (useDefault && allSeeing)) return { projects: null, global: true };
    if (useDefault) return { projects: await this.store.projects.projectsOf(reader, caller.agentId), global: true };
    if (project === null) return { projects: [], global: true };
    const visible = allSeeing ? (await this.store.projects.byId(reader, project)) !== undefined : await this.store.projects.isMember(reader, project, caller.agentId);
    if (!visible) throw notFound("project");
    return { projects: [project], global: false };
  }
}
