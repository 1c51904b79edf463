import { z } from "zod";
import { timestamp } from "./timestamp.js";

/**
 * Every event the server itself emits, by type, with its payload. `bus.emit` takes only these; a
 * custom event (`POST /events`) goes through `bus.emitCustom`. `SERVER_EVENT_PAYLOAD_FIELDS` below
 * describes each for clients, and the compiler holds it to exactly these types.
 */

/** Why a change was made, when it was not the author's own edit. */
type Imported = { reason?: "imported" };

interface MemoryEventBase {
  memory_id: string;
  type: string;
  project: string | null;
  scope: string;
  version: number;
  /** Only for entries with a provenance (§11): a capture's, a feed's… */
  source_kind?: string;
}

interface TaskEventBase {
  task_id: string;
  project: string | null;
  status: string;
  assigned_to: string | null;
}

interface BlueprintRunEvent {
  run_id: string;
  blueprint_id: string;
  name: string;
  version: number;
  project: string | null;
}

/** Why a grant ended: revoked by the owner or the client, killed by a reused code or refresh token, or by its agent's fate, or simply unused. */
export type OAuthGrantRevocation = "owner" | "client" | "code_reused" | "refresh_reused" | "agent_deleted" | "role_changed" | "replaced" | "expired";

export interface ServerEventPayloads {
  "memory.written": MemoryEventBase & Imported;
  "memory.updated": MemoryEventBase & { changed?: string[]; reason?: "reinforced" | "headline" | "decay" | "stale" | "fresh"; confidence?: number };
  "memory.deleted": MemoryEventBase & { reason: "deleted" | "expired" | "cleared" | "merged" | "pruned" | "suppressed"; superseded_by?: string };
  "task.created": TaskEventBase & { created_by: string } & Imported;
  "task.claimed": TaskEventBase;
  "task.unclaimed": TaskEventBase & { reason?: string };
  "task.completed": TaskEventBase;
  "task.failed": TaskEventBase;
  "task.reopened": TaskEventBase;
  "task.updated": TaskEventBase & { changed: string[]; comment_id?: string };
  "task.commented": TaskEventBase & { comment_id: string; kind: string };
  "task.unblocked": TaskEventBase & { unblocked_by?: string };
  "message.received": { message_id: string; from: string; to: string; project: string | null; reply_to: string | null; recipients: number } & Imported;
  "message.read": { agent_id: string; count: number; message_ids: string[] };
  "project.created": { project: string; owner: string } & Imported;
  "project.joined": { project: string; agent_id: string } & Imported;
  "project.left": { project: string; agent_id: string };
  "project.cleared": { project: string; memory?: number; tasks?: number; messages?: number; decisions?: number };
  "agent.registered": { agent_id: string; role: string } & Imported;
  "agent.renamed": { from: string; to: string };
  "agent.updated": { agent_id: string; fields: string[] };
  "agent.deleted": { agent_id: string } & Imported;
  "agent.key_rotated": { agent_id: string };
  "session.handoff_saved": { handoff_id: string; agent_id: string } & Imported;
  "graph.linked": { edge_id: string; src: string; dst: string; rel: string; project: string | null } & Imported;
  "decision.recorded": { decision_id: string; project: string | null; task_id: string | null; supersedes: string | null } & Imported;
  "capture.added": { capture_id: string; project: string | null; session_id: string | null; bytes: number };
  "capture.digested": { capture_id: string; outcome: "digested" | "failed" | "dead"; memory_ids: string[] };
  "blueprint.saved": { blueprint_id: string; name: string; project: string | null; version: number } & Imported;
  "blueprint.run.started": BlueprintRunEvent & Imported;
  "blueprint.run.completed": BlueprintRunEvent;
  "blueprint.run.failed": BlueprintRunEvent & { node_key?: string };
  "blueprint.run.cancelled": BlueprintRunEvent;
  "compile.completed": { project: string | null; created: number; updated: number; removed: number; invalidated_count: number; commit: string | null };
  "archivist.lease": { holder: string | null; previous: string | null; token: number };
  "feed.created": { feed_id: string; project: string | null };
  "feed.updated": { feed_id: string; project: string | null; changed: string[] };
  "feed.deleted": { feed_id: string; project: string | null };
  "feed.polled": { feed_id: string; project: string | null; ingested: number; not_modified: boolean; status: string };
  "feed.failing": { feed_id: string; project: string | null; failures: number };
  "mesh.token.created": { token_id: string };
  "mesh.token.updated": { token_id: string };
  "mesh.token.revoked": { token_id: string };
  "mesh.peer.linked": { link_id: string; peer_instance_id: string; peer_name: string; direction: string; via: "request" | "handshake" };
  "mesh.peer.unlinked": { link_id: string; peer_instance_id: string };
  "mesh.peer.status": { link_id: string; status: string; previous: string };
  "mesh.sync.completed": { link_id: string; pages: number; applied: number; skipped: number; rejected: number; tombstones: number; cursor: number; anti_entropy: boolean };
  "mesh.rejected": { link_id: string; memory_id: string | null; reason: string };
  "oauth.grant.created": { grant_id: string; client_id: string; agent_id: string; scopes: string[] };
  "oauth.grant.revoked": { grant_id: string; client_id: string; agent_id: string; reason: OAuthGrantRevocation };
}

export type ServerEventType = keyof ServerEventPayloads;

