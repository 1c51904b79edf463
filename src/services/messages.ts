import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, forbidden, notFound } from "../core/errors.js";
import { newId, parseIdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import { getAgentRow } from "../store/agents.js";
import type { Db } from "../store/db.js";
import {
  findReadableMessages,
  insertMessage,
  listMessages,
  liveAgentIds,
  markAllRead,
  markRead,
  messageByPk,
  unreadCount,
  unreadMessages,
  type MessageFilters,
  type MessageRow,
} from "../store/messages.js";
import { memberIds, projectById } from "../store/projects.js";
import { isProjectMember } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";

export interface Message {
  id: string;
  from: string;
  to: string;
  project: string | null;
  subject: string;
  body: string;
  /** The caller's own read state (what one sent counts as read). */
  read: boolean;
  reply_to: string | null;
  created_at: string;
}

export interface SendInput {
  to: string;
  subject?: string | undefined;
  body: string;
  reply_to?: string | undefined;
}

const isPk = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

export const toMessage = (row: MessageRow): Message => ({
  id: row.id,
  from: row.sender,
  to: row.recipient,
  project: row.project,
  subject: row.subject,
  body: row.body,
  read: row.is_recipient === 1 ? row.read_at !== null : true,
  reply_to: row.reply_to,
  created_at: row.created_at,
});

export class MessageService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly config: Config,
  ) {}

  /** A message the caller sent or received, by full id or prefix; anything else is 404. */
  private resolve(caller: Caller, ref: string): MessageRow {
    const parsed = parseIdRef(ref);
    const rows = findReadableMessages(this.db, caller.agentId, parsed.kind === "full" ? { id: parsed.id } : { prefix: parsed.prefix });
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound("message");
    return row;
  }

  /** Who an address reaches, and the project a message to a project belongs to. */
  private recipientsOf(caller: Caller, to: string): { recipients: string[]; project: string | null } {
    if (to === "broadcast") return { recipients: liveAgentIds(this.db).filter((id) => id !== caller.agentId), project: null };
    if (to.startsWith("project:")) {
      const project = to.slice("project:".length);
      if (!projectById(this.db, project)) throw notFound("project");
      if (!seesAllProjects(caller.role) && !isProjectMember(this.db, project, caller.agentId)) {
        throw forbidden("not a member of this project");
      }
      return { recipients: memberIds(this.db, project).filter((id) => id !== caller.agentId), project };
    }
    const agent = getAgentRow(this.db, to);
    if (!agent || agent.deleted_at !== null) throw notFound("agent");
    return { recipients: [to], project: null };
  }

  send(caller: Caller, input: SendInput): Promise<Message> {
    checkByteSize(input.body, this.config.MAX_CONTENT_BYTES, "body exceeds");
    return this.db.writeSoon(() => this.deliver(caller, input));
  }

  /** Sends inside the caller's write transaction, so a message can be part of a larger change. */
  deliver(caller: Caller, input: SendInput): Message {
    const { recipients, project } = this.recipientsOf(caller, input.to);
    const replyTo = input.reply_to === undefined ? null : this.resolve(caller, input.reply_to).id;
    const pk = insertMessage(
      this.db,
      {
        id: newId(),
        sender: caller.agentId,
        recipient: input.to,
        project,
        subject: input.subject ?? "",
        body: input.body,
        reply_to: replyTo,
        created_at: now(),
      },
      recipients,
    );
    const row = messageByPk(this.db, caller.agentId, pk);
    if (!row) throw notFound("message");
    this.bus.emit({
      type: "message.received",
      agentId: caller.agentId,
      project,
      audience: [caller.agentId, ...recipients],
      payload: { message_id: row.id, from: caller.agentId, to: input.to, project, reply_to: replyTo, recipients: recipients.length },
    });
    return toMessage(row);
  }

  get(caller: Caller, ref: string): Message {
    return toMessage(this.resolve(caller, ref));
  }

  unread(caller: Caller): { unread: number } {
    return { unread: unreadCount(this.db, caller.agentId) };
  }

  inbox(caller: Caller, cursor: string | undefined, limit: number): Page<Message> {
    const after = decodeCursor(cursor, isPk) ?? 0;
    return pageOf(unreadMessages(this.db, caller.agentId, after, limit + 1), limit, toMessage, (row) => row.pk);
  }

  list(caller: Caller, filters: MessageFilters & { cursor?: string | undefined; limit: number }): Page<Message> {
    const before = decodeCursor(filters.cursor, isPk);
    return pageOf(listMessages(this.db, caller.agentId, filters, before, filters.limit + 1), filters.limit, toMessage, (row) => row.pk);
  }

  private emitRead(caller: Caller, messageIds: string[], count: number): void {
    if (count === 0) return;
    this.bus.emit({
      type: "message.read",
      agentId: caller.agentId,
      project: null,
      audience: [caller.agentId],
      payload: { agent_id: caller.agentId, count, message_ids: messageIds },
    });
  }

  /** Returns the unread messages and marks exactly those read, in one transaction. */
  consume(caller: Caller, limit: number): Promise<Message[]> {
    return this.db.writeSoon(() => {
      const rows = unreadMessages(this.db, caller.agentId, 0, limit);
      const at = now();
      markRead(this.db, caller.agentId, rows.map((row) => row.pk), at);
      this.emitRead(caller, rows.map((row) => row.id), rows.length);
      return rows.map((row) => toMessage({ ...row, read_at: at }));
    });
  }

  readAll(caller: Caller): Promise<{ marked: number }> {
    return this.db.writeSoon(() => {
      const marked = markAllRead(this.db, caller.agentId, now());
      this.emitRead(caller, [], marked);
      return { marked };
    });
  }

  /** Recipients only: the sender of a message it did not also receive gets 404. */
  markRead(caller: Caller, ref: string): Promise<Message> {
    return this.db.writeSoon(() => {
      const row = this.resolve(caller, ref);
      if (row.is_recipient !== 1) throw notFound("message");
      const changed = markRead(this.db, caller.agentId, [row.pk], now());
      this.emitRead(caller, [row.id], changed.length);
      const updated = messageByPk(this.db, caller.agentId, row.pk);
      return toMessage(updated ?? row);
    });
  }
}
