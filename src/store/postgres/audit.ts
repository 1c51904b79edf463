import type { AuditReads, MessageSnapshotRow } from "../audit.js";
import type { EventRow } from "../events.js";
import type { MemoryRow } from "../memory.js";
import type { Reader } from "../store.js";
import { connectionOf } from "./transactions.js";

// Every column of an entry but the keyword index's generated `search`, which SQLite's table does
// not have (the snapshot is written to the audit log as it is read), in SQLite's order.
const MEMORY_COLUMNS = `pk, id, type, agent_id, project, scope, content, content_key, confidence, parents, tags, headline,
  created_at, updated_at, version, expires_at, read_count, distinct_readers, reinforcement_count, last_reinforced_at,
  superseded_by, embedding_model, deleted_at`;

// Arrays as JSON text in SQLite's form (`["a","b"]`, no spaces: array_to_json rather than
// json_agg), ordered as SQLite's primary keys give them: the task snapshot keeps `depends_on` as
// that text, and the audit log compares snapshots across stores.

export class PgAuditReads implements AuditReads {
  async eventsAfter(r: Reader, afterSeq: number, limit: number): Promise<EventRow[]> {
    const db = connectionOf(r);
    return db.all<EventRow>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit);
  }

  async eventSeqsThrough(r: Reader, throughSeq: number): Promise<number[]> {
    const db = connectionOf(r);
    return (await db.all<{ seq: number }>("SELECT seq FROM events WHERE seq <= ? ORDER BY seq", throughSeq)).map((row) => row.seq);
  }

  async eventIdsThrough(r: Reader, throughSeq: number): Promise<{ seq: number; id: string }[]> {
    const db = connectionOf(r);
    return db.all<{ seq: number; id: string }>("SELECT seq, id FROM events WHERE seq <= ? ORDER BY seq", throughSeq);
  }

  async eventIdAt(r: Reader, seq: number): Promise<string | undefined> {
    const db = connectionOf(r);
    return (await db.get<{ id: string }>("SELECT id FROM events WHERE seq = ?", seq))?.id;
  }

  async memoryById(r: Reader, id: string): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memory WHERE id = ?`, id);
  }

  async taskById(r: Reader, id: string): Promise<Record<string, unknown> | undefined> {
    const db = connectionOf(r);
    return db.get(
      `SELECT id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at,
       COALESCE((SELECT array_to_json(array_agg(dt.id ORDER BY d.depends_on_pk)) FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk)::text, '[]') AS depends_on
     FROM tasks t WHERE id = ?`,
      id,
    );
  }

  async messageById(r: Reader, id: string): Promise<MessageSnapshotRow | undefined> {
    const db = connectionOf(r);
    return db.get<MessageSnapshotRow>(
      `SELECT m.id, m.sender, m.recipient, m.project, m.subject, m.body, m.reply_to, m.created_at,
       COALESCE((SELECT array_to_json(array_agg(agent_id ORDER BY agent_id)) FROM message_recipients WHERE message_pk = m.pk)::text, '[]') AS recipients
     FROM messages m WHERE m.id = ?`,
      id,
    );
  }

  async projectById(r: Reader, id: string): Promise<Record<string, unknown> | undefined> {
    const db = connectionOf(r);
    return db.get("SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", id);
  }

  async agentById(r: Reader, agentId: string): Promise<Record<string, unknown> | undefined> {
    const db = connectionOf(r);
    return db.get("SELECT agent_id, display_name, role, key_source, created_at, deleted_at FROM agents WHERE agent_id = ?", agentId);
  }

  async handoffById(r: Reader, id: string): Promise<{ id: string; agent_id: string; summary: string; created_at: string } | undefined> {
    const db = connectionOf(r);
    return db.get("SELECT id, agent_id, summary, created_at FROM handoffs WHERE id = ?", id);
  }
}