interface Addressing {
  /** Who caused it. */
  agentId: string;
  project: string | null;
  /** Only this agent may see the event (events about private entries). */
  privateTo?: string | null;
  /** Only these agents may see the event (a message's sender and recipients). */
  audience?: string[];
}

/** One of the server's events, its payload checked against its type. */
export type ServerEvent = { [T in ServerEventType]: Addressing & { type: T; payload: ServerEventPayloads[T] } }[ServerEventType];

/** An event a client asked for (`POST /events`): any type outside the server's families. */
export type CustomEvent = Addressing & { type: string; payload: Record<string, unknown> };

/**
 * Each server event's payload fields, in words, for clients (the OpenAPI document lists them from
 * here, and docs/events.md must mention every type). Typed by the union above, so a type missing
 * here, or one the server does not emit, does not compile.
 */
export const SERVER_EVENT_PAYLOAD_FIELDS: Readonly<Record<ServerEventType, string>> = {
  "memory.written": "memory_id, type, project, scope, version, source_kind?",
  "memory.updated": "memory_id, type, project, scope, version, source_kind?, changed | reason (reinforced, headline, decay, stale, fresh), confidence?",
  "memory.deleted": "memory_id, type, project, scope, version, source_kind?, reason (deleted, expired, cleared, merged, pruned, suppressed), superseded_by?",
  "task.created": "task_id, project, status, assigned_to, created_by",
  "task.claimed": "task_id, project, status, assigned_to",
  "task.unclaimed": "task_id, project, status, assigned_to, reason? (lease expired)",
  "task.completed": "task_id, project, status, assigned_to",
  "task.failed": "task_id, project, status, assigned_to",
  "task.reopened": "task_id, project, status, assigned_to",
  "task.updated": "task_id, project, status, assigned_to, changed, comment_id? (dependency changes)",
  "task.commented": "task_id, project, status, assigned_to, comment_id, kind",
  "task.unblocked": "task_id, project, status, assigned_to, unblocked_by?",
  "message.received": "message_id, from, to, project, reply_to, recipients (count)",
  "message.read": "agent_id, count, message_ids",
  "project.created": "project, owner",
  "project.joined": "project, agent_id",
  "project.left": "project, agent_id",
  "project.cleared": "project, memory, tasks, messages, decisions (counts)",
  "agent.registered": "agent_id, role",
  "agent.renamed": "from, to",
  "agent.updated": "agent_id, fields",
  "agent.deleted": "agent_id",
  "agent.key_rotated": "agent_id",
  "session.handoff_saved": "handoff_id, agent_id",
  "graph.linked": "edge_id, src, dst, rel, project",
  "decision.recorded": "decision_id, project, task_id, supersedes",
  "capture.added": "capture_id, project, session_id, bytes (to the author and the archivist only)",
  "capture.digested": "capture_id, outcome (digested, failed, dead), memory_ids (to the author and the archivist only)",
  "blueprint.saved": "blueprint_id, name, project, version",
  "blueprint.run.started": "run_id, blueprint_id, name, version, project",
  "blueprint.run.completed": "run_id, blueprint_id, name, version, project",
  "blueprint.run.failed": "run_id, blueprint_id, name, version, project, node_key (the node that failed)",
  "blueprint.run.cancelled": "run_id, blueprint_id, name, version, project",
  "compile.completed": "project, created, updated, removed, invalidated_count, commit",
  "archivist.lease": "holder, previous, token",
  "feed.created": "feed_id, project",
  "feed.updated": "feed_id, project, changed",
  "feed.deleted": "feed_id, project",
  "feed.polled": "feed_id, project, ingested, not_modified, status (ok, failing, paused)",
  "feed.failing": "feed_id, project, failures (in a row; once, when the feed turns failing)",
  "mesh.token.created": "token_id (owner role only, as every mesh event)",
  "mesh.token.updated": "token_id",
  "mesh.token.revoked": "token_id",
  "mesh.peer.linked": "link_id, peer_instance_id, peer_name, direction, via (request, handshake)",
  "mesh.peer.unlinked": "link_id, peer_instance_id",
  "mesh.peer.status": "link_id, status (active, failing, unauthorized, paused), previous (only when it changes)",
  "mesh.sync.completed": "link_id, pages, applied, skipped, rejected, tombstones, cursor, anti_entropy (only when a sync changed something or was asked for)",
  "mesh.rejected": "link_id, memory_id (null when the item had no usable id), reason",
  "oauth.grant.created": "grant_id, client_id, agent_id, scopes (owner role only, as every OAuth event)",
  "oauth.grant.revoked": "grant_id, client_id, agent_id, reason (owner, client, code_reused, refresh_reused, agent_deleted, role_changed, replaced, expired)",
};

/** Every type the server emits, in the order above (an object keeps its string keys' order). */
export const SERVER_EVENT_TYPES = Object.keys(SERVER_EVENT_PAYLOAD_FIELDS) as readonly ServerEventType[];

const eventTypesDescription = (): string =>
  "The event type. The server's own, with their payload fields: " +
  SERVER_EVENT_TYPES.map((type) => `\`${type}\` {${SERVER_EVENT_PAYLOAD_FIELDS[type]}}`).join("; ") +
  ". Any other dotted type is a custom event (event_emit); `archivist.*` come from the archivist.";

export const eventRecord = z
  .object({
    id: z.uuid(),
    seq: z.number().int(),
    type: z.string().describe(eventTypesDescription()),
    agent_id: z.string(),
    project: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: "Event" });
export type EventRecord = z.output<typeof eventRecord>;
