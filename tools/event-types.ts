/**
 * Every event type the server emits, with its payload fields: the OpenAPI document lists them from
 * here, and a test holds this list, the code and docs/events.md to each other.
 */
export const SERVER_EVENT_TYPES: readonly { type: string; payload: string }[] = [
  { type: "memory.written", payload: "memory_id, type, project, scope, version" },
  { type: "memory.updated", payload: "memory_id, type, project, scope, version, changed | reason (reinforced, headline, decay), confidence?" },
  { type: "memory.deleted", payload: "memory_id, type, project, scope, version, reason (deleted, expired, cleared, merged), superseded_by?" },
  { type: "task.created", payload: "task_id, project, status, assigned_to, created_by" },
  { type: "task.claimed", payload: "task_id, project, status, assigned_to" },
  { type: "task.unclaimed", payload: "task_id, project, status, assigned_to, reason? (lease expired)" },
  { type: "task.completed", payload: "task_id, project, status, assigned_to" },
  { type: "task.failed", payload: "task_id, project, status, assigned_to" },
  { type: "task.reopened", payload: "task_id, project, status, assigned_to" },
  { type: "task.updated", payload: "task_id, project, status, assigned_to, changed, comment_id? (dependency changes)" },
  { type: "task.commented", payload: "task_id, project, status, assigned_to, comment_id, kind" },
  { type: "task.unblocked", payload: "task_id, project, status, assigned_to, unblocked_by?" },
  { type: "message.received", payload: "message_id, from, to, project, reply_to, recipients (count)" },
  { type: "message.read", payload: "agent_id, count, message_ids" },
  { type: "project.created", payload: "project, owner" },
  { type: "project.joined", payload: "project, agent_id" },
  { type: "project.left", payload: "project, agent_id" },
  { type: "project.cleared", payload: "project, memory, tasks, messages (counts)" },
  { type: "agent.registered", payload: "agent_id, role" },
  { type: "agent.renamed", payload: "from, to" },
  { type: "agent.updated", payload: "agent_id, fields" },
  { type: "agent.deleted", payload: "agent_id" },
  { type: "agent.key_rotated", payload: "agent_id" },
  { type: "session.handoff_saved", payload: "handoff_id, agent_id" },
  { type: "graph.linked", payload: "edge_id, src, dst, rel, project" },
  { type: "archivist.lease", payload: "holder, previous, token" },
];

export const eventTypesDescription = (): string =>
  "The event type. The server's own, with their payload fields: " +
  SERVER_EVENT_TYPES.map((entry) => `\`${entry.type}\` {${entry.payload}}`).join("; ") +
  ". Any other dotted type is a custom event (event_emit); `archivist.*` come from the archivist.";
