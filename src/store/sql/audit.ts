import type { AuditReads, MessageSnapshotRow } from "../audit.js";
import type { EventRow } from "../events.js";
import type { MemoryRow } from "../memory.js";
import type { Reader } from "../store.js";
import { LIMIT_PARAM, type SqlDb } from "./dialect.js";
import { MEMORY_COLUMNS } from "./memory.js";

// The audit log writes each snapshot as it is read and compares snapshots across stores, so both
// read the same columns in the same order, and arrays come as JSON text in SQLite's form
// (`["a","b"]`, the dialect's jsonArray) in the order of SQLite's primary keys.

export class SqlAuditReads implements AuditReads {
  constructor(private readonly db: SqlDb) {}

  eventsAfter(r: Reader, afterSeq: number, limit: number): Promise<EventRow[]> {
    return this.db.all<EventRow>(r, `SELECT * FROM events WHERE seq > ? ORDER BY seq ${LIMIT_PARAM}`, afterSeq, limit);
  }

  async eventSeqsThrough(r: Reader, throughSeq: number): Promise<number[]> {
    return (await this.db.all<{ seq: number }>(r, "SELECT seq FROM events WHERE seq <= ? ORDER BY seq", throughSeq)).map((row) => row.seq);
  }

  eventIdsThrough(r: Reader, throughSeq: number): Promise<{ seq: number; id: string }[]> {
    return this.db.all<{ seq: number; id: string }>(r, "SELECT seq, id FROM events WHERE seq <= ? ORDER BY seq", throughSeq);
  }

  async eventIdAt(r: Reader, seq: number): Promise<string | undefined> {
    return (await this.db.get<{ id: string }>(r, "SELECT id FROM events WHERE seq = ?", seq))?.id;
  }

  memoryById(r: Reader, id: string): Promise<MemoryRow | undefined> {
    return this.db.get<MemoryRow>(r, `SELECT ${MEMORY_COLUMNS} FROM memory m WHERE m.id = ?`, id);
  }

  taskById(r: Reader, id: string): Promise<Record<string, unknown> | undefined> {
    return this.db.get(
      r,
      `SELECT id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at,
       (SELECT ${this.db.dialect.jsonArray("dt.id", "d.depends_on_pk")} FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk) AS depends_on
       FROM tasks t WHERE id = ?`,
      id,
    );
  }

  messageById(r: Reader, id: string): Promise<MessageSnapshotRow | undefined> {
    return this.db.get<MessageSnapshotRow>(
      r,
      `SELECT m.id, m.sender, m.recipient, m.project, m.subject, m.body, m.reply_to, m.created_at,
       (SELECT ${this.db.dialect.jsonArray("mr.agent_id", "mr.agent_id")} FROM message_recipients mr WHERE mr.message_pk = m.pk) AS recipients
       FROM messages m WHERE m.id = ?`,
      id,
    );
  }

  projectById(r: Reader, id: string): Promise<Record<string, unknown> | undefined> {
    return this.db.get(r, "SELECT id, name, description, owner, created_at FROM projects WHERE id = ?", id);
  }

  agentById(r: Reader, agentId: string): Promise<Record<string, unknown> | undefined> {
    return this.db.get(r, "SELECT agent_id, display_name, role, key_source, created_at, deleted_at FROM agents WHERE agent_id = ?", agentId);
  }

  handoffById(r: Reader, id: string): Promise<{ id: string; agent_id: string; summary: string; created_at: string } | undefined> {
    return this.db.get(r, "SELECT id, agent_id, summary, created_at FROM handoffs WHERE id = ?", id);
  }
}
