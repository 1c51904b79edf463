import type { AuditReads, MessageSnapshotRow } from "../audit.js";
import type { EventRow } from "../events.js";
import type { MemoryRow } from "../memory.js";
import type { Reader } from "../store.js";
import { connectionOf } from "./transactions.js";

export class SqliteAuditReads implements AuditReads {
  async eventsAfter(r: Reader, afterSeq: number, limit: number): Promise<EventRow[]> {
    const db = connectionOf(r);
    return db.all<EventRow>("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit);
  }

  async eventSeqsThrough(r: Reader, throughSeq: number): Promise<number[]> {
    const db = connectionOf(r);
    return db.all<{ seq: number }>("SELECT seq FROM events WHERE seq <= ? ORDER BY seq", throughSeq).map((row) => row.seq);
  }

  async eventIdsThrough(r: Reader, throughSeq: number): Promise<{ seq: number; id: string }[]> {
    const db = connectionOf(r);
    return db.all<{ seq: number; id: string }>("SELECT seq, id FROM events WHERE seq <= ? ORDER BY seq", throughSeq);
  }

  async eventIdAt(r: Reader, seq: number): Promise<string | undefined> {
    const db = connectionOf(r);
    return db.get<{ id: string }>("SELECT id FROM events WHERE seq = ?", seq)?.id;
  }

  async memoryById(r: Reader, id: string): Promise<MemoryRow | undefined> {
    const db = connectionOf(r);
    return db.get<MemoryRow>("SELECT * FROM memory WHERE id = ?", id);
  }

  async taskById(r: Reader, id: string): Promise<Record<string, unknown> | undefined> {
    const db = connectionOf(r);
    return db.get(
      `SELECT id, title, description, status, created_by, assigned_to, reserved, project, priority, tags, due_at,
       expected_outcome, result, created_at, updated_at, claimed_at, completed_at, lease_expires_at,
       (SELECT json_group_array(dt.id) FROM task_dependencies d JOIN tasks dt ON dt.pk = d.depends_on_pk WHERE d.task_pk = t.pk) AS depends_on
     FROM tasks t WHERE id = ?`,
      id,
    );
  }

  async messageById(r: Reader, id: string): Promise<MessageSnapshotRow | undefined> {
    const db = connectionOf(r);
    return db.get<MessageSnapshotRow>(
      `SELECT m.id, m.sender, m.recipient, m.project, m.subject, m.body, m.reply_to, m.created_at,
       (SELECT json_group_array(agent_id) FROM message_recipients WHERE message_pk = m.pk) AS recipients
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
