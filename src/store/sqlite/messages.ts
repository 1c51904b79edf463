import type { Db } from "./db.js";

export interface MessageRow {
  pk: number;
  id: string;
  sender: string;
  recipient: string;
  project: string | null;
  subject: string;
  body: string;
  reply_to: string | null;
  created_at: string;
  /** Computed for the reader: when it read the message (null: unread; the sender's own are read). */
  read_at: string | null;
  /** Computed: 1 when the reader is a recipient. */
  is_recipient: number;
}

export type NewMessageRow = Omit<MessageRow, "pk" | "read_at" | "is_recipient">;

// Read state is per recipient: every read joins the reader's own row.
const columnsFor = `m.*, r.read_at AS read_at, (r.agent_id IS NOT NULL) AS is_recipient`;
const readerJoin = "LEFT JOIN message_recipients r ON r.message_pk = m.pk AND r.agent_id = ?";
// A reader sees a message it sent or received; nobody else does.
const readable = "(m.sender = ? OR r.agent_id IS NOT NULL)";

export function insertMessage(db: Db, row: NewMessageRow, recipients: string[]): number {
  const result = db.run(
    "INSERT INTO messages (id, sender, recipient, project, subject, body, reply_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    row.id,
    row.sender,
    row.recipient,
    row.project,
    row.subject,
    row.body,
    row.reply_to,
    row.created_at,
  );
  const pk = Number(result.lastInsertRowid);
  for (const agentId of recipients) db.run("INSERT INTO message_recipients (message_pk, agent_id) VALUES (?, ?)", pk, agentId);
  return pk;
}

/** A message the reader sent or received, by full id or prefix (at most 2 returned). */
export function findReadableMessages(db: Db, reader: string, ref: { id: string } | { prefix: string }): MessageRow[] {
  const [match, params] = "id" in ref ? ["m.id = ?", [ref.id]] : ["m.id >= ? AND m.id < ?", [ref.prefix, `${ref.prefix}\uffff`]];
  return db.all<MessageRow>(`SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE ${match} AND ${readable} LIMIT 2`, reader, ...params, reader);
}

export const messageByPk = (db: Db, reader: string, pk: number): MessageRow | undefined =>
  db.get<MessageRow>(`SELECT ${columnsFor} FROM messages m ${readerJoin} WHERE m.pk = ?`, reader, pk);

/** The reader's unread messages, oldest first, after `afterPk`. */
export const unreadMessages = (db: Db, reader: string, afterPk: number, limit: number): MessageRow[] =>
  db.all<MessageRow>(
    `SELECT ${columnsFor} FROM message_recipients r JOIN messages m ON m.pk = r.message_pk
     WHERE r.agent_id = ? AND r.read_at IS NULL AND m.pk > ? ORDER BY m.pk LIMIT ?`,
    reader,
    afterPk,
    limit,
  );

/** From the inbox index alone. */
export const unreadCount = (db: Db, reader: string): number =>
  db.get<{ n: number }>("SELECT count(*) AS n FROM message_recipients WHERE agent_id = ? AND read_at IS NULL", reader)?.n ?? 0;

export interface MessageFilters {
  read?: boolean | undefined;
  /** The other party: sent to or received from this agent. */
  agent?: string | undefined;
}

/** Messages the reader sent or received, newest first, before `beforePk`. */
export function listMessages(db: Db, reader: string, filters: MessageFilters, beforePk: number | null, limit: number): MessageRow[] {
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

/** Marks these messages read for the reader; returns the pks that were unread. */
export function markRead(db: Db, reader: string, pks: number[], at: string): number[] {
  const changed: number[] = [];
  for (const pk of pks) {
    if (db.run("UPDATE message_recipients SET read_at = ? WHERE message_pk = ? AND agent_id = ? AND read_at IS NULL", at, pk, reader).changes > 0) {
      changed.push(pk);
    }
  }
  return changed;
}

export const markAllRead = (db: Db, reader: string, at: string): number =>
  db.run("UPDATE message_recipients SET read_at = ? WHERE agent_id = ? AND read_at IS NULL", at, reader).changes;

export const recipientsOf = (db: Db, pk: number): string[] =>
  db.all<{ agent_id: string }>("SELECT agent_id FROM message_recipients WHERE message_pk = ? ORDER BY agent_id", pk).map((row) => row.agent_id);

/** Deletes a project's messages; returns how many. */
export const deleteProjectMessages = (db: Db, project: string): number => db.run("DELETE FROM messages WHERE project = ?", project).changes;

export const liveAgentIds = (db: Db): string[] =>
  db.all<{ agent_id: string }>("SELECT agent_id FROM agents WHERE deleted_at IS NULL ORDER BY agent_id").map((row) => row.agent_id);
