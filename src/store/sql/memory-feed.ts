import type { FeedPosition, FeedRow, FeedSelection, MemoryFeedStore } from "../memory-feed.js";
import type { Reader } from "../store.js";
import type { Viewpoint } from "../visibility.js";
import type { SqlDb } from "./dialect.js";
import { addMemoryFilters, MEMORY_COLUMNS, type MemoryClause } from "./memory.js";
import { visibleInProject } from "./visibility.js";
import { NOT_SUPPRESSED } from "./merkle.js";
import { REPLICABLE_TYPES } from "../merkle.js";

/** The selection's conditions on entries `m`: shared, visible, not directives, live unless tombstones are asked for. */
function selectionClause(viewpoint: Viewpoint, nowIso: string, selection: FeedSelection, db: SqlDb): MemoryClause {
  const visible = visibleInProject("m", viewpoint);
  // Shared entries only: a feed never carries a private entry, not even to its author.
  const clause: MemoryClause = { sql: ["m.scope = 'project'", visible.sql, "m.type <> 'directive'"], params: [...visible.params] };
  if (!selection.includeDeleted) {
    clause.sql.push("m.deleted_at IS NULL", "(m.expires_at IS NULL OR m.expires_at > ?)");
    clause.params.push(nowIso);
  }
  addMemoryFilters(
    {
      type: selection.type,
      tag: selection.tag,
      agent: selection.agent,
      project: selection.project,
      sourceKind: selection.sourceKind,
      excludeCompiled: selection.excludeCompiled,
    },
    clause,
  );
  if (selection.grant !== undefined) {
    const projects = selection.grant.projects.length > 0 ? db.dialect.inList("m.project", selection.grant.projects) : { sql: "1 = 0", params: [] };
    clause.sql.push(
      `(${projects.sql} OR (? = 1 AND m.project IS NULL))`,
      `m.type IN (${REPLICABLE_TYPES.map((type) => `'${type}'`).join(", ")})`,
      NOT_SUPPRESSED,
    );
    clause.params.push(...projects.params, selection.grant.includeGlobal ? 1 : 0);
  }
  if (selection.ids !== undefined) {
    const listed = db.dialect.inList("m.id", selection.ids);
    clause.sql.push(listed.sql);
    clause.params.push(...listed.params);
  }
  return clause;
}

export class SqlMemoryFeed implements MemoryFeedStore {
  constructor(private readonly db: SqlDb) {}

  page(r: Reader, viewpoint: Viewpoint, nowIso: string, selection: FeedSelection, position: FeedPosition, limit: number): Promise<FeedRow[]> {
    const clause = selectionClause(viewpoint, nowIso, selection, this.db);
    let order: string;
    if (position.order === "changes") {
      clause.sql.push("m.change_seq > ?");
      clause.params.push(position.afterSeq);
      order = "m.change_seq";
    } else {
      if (position.after) {
        // `updated_at <= ?` first, redundant as it is: an index range on both backends, where the
        // OR alone had PostgreSQL read every newer entry again for each page (190 ms at 50,000 deep).
        clause.sql.push("m.updated_at <= ?", "(m.updated_at < ? OR m.pk < ?)");
        clause.params.push(position.after.at, position.after.at, position.after.pk);
      }
      order = "m.updated_at DESC, m.pk DESC";
    }
    return this.db.all<FeedRow>(
      r,
      `SELECT ${MEMORY_COLUMNS}, m.origin FROM memory m WHERE ${clause.sql.join(" AND ")} ORDER BY ${order} LIMIT ?`,
      ...clause.params,
      limit,
    );
  }

  async newestChange(r: Reader, viewpoint: Viewpoint, nowIso: string, selection: FeedSelection): Promise<number> {
    const clause = selectionClause(viewpoint, nowIso, selection, this.db);
    // Down the change_seq index to the first row that qualifies, rather than max() over every row:
    // left to itself SQLite takes the partial index of live entries and sorts them all (50 ms at
    // 100,000). A list of ids is the one selection an index of its own narrows better.
    const walk = selection.ids === undefined ? this.db.dialect.indexedBy("memory_change_seq") : "";
    const row = await this.db.get<{ change_seq: number }>(
      r,
      `SELECT m.change_seq FROM memory m${walk} WHERE ${clause.sql.join(" AND ")} ORDER BY m.change_seq DESC LIMIT 1`,
      ...clause.params,
    );
    return row?.change_seq ?? 0;
  }
}
