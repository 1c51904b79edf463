import type { EdgeRel } from "../../wire/graph.js";
import type {
  AgentActivityRow,
  ConflictEdge,
  EdgeKey,
  GraphSelection,
  HotEntry,
  KnowledgeReads,
  NodeLabel,
  PulseCounts,
  SelectionNode,
  TypedEdge,
  TagAffinityRow,
} from "../knowledge.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { visibleMemory, type SqlFragment } from "./visibility.js";

// The graph reads of CONTRACT §14 as one set of statements for both backends. What differs between
// them is how a list of values is bound and how a JSON array is unnested: the dialect says.

/** The events that change an entry or an edge: what the central cache is stamped with. */
const GRAPH_CHANGE_TYPES = "('memory.written', 'memory.updated', 'memory.deleted', 'graph.linked')";
/** Above this many projects the change stamp reads every project's changes at once. */
const STAMP_PROJECTS = 200;

/** Builds a WHERE clause and its parameters in the order they appear. */
class Where {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  fragment(fragment: SqlFragment): this {
    return this.add(fragment.sql, ...fragment.params);
  }
  get sql(): string {
    return this.parts.length === 0 ? "1 = 1" : this.parts.join(" AND ");
  }
}

const live = (alias: string, nowIso: string): SqlFragment => ({
  sql: `${alias}.deleted_at IS NULL AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ?)`,
  params: [nowIso],
});

const toNumber = (value: unknown): number => Number(value ?? 0);

export class SqlKnowledgeReads implements KnowledgeReads {
  constructor(private readonly db: SqlDb) {}

  /** Rows of the selection's projects (and global ones when it includes them), by their `project` column. */
  private inProjects(column: string, selection: GraphSelection): SqlFragment {
    if (selection.projects === null) return { sql: "1 = 1", params: [] };
    const global = selection.global ? ` OR ${column} IS NULL` : "";
    if (selection.projects.length === 0) return { sql: selection.global ? `${column} IS NULL` : "1 = 0", params: [] };
    const list = this.db.dialect.inList(column, selection.projects);
    return { sql: `(${list.sql}${global})`, params: list.params };
  }

  /** A live shared entry of the selection. */
  private member(alias: string, selection: GraphSelection, nowIso: string): SqlFragment {
    const where = new Where().add(`${alias}.scope = 'project'`).fragment(this.inProjects(`${alias}.project`, selection)).fragment(live(alias, nowIso));
    if (selection.type !== undefined) where.add(`${alias}.type = ?`, selection.type);
    else if (!selection.code) where.add(`${alias}.type <> 'compiled'`);
    return { sql: where.sql, params: where.params };
  }

  async around(r: Reader, viewpoint: Viewpoint, nowIso: string, ids: readonly string[], rels: readonly EdgeRel[] | null, limit: number): Promise<TypedEdge[]> {
    if (ids.length === 0 || limit <= 0) return [];
    const ends = (): Where =>
      new Where().fragment(visibleMemory("s", viewpoint)).fragment(visibleMemory("d", viewpoint)).fragment(live("s", nowIso)).fragment(live("d", nowIso));
    const stored = (end: "s" | "d"): { sql: string; params: unknown[] } => {
      const where = ends().fragment(this.db.dialect.inList(`${end}.id`, ids));
      // An edge between two of the ids is read once, from its source's side.
      if (end === "d") where.add(`NOT ${this.db.dialect.inList("s.id", ids).sql}`, ...this.db.dialect.inList("s.id", ids).params);
      if (rels !== null) where.fragment(this.db.dialect.inList("e.rel", rels));
      return {
        sql: `SELECT s.id AS src, d.id AS dst, e.rel AS rel FROM graph_edges e
          JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk WHERE ${where.sql} LIMIT ?`,
        params: [...where.params, limit],
      };
    };
    const edges: TypedEdge[] = [];
    for (const end of ["s", "d"] as const) {
      const query = stored(end);
      edges.push(...(await this.db.all<TypedEdge>(r, query.sql, ...query.params)));
      if (edges.length >= limit) return edges.slice(0, limit);
    }
    if (rels === null || rels.includes("derived_from")) {
      // Merge parents, both ways: the ids' own parents, and entries that name one of the ids as a parent.
      const where = new Where()
        .add("s.parents <> '[]'")
        .fragment(visibleMemory("s", viewpoint))
        .fragment(visibleMemory("d", viewpoint))
        .fragment(live("s", nowIso))
        .fragment(live("d", nowIso));
      const childIn = this.db.dialect.inList("s.id", ids);
      const parentIn = this.db.dialect.inList("d.id", ids);
      where.add(`(${childIn.sql} OR ${parentIn.sql})`, ...childIn.params, ...parentIn.params);
      const parents = await this.db.all<{ src: string; dst: string }>(
        r,
        `SELECT s.id AS src, d.id AS dst FROM memory s CROSS JOIN ${this.db.dialect.jsonElements("s.parents", "j")}
          JOIN memory d ON d.id = j.value WHERE ${where.sql} LIMIT ?`,
        ...where.params, limit - edges.length,
      );
      for (const parent of parents) edges.push({ src: parent.src, dst: parent.dst, rel: "derived_from" });
    }
    return edges.slice(0, limit);
  }

