import type { EventFilters } from "../events.js";
import type { Viewpoint } from "../visibility.js";
import { visibleEvent } from "./visibility.js";

/** The events a viewpoint may see after a point (or before a seq, newest first): one statement for both backends. */
export function eventListQuery(
  viewpoint: Viewpoint,
  start: { afterSeq: number } | { since: string },
  filters: EventFilters,
  limit: number,
  beforeSeq?: number,
): { sql: string; params: unknown[] } {
  const visible = visibleEvent("e", viewpoint);
  const where = [visible.sql];
  const params: unknown[] = [...visible.params];
  if ("afterSeq" in start) {
    where.push("e.seq > ?");
    params.push(start.afterSeq);
  } else {
    where.push("e.created_at > ?");
    params.push(start.since);
  }
  if (filters.type?.endsWith(".*")) {
    where.push("e.type >= ? AND e.type < ?");
    const family = filters.type.slice(0, -1);
    params.push(family, `${family}\uffff`);
  } else if (filters.type !== undefined) {
    where.push("e.type = ?");
    params.push(filters.type);
  }
  if (filters.agent !== undefined) {
    where.push("e.agent_id = ?");
    params.push(filters.agent);
  }
  if (beforeSeq !== undefined) {
    where.push("e.seq < ?");
    params.push(beforeSeq);
  }
  const order = beforeSeq === undefined ? "e.seq" : "e.seq DESC";
  return { sql: `SELECT e.* FROM events e WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ?`, params: [...params, limit] };
}
