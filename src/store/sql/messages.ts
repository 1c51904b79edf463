import type { IdRef } from "../../core/ids.js";
import type { MessageFilters, MessageRow, MessageStore, NewMessageRow } from "../messages.js";
import type { Reader, Tx } from "../store.js";
import { LIMIT_PARAM, type SqlDb } from "./dialect.js";
import { idMatch } from "./visibility.js";

// Read state is per recipient: every read joins the reader's own row.
const columnsFor = "m.*, r.read_at AS read_at, CAST((r.agent_id IS NOT NULL) AS INTEGER) AS is_recipient";
const readerJoin = "LEFT JOIN message_recipients r ON r.message_pk = m.pk AND r.agent_id = ?";
// A reader sees a message it sent or received; nobody else does.
const readable = "(m.sender = ? OR r.agent_id IS NOT NULL)";

export class SqlMessages implements MessageStore {
  constructor(private readonly db: SqlDb) {}

  async insert(tx: Tx, row: NewMessageRow, recipients: string[]): Promise<number> {
    const [inserted] = await this.db.all<{ pk: number }>(
      tx,
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
    const pk = Number(inserted?.pk);
    if (recipients.length > 0) {
      const agents = this.db.dialect.listRows(recipients, "a");
      await this.db.run(tx, `INSERT INTO message_recipients (message_pk, agent_id) SELECT ?, a.value FROM ${agents.sql}`, pk, ...agents.params);
    }
    return pk;
  }

  findReadable(r: Reader, reader: string, match: IdRef): Promise<MessageRow[]> {
    const id = idMatch("m.id", match);
    return this.db.all<MessageRow>(r, `SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${id.sql} AND ${readable} LIMIT 2`, reader, ...id.params, reader);
  }

  byPk(r: Reader, reader: string, pk: number): Promise<MessageRow | undefined> {
    return this.db.get<MessageRow>(r, `SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE m.pk = ?`, reader, pk);
  }

  unread(r: Reader, reader: string, afterPk: number, limit: number): Promise<MessageRow[]> {
    return this.db.all<MessageRow>(
      r,
      `SELECT ${columnsFor} FROM message_recipients r JOIN messages m ON m.pk = r.message_pk
        WHERE r.agent_id = ? AND r.read_at IS NULL AND m.pk > ? ORDER BY m.pk ${LIMIT_PARAM}`,
      reader,
      afterPk,
      limit,
    );
  }

  /**
   * Marks the reader's oldest unread messages read and returns them, in one statement. Of
   * transactions taking at once, each passes over the rows another has locked (SKIP LOCKED) and
   * the update re-checks `read_at IS NULL` on the row as it is when the lock is granted: each
   * message goes to exactly one of them, and a read-all racing them counts only what they left.
   * The pick is a MATERIALIZED step of its own: as a subquery of the UPDATE, PostgreSQL ran it
   * again for every row it updated (a semi-join's inner side), each run locking and returning
   * the next unread one, so `limit` was not kept.
   */
  async take(tx: Tx, reader: string, limit: number, at: string): Promise<MessageRow[]> {
    const taken = await this.db.all<{ message_pk: number }>(
      tx,
      `WITH picked AS MATERIALIZED (
          SELECT q.message_pk FROM message_recipients q WHERE q.agent_id = ? AND q.read_at IS NULL
           ORDER BY q.message_pk ${LIMIT_PARAM}${this.db.dialect.skipLocked(tx, "q")})
       UPDATE message_recipients SET read_at = ?
        WHERE agent_id = ? AND read_at IS NULL AND message_pk IN (SELECT p.message_pk FROM picked p)
        RETURNING message_pk`,
      reader,
      limit,
      at,
      reader,
    );
    if (taken.length === 0) return [];
    const pks = this.db.dialect.inKeys("m.pk", taken.map((row) => row.message_pk));
    return this.db.all<MessageRow>(tx, `SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${pks.sql} ORDER BY m.pk`, reader, ...pks.params);
  }

  /** From the inbox index alone. */
  async unreadCount(r: Reader, reader: string): Promise<number> {
    return (await this.db.get<{ n: number }>(r, "SELECT count(*) AS n FROM message_recipients WHERE agent_id = ? AND read_at IS NULL", reader))?.n ?? 0;
  }

  list(r: Reader, reader: string, filters: MessageFilters, beforePk: number | null, limit: number): Promise<MessageRow[]> {
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
    return this.db.all<MessageRow>(r, `SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${where.join(" AND ")} ORDER BY m.pk DESC LIMIT ?`, reader, ...params, limit);
  }

  // Conditional on `read_at IS NULL`, re-checked after any concurrent writer of the row commits:
  // of requests marking one message at once, one changes it.
  async markRead(tx: Tx, reader: string, pks: number[], at: string): Promise<number[]> {
    if (pks.length === 0) return [];
    const listed = this.db.dialect.inKeys("message_pk", pks);
    const changed = await this.db.all<{ message_pk: number }>(
      tx,
      `UPDATE message_recipients SET read_at = ? WHERE agent_id = ? AND read_at IS NULL AND ${listed.sql} RETURNING message_pk`,
      at,
      reader,
      ...listed.params,
    );
    return changed.map((row) => Number(row.message_pk)).sort((a, b) => a - b);
  }

  markAllRead(tx: Tx, reader: string, at: string): Promise<number> {
    return this.db.run(tx, "UPDATE message_recipients SET read_at = ? WHERE agent_id = ? AND read_at IS NULL", at, reader);
  }

  async recipientsOf(r: Reader, pk: number): Promise<string[]> {
    return (await this.db.all<{ agent_id: string }>(r, "SELECT agent_id FROM message_recipients WHERE message_pk = ? ORDER BY agent_id", pk)).map((row) => row.agent_id);
  }

  deleteProject(tx: Tx, project: string): Promise<number> {
    return this.db.run(tx, "DELETE FROM messages WHERE project = ?", project);
  }
}