  nodes(r: Reader, selection: GraphSelection, nowIso: string, limit: number): Promise<SelectionNode[]> {
    const member = this.member("m", selection, nowIso);
    return this.db.all<SelectionNode>(
      r,
      `SELECT m.pk, m.id, m.parents, m.expires_at FROM memory m WHERE ${member.sql} ORDER BY m.updated_at DESC, m.pk DESC LIMIT ?`,
      ...member.params, limit,
    ).then((rows) => rows.map((row) => ({ ...row, pk: Number(row.pk) })));
  }

  private selectionEdges(selection: GraphSelection, nowIso: string, extra: Where): Where {
    return new Where()
      .fragment(this.inProjects("e.project", selection))
      .fragment(this.member("s", selection, nowIso))
      .fragment(this.member("d", selection, nowIso))
      .fragment({ sql: extra.sql, params: extra.params });
  }

  async edgeKeys(r: Reader, selection: GraphSelection, limit: number): Promise<EdgeKey[]> {
    const where = new Where().fragment(this.inProjects("e.project", selection));
    // Compile's edges have a compiled entry at one end at least: without code they would only use up the bound.
    const withCode = selection.type === undefined ? selection.code === true : selection.type === "compiled";
    if (!withCode) where.add("e.rel NOT IN ('grounds', 'depends_on')");
    const rows = await this.db.all<EdgeKey>(r, `SELECT e.src_pk, e.dst_pk, e.rel FROM graph_edges e WHERE ${where.sql} LIMIT ?`, ...where.params, limit);
    return rows.map((row) => ({ src_pk: Number(row.src_pk), dst_pk: Number(row.dst_pk), rel: row.rel }));
  }

  async changeStamp(r: Reader, selection: GraphSelection): Promise<number> {
    const any = `SELECT max(seq) AS seq FROM events WHERE type IN ${GRAPH_CHANGE_TYPES}`;
    if (selection.projects === null || selection.projects.length > STAMP_PROJECTS) {
      const [row] = await this.db.all<{ seq: unknown }>(r, any, );
      return toNumber(row?.seq);
    }
    // One index lookup per project: the latest change of each, then the latest of those.
    const parts = selection.projects.map(() => `SELECT (${any} AND project = ?) AS seq`);
    if (selection.global) parts.push(`SELECT (${any} AND project IS NULL) AS seq`);
    if (parts.length === 0) return 0;
    const [row] = await this.db.all<{ seq: unknown }>(r, `SELECT max(x.seq) AS seq FROM (${parts.join(" UNION ALL ")}) x`, ...selection.projects);
    return toNumber(row?.seq);
  }

  labels(r: Reader, ids: readonly string[]): Promise<NodeLabel[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const list = this.db.dialect.inList("m.id", ids);
    return this.db.all<NodeLabel>(
      r,
      `SELECT m.pk, m.id, m.type, m.confidence, m.headline, substr(m.content, 1, 400) AS head, m.updated_at FROM memory m WHERE ${list.sql}`,
      ...list.params,
    ).then((rows) => rows.map((row) => ({ ...row, pk: Number(row.pk), confidence: Number(row.confidence) })));
  }

  async counts(r: Reader, selection: GraphSelection, nowIso: string): Promise<PulseCounts> {
    const member = this.member("m", selection, nowIso);
    const [entries] = await this.db.all<{ n: unknown; stale: unknown }>(
      r,
      `SELECT count(*) AS n, count(m.stale_since) AS stale FROM memory m WHERE ${member.sql}`,
      ...member.params,
    );
    const tasks = new Where().add("t.status IN ('open', 'claimed')").fragment(this.inProjects("t.project", selection));
    const byStatus = await this.db.all<{ status: string; n: unknown }>(r, `SELECT t.status, count(*) AS n FROM tasks t WHERE ${tasks.sql} GROUP BY t.status`, ...tasks.params);
    const status = (name: string): number => toNumber(byStatus.find((row) => row.status === name)?.n);
    return { entries: toNumber(entries?.n), open_tasks: status("open"), claimed_tasks: status("claimed"), stale_entries: toNumber(entries?.stale) };
  }

  async hot(r: Reader, selection: GraphSelection, nowIso: string, sinceIso: string, limit: number): Promise<HotEntry[]> {
    const where = new Where().add("rd.last_read_at >= ?", sinceIso).fragment(this.member("m", selection, nowIso));
    const rows = await this.db.all<{ id: string; reads: unknown; readers: unknown }>(
      r,
      `SELECT m.id, sum(rd.reads) AS reads, count(*) AS readers FROM memory_readers rd JOIN memory m ON m.pk = rd.memory_pk
        WHERE ${where.sql} GROUP BY m.id ORDER BY sum(rd.reads) DESC, count(*) DESC, m.id LIMIT ?`,
      ...where.params, limit,
    );
    return rows.map((row) => ({ id: row.id, reads: toNumber(row.reads), readers: toNumber(row.readers) }));
  }

