import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, forbidden, notFound } from "../core/errors.js";
import { newId, parseIdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import type { MessageFilters, MessageRow } from "../store/messages.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import type { MarkedRead, Message, UnreadCount } from "../wire/messages.js";

export interface SendInput {
  to: string;
  subject?: string | undefined;
  body: string;
  reply_to?: string | undefined;
}

const isPk = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** The one mapping from a stored row to a message; `read` is the reader's own state (what one sent counts as read). */
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
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
  ) {}

  /** A message the caller sent or received, by full id or prefix; anything else is 404. */
  private async resolve(r: Reader, caller: Caller, ref: string): Promise<MessageRow> {
    const parsed = parseIdRef(ref);
    const rows = await this.store.messages.findReadable(r, caller.agentId, parsed);
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound("message");
    return row;
  }

  /** Who an address reaches, and the project a message to a project belongs to. */
  private async recipientsOf(r: Reader, caller: Caller, to: string): Promise<{ recipients: string[]; project: string | null }> {
    if (to === "broadcast") return { recipients: (await this.store.agents.liveIds(r)).filter((id) => id !== caller.agentId), project: null };
    if (to.startsWith("project:")) {
      const project = to.slice("project:".length);
      if (!(await this.store.projects.byId(r, project))) throw notFound("project");
      if (!seesAllProjects(caller.role) && !(await this.store.projects.isMember(r, project, caller.agentId))) {
        throw forbidden("not a member of this project");
      }
      return { recipients: (await this.store.projects.memberIds(r, [project])).filter((id) => id !== caller.agentId), project };
    }
    const agent = await this.store.agents.get(r, to);
    if (!agent || agent.deleted_at !== null) throw notFound("agent");
    return { recipients: [to], project: null };
  }

  async send(caller: Caller, input: SendInput): Promise<Message> {
    checkByteSize(input.body, this.config.MAX_CONTENT_BYTES, "body exceeds");
    return this.store.transaction((tx) => this.deliver(tx, caller, input));
  }

  /** Sends inside the caller's transaction, so a message can be part of a larger change. */
  async deliver(tx: Tx, caller: Caller, input: SendInput): Promise<Message> {
    const { recipients, project } = await this.recipientsOf(tx, caller, input.to);
    const replyTo = input.reply_to === undefined ? null : (await this.resolve(tx, caller, input.reply_to)).id;
    const pk = await this.store.messages.insert(
      tx,
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
    const row = await this.store.messages.byPk(tx, caller.agentId, pk);
    if (!row) throw notFound("message");
    await this.bus.emit(tx, {
      type: "message.received",
      agentId: caller.agentId,
      project,
      audience: [caller.agentId, ...recipients],
      payload: { message_id: row.id, from: caller.agentId, to: input.to, project, reply_to: replyTo, recipients: recipients.length },
    });
    return toMessage(row);
  }

  async get(caller: Caller, ref: string): Promise<Message> {
    return toMessage(await this.resolve(this.store.reader, caller, ref));
  }

  async unread(caller: Caller): Promise<UnreadCount> {
    return { unread: await this.store.messages.unreadCount(this.store.reader, caller.agentId) };
  }

  async inbox(caller: Caller, cursor: string | undefined, limit: number): Promise<Page<Message>> {
    const after = decodeCursor(cursor, isPk) ?? 0;
    return pageOf(await this.store.messages.unread(this.store.reader, caller.agentId, after, limit + 1), limit, toMessage, (row) => row.pk);
  }

  async list(caller: Caller, filters: MessageFilters & { cursor?: string | undefined; limit: number }): Promise<Page<Message>> {
    const before = decodeCursor(filters.cursor, isPk);
    const rows = await this.store.messages.list(this.store.reader, caller.agentId, filters, before, filters.limit + 1);
    return pageOf(rows, filters.limit, toMessage, (row) => row.pk);
  }

  private async emitRead(tx: Tx, caller: Caller, messageIds: string[], count: number): Promise<void> {
    if (count === 0) return;
    await this.bus.emit(tx, {
      type: "message.read",
      agentId: caller.agentId,
      project: null,
      audience: [caller.agentId],
      payload: { agent_id: caller.agentId, count, message_ids: messageIds },
    });
  }

  /**
   * Marks the unread messages read and returns exactly those, in one transaction: the rows are
   * taken by the statement that marks them, so consumes racing each other (on one server or many)
   * each get their own.
   */
  consume(caller: Caller, limit: number): Promise<Message[]> {
    return this.store.transaction(async (tx) => {
      const rows = await this.store.messages.take(tx, caller.agentId, limit, now());
      await this.emitRead(tx, caller, rows.map((row) => row.id), rows.length);
      return rows.map(toMessage);
    });
  }

  readAll(caller: Caller): Promise<MarkedRead> {
    return this.store.transaction(async (tx) => {
      const marked = await this.store.messages.markAllRead(tx, caller.agentId, now());
      await this.emitRead(tx, caller, [], marked);
      return { marked };
    });
  }

  /** Recipients only: the sender of a message it did not also receive gets 404. */
  markRead(caller: Caller, ref: string): Promise<Message> {
    return this.store.transaction(async (tx) => {
      const row = await this.resolve(tx, caller, ref);
      if (row.is_recipient !== 1) throw notFound("message");
      const changed = await this.store.messages.markRead(tx, caller.agentId, [row.pk], now());
      await this.emitRead(tx, caller, [row.id], changed.length);
      const updated = await this.store.messages.byPk(tx, caller.agentId, row.pk);
      return toMessage(updated ?? row);
    });
  }
}
