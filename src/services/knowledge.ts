import type { Config } from "../core/config.js";
import { notFound } from "../core/errors.js";
import { databasePath } from "../core/paths.js";
import { now } from "../core/time.js";
import type { GraphSelection, NodeLabel } from "../store/knowledge.js";
import type { StoreSource } from "../store/open.js";
import type { Store } from "../store/store.js";
import type { MemoryType } from "../wire/memory.js";
import type { RelatedQuery } from "../wire/related-query.js";
import type { CentralEntry, Pulse, RelatedEntry } from "../wire/knowledge.js";
import { seesAllProjects, viewpointOf, type Caller } from "./caller.js";
import { spreadActivation, orderRelated, type ActivatedEntry, type SimilarEntry } from "./graph/activation.js";
import { CentralCache, type RankedSelection } from "./graph/central-cache.js";
import { graphThread } from "./graph/graph-thread.js";
import { PULSE_EDGES, PULSE_NODES, Pulses } from "./graph/pulse.js";
import { round6, toEntry } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import type { Presence } from "./presence.js";

const SIMILAR_NEIGHBOURS = 10;
const LABEL_BATCH = 1000;

/** Which entries a graph computation reads: everything, the caller's own (its projects and the global entries), or one project's (null: the global entries). */
type SelectionRequest = { kind: "everything" } | { kind: "callers" } | { kind: "project"; project: string | null };

/**
 * The knowledge graph read three ways (CONTRACT §14): what is related to one entry, what the
 * team's knowledge hangs on, and a project's pulse. Every read applies the caller's visibility;
 * central and pulse read shared entries only, so they answer the same to everyone who may ask.
 * What grows with the whole selection (ranking it, pulse's counts and aggregates) runs on the graph
 * worker's thread; this one reads only the change stamp and the rows it shows.
 */
export class KnowledgeService {
  private readonly central = new CentralCache();
  private readonly pulses: Pulses;
  private readonly source: StoreSource;

  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly config: Config,
    presence: Presence,
  ) {
    this.source = { databaseUrl: config.DATABASE_URL, file: databasePath(config.DATA_DIR) };
    this.pulses = new Pulses(store, presence, this.source, { ranked: (selection) => this.ranked(selection), labels: (ids) => this.labels(ids) });
  }

  /** Lets the graph worker close what it opened for this server's store. */
  close(): Promise<void> {
    return graphThread.release(this.source);
  }

  async related(caller: Caller, ref: string, input: RelatedQuery): Promise<RelatedEntry[]> {
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
    const request: SelectionRequest = input.project === undefined ? { kind: "callers" } : { kind: "project", project: input.project };
    const selection = { ...(await this.selectionFor(caller, request)), type: input.type, code: input.include_code === true };
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
    const selection = { ...(await this.selectionFor(caller, everything ? { kind: "everything" } : { kind: "project", project })), code: input.include_code === true };
    return this.pulses.of(selection, project, everything ? "all" : project === null ? "global" : "project");
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
  private async selectionFor(caller: Caller, request: SelectionRequest): Promise<GraphSelection> {
    const reader = this.store.reader;
    const allSeeing = seesAllProjects(caller.role);
    if (request.kind === "everything" || (request.kind === "callers" && allSeeing)) return { projects: null, global: true };
    if (request.kind === "callers") return { projects: await this.store.projects.projectsOf(reader, caller.agentId), global: true };
    const { project } = request;
    if (project === null) return { projects: [], global: true };
    const visible = allSeeing ? (await this.store.projects.byId(reader, project)) !== undefined : await this.store.projects.isMember(reader, project, caller.agentId);
    if (!visible) throw notFound("project");
    return { projects: [project], global: false };
  }
}
