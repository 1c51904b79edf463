import type { IdRef } from "../core/ids.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

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

export const MESSAGE_ROW_COLUMNS = rowColumns<MessageRow, "read_at" | "is_recipient">("messages", {
  pk: true, id: true, sender: true, recipient: true, project: true, subject: true, body: true, reply_to: true, created_at: true,
});

export type NewMessageRow = Omit<MessageRow, "pk" | "read_at" | "is_recipient">;

export interface MessageFilters {
  read?: boolean | undefined;
  /** The other party: sent to or received from this agent. */
  agent?: string | undefined;
}

/** Messages with read state per recipient. Every read is for one `reader`, who sees what it sent or received. */
export interface MessageStore {
  insert(tx: Tx, row: NewMessageRow, recipients: string[]): Promise<number>;
  /** A message the reader sent or received, by full id or prefix (at most 2 returned). */
  findReadable(r: Reader, reader: string, match: IdRef): Promise<MessageRow[]>;
  byPk(r: Reader, reader: string, pk: number): Promise<MessageRow | undefined>;
  /** The reader's unread messages, oldest first, after `afterPk`. */
  unread(r: Reader, reader: string, afterPk: number, limit: number): Promise<MessageRow[]>;
  /** Marks up to `limit` of the reader's unread messages read, oldest first, and returns them: each to one caller however many take at once. */
  take(tx: Tx, reader: string, limit: number, at: string): Promise<MessageRow[]>;
  unreadCount(r: Reader, reader: string): Promise<number>;
  /** Messages the reader sent or received, newest first, before `beforePk`. */
  list(r: Reader, reader: string, filters: MessageFilters, beforePk: number | null, limit: number): Promise<MessageRow[]>;
  /** Marks these messages read for the reader; returns the pks that were unread. */
  markRead(tx: Tx, reader: string, pks: number[], at: string): Promise<number[]>;
  markAllRead(tx: Tx, reader: string, at: string): Promise<number>;
  recipientsOf(r: Reader, pk: number): Promise<string[]>;
  /** Deletes a project's messages; returns how many. */
  deleteProject(tx: Tx, project: string): Promise<number>;
}
