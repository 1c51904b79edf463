import { forbidden, notFound } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { HandoffRow } from "../store/handoffs.js";
import type { MemoryRow } from "../store/memory.js";
import type { Store } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import type { CompactHit, MemoryChange, MemoryEntry, Tombstone } from "../wire/memory.js";
import type { Message } from "../wire/messages.js";
import type { CompactContextPack, ContextPack, Handoff } from "../wire/sessions.js";
import type { CompactTask, Task } from "../wire/tasks.js";
import { compactEntry } from "./compact-entries.js";
import { toChange, toEntry } from "./memory-records.js";
import { toMessage } from "./messages.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import { toCompactTask, toTask } from "./task-records.js";
import { packByTokens } from "./budget.js";
import { tokensOf } from "../core/tokens.js";

export interface HandoffInput {
  agent_id?: string | undefined;
  host?: string | undefined;
  summary: string;
  in_progress?: string[] | undefined;
  next_steps?: string[] | undefined;
  memory_refs?: string[] | undefined;
}

const DELTA_LIMIT = 200;
const UNREAD_LIMIT = 100;
const CLAIMED_LIMIT = 100;
const DIRECTIVE_LIMIT = 1000;

const toHandoff = (row: HandoffRow): Handoff => ({
  id: row.id,
  agent_id: row.agent_id,
  host: row.host,
  summary: row.summary,
  in_progress: JSON.parse(row.in_progress) as string[],
  next_steps: JSON.parse(row.next_steps) as string[],
  memory_refs: JSON.parse(row.memory_refs) as string[],
  created_at: row.created_at,
});

/** A pack's parts, each a list (the last handoff a list of at most one), in the order a budget fills them. */
interface PackParts<Change, Held> {
  last_handoff: Handoff[];
  directives: MemoryEntry[];
  claimed_tasks: Held[];
  unread_messages: Message[];
  memory_delta: Change[];
}

/** A pack whose changes and claimed tasks are of the given forms: whole (ContextPack) or compact (CompactContextPack). */
type PackOf<Change, Held> = Omit<ContextPack, "memory_delta_since_last_seen" | "claimed_tasks"> & { memory_delta_since_last_seen: Change[]; claimed_tasks: Held[] };

/** What a session's pack is read with. */
export interface PackOptions {
  /** Leave the memory cursor where it is. */
  peek: boolean;
  /** Fit the pack in this many tokens. */
  maxTokens?: number | undefined;
  /** Changes and claimed tasks in compact form. */
  compact?: boolean | undefined;
}

/**
 * The parts that fit in `budget` tokens, filled in order of what a session cannot do without:
 * where it stopped, the standing directives, the tasks it holds, its messages, then what changed
 * (a prefix, so the cursor stays exact). No item is cut; what is left out is counted.
 */
function fitPack<Change, Held>(parts: PackParts<Change, Held>, budget: number): { kept: PackParts<Change, Held>; leftOut: NonNullable<ContextPack["left_out"]> } {
  // The frame: every key with empty lists, and the counts themselves.
  const frame = { last_handoff: null, memory_delta_since_last_seen: [], delta_truncated: true, seen_until: "2026-01-01T00:00:00.000Z", unread_messages: [], claimed_tasks: [], directives: [], left_out: { last_handoff: 0, directives: 0, claimed_tasks: 0, unread_messages: 0, memory_delta: 0 } };
  let left = budget - tokensOf(frame);
  const fill = <T>(items: T[], mode: "skip" | "prefix"): { kept: T[]; leftOut: number } => {
    const packed = packByTokens(items, Math.max(0, left), mode);
    if (packed.kept.length > 0) left -= packed.tokens;
    return packed;
  };
  const handoff = fill(parts.last_handoff, "skip");
  const directives = fill(parts.directives, "skip");
  const claimed = fill(parts.claimed_tasks, "skip");
  const unread = fill(parts.unread_messages, "skip");
  const delta = fill(parts.memory_delta, "prefix");
  return {
    kept: { last_handoff: handoff.kept, directives: directives.kept, claimed_tasks: claimed.kept, unread_messages: unread.kept, memory_delta: delta.kept },
    leftOut: { last_handoff: handoff.leftOut, directives: directives.leftOut, claimed_tasks: claimed.leftOut, unread_messages: unread.leftOut, memory_delta: delta.leftOut },
  };
}

/** The parts with each changed entry as a hit without a score (tombstones as they are) and each claimed task as a list's line. */
function compactParts(parts: PackParts<MemoryChange, Task>, at: string): PackParts<CompactHit | Tombstone, CompactTask> {
  const nowMs = Date.parse(at);
  return {
    ...parts,
    memory_delta: parts.memory_delta.map((change) => ("deleted_at" in change ? change : compactEntry(change, "", null, nowMs))),
    claimed_tasks: parts.claimed_tasks.map((task) => toCompactTask(task, nowMs)),
  };
}

/**
 * The pack of `parts`, fitted to `maxTokens` when given, and the last change it shows: the cursor
 * moves past what the pack holds, and only that, so a delta the budget cut continues next time.
 */
