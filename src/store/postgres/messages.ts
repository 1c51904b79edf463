import type { MessageFilters, MessageRow, MessageStore, NewMessageRow } from "../messages.js";
import type { IdRef } from "../../core/ids.js";
import type { Reader, Tx } from "../store.js";
import { connectionOf } from "./transactions.js";
import { idMatch } from "../sql/visibility.js";

// Read state is per recipient: every read joins the reader's own row.
const columnsFor = `m.*, r.read_at AS read_at, (r.agent_id IS NOT NULL)::int AS is_recipient`;
const readerJoin = "LEFT JOIN message_recipients r ON r.message_pk = m.pk AND r.agent_id = ?";
// A reader sees a message it sent or received; nobody else does.
const readable = "(m.sender = ? OR r.agent_id IS NOT NULL)";

export class PgMessages implements MessageStore {
  async insert(tx: Tx, row: NewMessageRow, recipients: string[]): Promise<number> {
    const db = connectionOf(tx);
    const result = await db.run(
      "INSERT INTO messages (id, sender, recipient, project, subject, body, reply_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk",
      row.id,
      row.sender,
      row.recipient,
      row.project,
      row.subject,
      row.body,
      row.reply_to,
      row.created_at,
    );
    const pk = Number(result.rows[0]?.pk);
    for (const agentId of recipients) await db.run("INSERT INTO message_recipients (message_pk, agent_id) VALUES (?, ?)", pk, agentId);
    return pk;
  }

  async findReadable(r: Reader, reader: string, match: IdRef): Promise<MessageRow[]> {
    const db = connectionOf(r);
    const id = idMatch("m.id", match);
    return db.all<MessageRow>(`SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${id.sql} AND ${readable} LIMIT 2`, reader, ...id.params, reader);
  }

  async byPk(r: Reader, reader: string, pk: number): Promise<MessageRow | undefined> {
    const db = connectionOf(r);
    return db.get<MessageRow>(`SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE m.pk = ?`, reader, pk);
  }

  async unread(r: Reader, reader: string, afterPk: number, limit: number): Promise<MessageRow[]> {
    const db = connectionOf(r);
    return db.all<MessageRow>(
      `SELECT ${columnsFor} FROM message_recipients r JOIN messages m ON m.pk = r.message_pk
     WHERE r.agent_id = ? AND r.read_at IS NULL AND m.pk > ? ORDER BY m.pk LIMIT ?`,
      reader,
      afterPk,
      limit,
    );
  }

  /** From the inbox index alone. */
  async unreadCount(r: Reader, reader: string): Promise<number> {
    const db = connectionOf(r);
    return (await db.get<{ n: number }>("SELECT count(*) AS n FROM message_recipients WHERE agent_id = ? AND read_at IS NULL", reader))?.n ?? 0;
  }

  async list(r: Reader, reader: string, filters: MessageFilters, beforePk: number | null, limit: number): Promise<MessageRow[]> {
    const db = connectionOf(r);
    const where = [readable];
    const params: unknown[] = [reader];
    // Readable and not received means sent, and what one sent counts as read.
    if (filters.read === true) where.push("(r.agent_id IS NULL OR r.read_at IS NOT NULL)");
    if (filters.read === false) where.push("(r.agent_id IS NOT NULL AND r.read_at IS NULL)");
    if (filters.agent !== undefined) {
      where.push(
        `((m.sender = ? AND EXISTS (SELECT 1 FROM message_recipients o WHERE o.message_pk = m.pk AND o.agent_id = ?))
        OR (m.sender = ? AND r.agent_id IS NOT NULL))`,
      );
      params.push(reader, filters.agent, filters.agent);
    }
    if (beforePk !== null) {
      where.push("m.pk < ?");
      params.push(beforePk);
    }
    return db.all<MessageRow>(
      `SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${where.join(" AND ")} ORDER BY m.pk DESC LIMIT ?`,
      reader,
      ...params,
      limit,
    );
  }

  async markRead(tx: Tx, reader: string, pks: number[], at: string): Promise<number[]> {
    const db = connectionOf(tx);
    const changed: number[] = [];
    for (const pk of pks) {
      const result = await db.run("UPDATE message_recipients SET read_at = ? WHERE message_pk = ? AND agent_id = ? AND read_at IS NULL", at, pk, reader);
      if (result.changes > 0) changed.push(pk);
    }
    return changed;
  }

  async markAllRead(tx: Tx, reader: string, at: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("UPDATE message_recipients SET read_at = ? WHERE agent_id = ? AND read_at IS NULL", at, reader)).changes;
  }

  async recipientsOf(r: Reader, pk: number): Promise<string[]> {
    const db = connectionOf(r);
    return (await db.all<{ agent_id: string }>("SELECT agent_id FROM message_recipients WHERE message_pk = ? ORDER BY agent_id", pk)).map((row) => row.agent_id);
  }

  async deleteProject(tx: Tx, project: string): Promise<number> {
    const db = connectionOf(tx);
    return (await db.run("DELETE FROM messages WHERE project = ?", project)).changes;
  }
}
