/**
 * Every event the server itself emits, by type, with its payload. `bus.emit` takes only these; a
 * custom event (`POST /events`) goes through `bus.emitCustom`. `tools/event-types.ts` describes each
 * for clients and must name exactly these types (the compiler holds the two together).
 */

/** Why a change was made, when it was not the author's own edit. */
type Imported = { reason?: "imported" };

interface MemoryEventBase {
  memory_id: string;
  type: string;
  project: string | null;
  scope: string;
  version: number;
}

interface TaskEventBase {
  task_id: string;
  project: string | null;
  status: string;
  assigned_to: string | null;
}

export interface ServerEventPayloads {
  "memory.written": MemoryEventBase & Imported;
  "memory.updated": MemoryEventBase & { changed?: string[]; reason?: "reinforced" | "headline" | "decay"; confidence?: number };
  "memory.deleted": MemoryEventBase & { reason: "deleted" | "expired" | "cleared" | "merged"; superseded_by?: string };
  "task.created": TaskEventBase & { created_by: string } & Imported;
  "task.claimed": TaskEventBase;
  "task.unclaimed": TaskEventBase & { reason?: string };
  "task.completed": TaskEventBase;
  "task.failed": TaskEventBase;
  "task.reopened": TaskEventBase;
  "task.updated": TaskEventBase & { changed: string[]; comment_id?: string };
  "task.commented": TaskEventBase & { comment_id: string; kind: string };
  "task.unblocked": TaskEventBase & { unblocked_by?: string };
  "message.received": { message_id: string; from: string; to: string; project: string | null; reply_to: string | null; recipients: number };
  "message.read": { agent_id: string; count: number; message_ids: string[] };
  "project.created": { project: string; owner: string } & Imported;
  "project.joined": { project: string; agent_id: string };
  "project.left": { project: string; agent_id: string };
  "project.cleared": { project: string; memory?: number; tasks?: number; messages?: number };
  "agent.registered": { agent_id: string; role: string };
  "agent.renamed": { from: string; to: string };
  "agent.updated": { agent_id: string; fields: string[] };
  "agent.deleted": { agent_id: string };
  "agent.key_rotated": { agent_id: string };
  "session.handoff_saved": { handoff_id: string; agent_id: string };
  "graph.linked": { edge_id: string; src: string; dst: string; rel: string; project: string | null } & Imported;
  "archivist.lease": { holder: string | null; previous: string | null; token: number };
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