  conflicts(r: Reader, selection: GraphSelection, nowIso: string, limit: number): Promise<ConflictEdge[]> {
    const where = this.selectionEdges(selection, nowIso, new Where().add("e.rel = 'contradicts'"));
    return this.db.all<ConflictEdge>(
      r,
      `SELECT e.id, s.id AS src, d.id AS dst, e.note, e.created_at FROM graph_edges e
        JOIN memory s ON s.pk = e.src_pk JOIN memory d ON d.pk = e.dst_pk WHERE ${where.sql} ORDER BY e.pk DESC LIMIT ?`,
      ...where.params, limit,
    );
  }

  async activity(r: Reader, selection: GraphSelection, sinceIso: string, limit: number): Promise<AgentActivityRow[]> {
    const count = async (sql: string, where: Where): Promise<Map<string, number>> => {
      const rows = await this.db.all<{ agent_id: string | null; n: unknown }>(r, `${sql.replace("$WHERE", where.sql)} LIMIT ?`, ...where.params, limit);
      return new Map(rows.filter((row) => row.agent_id !== null).map((row) => [row.agent_id as string, toNumber(row.n)]));
    };
    // Writes of shared entries only: a private entry's writes say nothing to anyone else.
    const writes = await count(
      "SELECT ev.agent_id, count(*) AS n FROM events ev WHERE $WHERE GROUP BY ev.agent_id ORDER BY count(*) DESC",
      new Where()
        .add("ev.type = 'memory.written'")
        .add("ev.private_to IS NULL")
        .add("ev.created_at >= ?", sinceIso)
        .fragment(this.inProjects("ev.project", selection)),
    );
    const reads = await count(
      "SELECT rd.agent_id, count(*) AS n FROM memory_readers rd JOIN memory m ON m.pk = rd.memory_pk WHERE $WHERE GROUP BY rd.agent_id ORDER BY count(*) DESC",
      new Where().add("rd.last_read_at >= ?", sinceIso).add("m.scope = 'project'").fragment(this.inProjects("m.project", selection)),
    );
    const claimed = await count(
      "SELECT t.assigned_to AS agent_id, count(*) AS n FROM tasks t WHERE $WHERE GROUP BY t.assigned_to ORDER BY count(*) DESC",
      new Where().add("t.status = 'claimed'").fragment(this.inProjects("t.project", selection)),
    );
    const completed = await count(
      "SELECT t.assigned_to AS agent_id, count(*) AS n FROM tasks t WHERE $WHERE GROUP BY t.assigned_to ORDER BY count(*) DESC",
      new Where().add("t.status = 'completed'").add("t.completed_at >= ?", sinceIso).fragment(this.inProjects("t.project", selection)),
    );
    const agents = new Set([...writes.keys(), ...reads.keys(), ...claimed.keys(), ...completed.keys()]);
    return [...agents].map((agent_id) => ({
      agent_id,
      writes: writes.get(agent_id) ?? 0,
      reads: reads.get(agent_id) ?? 0,
      claimed: claimed.get(agent_id) ?? 0,
      completed: completed.get(agent_id) ?? 0,
    }));
  }

  async tagUse(r: Reader, selection: GraphSelection, nowIso: string, sinceIso: string, limit: number): Promise<TagAffinityRow[]> {
    const written = new Where().add("m.updated_at >= ?", sinceIso).fragment(this.member("m", selection, nowIso));
    const read = new Where().add("rd.last_read_at >= ?", sinceIso).fragment(this.member("m", selection, nowIso));
    const rows = [
      ...(await this.db.all<{ agent_id: string; tag: string; n: unknown }>(
        r,
        `SELECT m.agent_id, t.tag, count(*) AS n FROM memory m JOIN memory_tags t ON t.memory_pk = m.pk
          WHERE ${written.sql} GROUP BY m.agent_id, t.tag ORDER BY count(*) DESC LIMIT ?`,
        ...written.params, limit,
      )),
      ...(await this.db.all<{ agent_id: string; tag: string; n: unknown }>(
        r,
        `SELECT rd.agent_id, t.tag, count(*) AS n FROM memory_readers rd JOIN memory m ON m.pk = rd.memory_pk
          JOIN memory_tags t ON t.memory_pk = m.pk WHERE ${read.sql} GROUP BY rd.agent_id, t.tag ORDER BY count(*) DESC LIMIT ?`,
        ...read.params, limit,
      )),
    ];
    return rows.map((row) => ({ agent_id: row.agent_id, tag: row.tag, count: toNumber(row.n) }));
  }
}