function packOf<Change, Held>(
  parts: PackParts<Change, Held>,
  changes: MemoryRow[],
  page: { rows: MemoryRow[]; truncated: boolean },
  at: string,
  maxTokens: number | undefined,
): { pack: PackOf<Change, Held>; lastShown: MemoryRow | undefined } {
  const fitted = maxTokens === undefined ? null : fitPack(parts, maxTokens);
  const kept = fitted?.kept ?? parts;
  const lastShown = changes[kept.memory_delta.length - 1] ?? (changes.length === 0 ? page.rows.at(-1) : undefined);
  const pack = {
    last_handoff: kept.last_handoff[0] ?? null,
    memory_delta_since_last_seen: kept.memory_delta,
    delta_truncated: page.truncated || kept.memory_delta.length < changes.length,
    seen_until: lastShown?.updated_at ?? at,
    unread_messages: kept.unread_messages,
    claimed_tasks: kept.claimed_tasks,
    directives: kept.directives,
    ...(fitted ? { left_out: fitted.leftOut } : {}),
  };
  return { pack, lastShown };
}

const isPk = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

export class SessionService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
  ) {}

  async save(caller: Caller, input: HandoffInput): Promise<Handoff> {
    if (input.agent_id !== undefined && input.agent_id !== caller.agentId) throw forbidden("a handoff is saved by the agent it belongs to");
    return this.store.transaction(async (tx) => {
      const row: HandoffRow = {
        id: newId(),
        agent_id: caller.agentId,
        host: input.host ?? null,
        summary: input.summary,
        in_progress: JSON.stringify(input.in_progress ?? []),
        next_steps: JSON.stringify(input.next_steps ?? []),
        memory_refs: JSON.stringify(input.memory_refs ?? []),
        created_at: now(),
      };
      await this.store.handoffs.insert(tx, row);
      await this.bus.emit(tx, { type: "session.handoff_saved", agentId: caller.agentId, project: null, payload: { handoff_id: row.id, agent_id: caller.agentId } });
      return toHandoff(row);
    });
  }

  /** Each agent's last handoff, newest first (an owner's overview; the route allows owners only). */
  async latest(cursor: string | undefined, limit: number): Promise<Page<Handoff>> {
    const before = decodeCursor(cursor, isPk);
    return pageOf(await this.store.handoffs.latest(this.store.reader, before, limit + 1), limit, toHandoff, (row) => row.pk);
  }

  /**
   * Everything a session starts with, in one call. For its own pack the caller's memory cursor
   * advances to `seen_until` (unless `peek`). An owner reading another agent's pack sees only what
   * both may see, and never moves that agent's cursor.
   */
  async load(caller: Caller, agentId: string, options: PackOptions): Promise<ContextPack | CompactContextPack> {
    const own = agentId === caller.agentId;
    if (!own && caller.role !== "owner") throw forbidden("only an owner may read another agent's handoff");
    const r = this.store.reader;
    const target = await this.store.agents.get(r, agentId);
    if (!target || target.deleted_at !== null) throw notFound("agent");
    // The target's view, narrowed for an owner: nobody but its author sees a private entry.
    const viewpoint: Viewpoint = { agentId, allProjects: seesAllProjects(target.role) };
    const privateOk = (author: string, scope: string): boolean => scope !== "agent" || author === caller.agentId;

    const since = await this.store.agents.memorySeenSeq(r, agentId);
    const at = now();
    const page = await this.deltaPage(viewpoint, since);
    const changes = page.rows.filter((row) => own || privateOk(row.agent_id, row.scope));
    const unread = (await this.store.messages.unread(r, agentId, 0, UNREAD_LIMIT))
      .filter((row) => own || row.sender === caller.agentId)
      .map(toMessage);
    const lastHandoff = await this.store.handoffs.last(r, agentId);
    const claimed = await this.store.tasks.claimedBy(r, agentId, CLAIMED_LIMIT);
    const directives = await this.store.memory.directives(r, viewpoint, at, undefined, DIRECTIVE_LIMIT);
    const parts: PackParts<MemoryChange, Task> = {
      last_handoff: lastHandoff ? [toHandoff(lastHandoff)] : [],
      directives: directives.filter((row) => own || privateOk(row.agent_id, row.scope)).map((row) => toEntry(row)),
      claimed_tasks: claimed.map(toTask),
      unread_messages: unread,
      memory_delta: changes.map((row) => toChange(row, at)),
    };
    // The budget is spent on the form served, so a compact pack fits more of the delta.
    const { pack, lastShown } = options.compact === true ? packOf(compactParts(parts, at), changes, page, at, options.maxTokens) : packOf(parts, changes, page, at, options.maxTokens);
    if (own && !options.peek && lastShown) await this.advanceSeen(agentId, lastShown.change_seq);
    return pack;
  }

  /**
   * Moves the agent's memory cursor forward to `seenUntil`. The pack was read outside this
   * transaction, so two of the agent's sessions loading at once may both get here: the cursor
   * keeps the later of the two, as if they had loaded one after the other, and never moves back.
   */
  private advanceSeen(agentId: string, seq: number): Promise<void> {
    return this.store.transaction((tx) => this.store.agents.advanceMemorySeenSeq(tx, agentId, seq));
  }

  /**
   * The oldest changes after the cursor, at most DELTA_LIMIT, in the order they committed (by
   * `change_seq`, which every change takes from the event that announces it): a change that commits
   * after the cursor has moved past others always comes after them. A truncated delta continues on
   * the next call.
   */
  private async deltaPage(viewpoint: Viewpoint, afterSeq: number): Promise<{ rows: MemoryRow[]; truncated: boolean }> {
    const rows = await this.store.memory.changesSince(this.store.reader, viewpoint, afterSeq, DELTA_LIMIT + 1);
    if (rows.length <= DELTA_LIMIT) return { rows, truncated: false };
    rows.pop();
    return { rows, truncated: true };
  }

}
