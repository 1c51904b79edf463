import type { Db } from "./db.js";
import type { EventRow } from "./events.js";
import type { MemoryRow } from "./memory.js";
import type { MessageRow } from "./messages.js";

// Reads for the audit log: every event in commit order, and the resource each one is about, in
// whatever state it is in now (live or deleted), regardless of who may see it.

export const eventsAfter = (db: Db, afterSeq: number, limit: number): EventRow[] =>
  db.all<EventRow>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit);

export const eventSeqsThrough = (db: Db, throughSeq: number): number[] =>
  db.all<{ seq: number }>("SELECT seq FROM events WHERE seq <= ? ORDER BY seq", throughSeq).map((row) => row.seq);

/** Seq and id of each retained event through `throughSeq`: after a restore, a seq alone names two events. */
export const eventIdsThrough = (db: Db, throughSeq: number): { seq: number; id: string }[] =>
  db.all<{ seq: number; id: string }>("SELECT seq, id FROM events WHERE seq <= ? ORDER BY seq", throughSeq);

export const eventIdAt = (db: Db, seq: number): string | undefined => db.get<{ id: string }>("SELECT id FROM events WHERE seq = ?", seq)?.id;

export const lastEventSeq = (db: Db): number => db.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM events")?.seq ?? 0;

export const memoryById = (db: Db, id: string): MemoryRow | undefined => db.get<MemoryRow>("SELECT * FROM memory WHERE id = ?", id);

export const taskSnapshotById = (db: Db, id: string): Record<string, unknown> | undefined =>
  db.get(
    `SELECT id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at,
       (SELECT json_group_array(dt.id) FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk) AS depends_on
     FROM tasks t WHERE id = ?`,
    id,
  );

/** A message with its recipients (a JSON array), whoever may read it. */
export type MessageSnapshotRow = Pick<MessageRow, "id" | "sender" | "recipient" | "project" | "subject" | "body" | "reply_to" | "created_at"> & {
  recipients: string;
};

export const messageById = (db: Db, id: string): MessageSnapshotRow | undefined =>
  db.get<MessageSnapshotRow>(
    `SELECT m.id, m.sender, m.recipient, m.project, m.subject, m.body, m.reply_to, m.created_at,
       (SELECT json_group_array(agent_id) FROM message_recipients WHERE message_pk = m.pk) AS recipients
     FROM messages m WHERE m.id = ?`,
    id,
  );

export const projectSnapshotById = (db: Db, id: string): Record<string, unknown> | undefined =>
  db.get("SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", id);

export const agentSnapshotById = (db: Db, agentId: string): Record<string, unknown> | undefined =>
  db.get("SELECT agent_id, display_name, role, key_source, created_at, deleted_at FROM agents WHERE agent_id = ?", agentId);

export const handoffById = (db: Db, id: string): { id: string; agent_id: string; summary: string; created_at: string } | undefined =>
  db.get("SELECT id, agent_id, summary, created_at FROM handoffs WHERE id = ?", id);
