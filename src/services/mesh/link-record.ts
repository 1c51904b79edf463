import type { MeshLinkRow } from "../../store/mesh.js";
import type { MeshLink, MeshLinkStatusName, ProjectMapping } from "../../wire/mesh.js";

/** A link's project mapping as stored (JSON of `[{remote, local}]`). */
export const mappingOf = (row: Pick<MeshLinkRow, "projects">): ProjectMapping[] => JSON.parse(row.projects) as ProjectMapping[];

/** The status a link shows: a pause hides what the syncs came to, and ends with it. */
export const shownStatus = (row: Pick<MeshLinkRow, "paused" | "status">): MeshLinkStatusName => (row.paused === 1 ? "paused" : row.status);

/** A link as the owner reads it: the peer's token only as its hint. */
export function meshLinkOf(row: MeshLinkRow): MeshLink {
  return {
    id: row.id,
    peer_instance_id: row.peer_instance_id,
    peer_name: row.peer_name,
    url: row.url,
    label: row.label,
    projects: mappingOf(row),
    direction: row.direction,
    interval_seconds: row.interval_seconds,
    max_confidence: row.max_confidence,
    status: shownStatus(row),
    last_sync_at: row.last_sync_at,
    last_success_at: row.last_success_at,
    last_error: row.last_error,
    cursor: Number(row.cursor),
    token_hint: row.token_hint,
    applied: Number(row.applied_total),
    rejected: Number(row.rejected_total),
    dropped: Number(row.dropped_total),
    next_sync_at: row.next_sync_at,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}
