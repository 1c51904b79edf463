import { newId } from "../../core/ids.js";
import { addSeconds } from "../../core/time.js";
import type { MeshLinkRow, NewMeshLinkRow } from "../../store/mesh.js";
import type { Instance } from "../instance.js";
import { tokenHint } from "./tokens.js";
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

/** What makes a new link, whoever asked for it (the owner, or a peer's handshake). */
export interface NewLink {
  peer: { instance_id: string; name: string };
  url: string;
  label: string | null;
  mapping: readonly ProjectMapping[];
  direction: MeshLinkRow["direction"];
  intervalSeconds: number;
  maxConfidence: number;
  /** The peer's token: kept only sealed, and shown only as its hint. */
  token: string;
  nextSyncAt: string;
  antiEntropyHours: number;
  createdBy: string;
  at: string;
}

/** A new link's row: active, at cursor 0, its first merkle comparison due a period from now. */
export function newLinkRow(instance: Pick<Instance, "seal">, link: NewLink): NewMeshLinkRow {
  return {
    id: newId(),
    peer_instance_id: link.peer.instance_id,
    peer_name: link.peer.name,
    url: link.url,
    label: link.label,
    projects: JSON.stringify(link.mapping),
    direction: link.direction,
    interval_seconds: link.intervalSeconds,
    max_confidence: link.maxConfidence,
    paused: 0,
    status: "active",
    failures: 0,
    last_sync_at: null,
    last_success_at: null,
    last_error: null,
    cursor: 0,
    token_sealed: instance.seal(link.token),
    token_hint: tokenHint(link.token),
    minted_token_id: null,
    applied_total: 0,
    rejected_total: 0,
    dropped_total: 0,
    next_sync_at: link.nextSyncAt,
    anti_entropy_at: addSeconds(link.at, link.antiEntropyHours * 3600),
    created_by: link.createdBy,
    created_at: link.at,
    updated_at: link.at,
  };
}
