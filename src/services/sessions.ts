import { forbidden, notFound } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import { getAgentRow } from "../store/agents.js";
import type { Db } from "../store/db.js";
import { insertHandoff, lastHandoff, latestHandoffs, memorySeenAt, setMemorySeenAt, type HandoffRow } from "../store/handoffs.js";
import { changesAt, changesSince, listDirectives, type MemoryRow } from "../store/memory.js";
import { unreadMessages } from "../store/messages.js";
import { claimedTasks } from "../store/tasks.js";
import type { Viewer } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { seesAllProjects, type Caller } from "./caller.js";
import { toEntry, toTombstone, type MemoryEntry, type Tombstone } from "./memory-records.js";
import { toMessage, type Message } from "./messages.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import { toTask, type Task } from "./task-records.js";

export interface Handoff {
  id: string;
  agent_id: string;
  host: string | null;
  summary: string;
  in_progress: string[];
  next_steps: string[];
  memory_refs: string[];
  created_at: string;
}

export interface HandoffInput {
  agent_id?: string | undefined;
  host?: string | undefined;
  summary: string;
  in_progress?: string[] | undefined;
  next_steps?: string[] | undefined;
  memory_refs?: string[] | undefined;
}

export interface ContextPack {
  last_handoff: Handoff | null;
  memory_delta_since_last_seen: (MemoryEntry | Tombstone)[];
  delta_truncated: boolean;
  seen_until: string;
  unread_messages: Message[];
  claimed_tasks: Task[];
  directives: MemoryEntry[];
}

const DELTA_LIMIT = 200;
/** Entries changed in one millisecond that a delta page still returns together. */
const SAME_INSTANT_LIMIT = 5000;
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

const isPk = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

export class SessionService {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
  ) {}

  save(caller: Caller, input: HandoffInput): Handoff {
    if (input.agent_id !== undefined && input.agent_id !== caller.agentId) throw forbidden("a handoff is saved by the agent it belongs to");
    return this.db.write(() => {
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
      insertHandoff(this.db, row);
      this.bus.emit({ type: "session.handoff_saved", agentId: caller.agentId, project: null, payload: { handoff_id: row.id, agent_id: caller.agentId } });
      return toHandoff(row);
    });
  }

  /** Each agent's last handoff, newest first (an owner's overview; the route allows owners only). */
  latest(cursor: string | undefined, limit: number): Page<Handoff> {
    const before = decodeCursor(cursor, isPk);
    return pageOf(latestHandoffs(this.db, before, limit + 1), limit, toHandoff, (row) => row.pk);
  }

  /**
   * Everything a session starts with, in one call. For its own pack the caller's memory cursor
   * advances to `seen_until` (unless `peek`). An owner reading another agent's pack sees only what
   * both may see, and never moves that agent's cursor.
   */
  load(caller: Caller, agentId: string, peek: boolean): ContextPack {
    const own = agentId === caller.agentId;
    if (!own && caller.role !== "owner") throw forbidden("only an owner may read another agent's handoff");
    const target = getAgentRow(this.db, agentId);
    if (!target || target.deleted_at !== null) throw notFound("agent");
    // The target's view, narrowed for an owner: nobody but its author sees a private entry.
    const viewer: Viewer = { agentId, allProjects: seesAllProjects(target.role) };
    const privateOk = (author: string, scope: string): boolean => scope !== "agent" || author === caller.agentId;

    const since = memorySeenAt(this.db, agentId);
    const at = now();
    const page = this.deltaPage(viewer, since);
    const delta = page.rows
      .filter((row) => own || privateOk(row.agent_id, row.scope))
      .map((row) => (row.deleted_at !== null || (row.expires_at !== null && row.expires_at <= at) ? toTombstone(row) : toEntry(row)));
    const seenUntil = page.rows.at(-1)?.updated_at ?? since ?? at;
    const unread = unreadMessages(this.db, agentId, 0, UNREAD_LIMIT)
      .filter((row) => own || row.sender === caller.agentId)
      .map(toMessage);
    const pack: ContextPack = {
      last_handoff: ((row) => (row ? toHandoff(row) : null))(lastHandoff(this.db, agentId)),
      memory_delta_since_last_seen: delta,
      delta_truncated: page.truncated,
      seen_until: seenUntil,
      unread_messages: unread,
      claimed_tasks: claimedTasks(this.db, agentId, CLAIMED_LIMIT).map(toTask),
      directives: listDirectives(this.db, viewer, at, undefined, DIRECTIVE_LIMIT)
        .filter((row) => own || privateOk(row.agent_id, row.scope))
        .map((row) => toEntry(row)),
    };
    if (own && !peek && seenUntil !== since) this.db.write(() => setMemorySeenAt(this.db, agentId, seenUntil));
    return pack;
  }

  /**
   * The oldest changes after the cursor, at most DELTA_LIMIT. A page never ends inside a
   * millisecond: the cursor is a timestamp, so rows sharing the last one are all in this page or
   * all in the next. Nothing is skipped; a truncated delta continues on the next call.
   */
  private deltaPage(viewer: Viewer, since: string | null): { rows: MemoryRow[]; truncated: boolean } {
    const rows = changesSince(this.db, viewer, since, DELTA_LIMIT + 1);
    if (rows.length <= DELTA_LIMIT) return { rows, truncated: false };
    const overflow = rows.pop() as MemoryRow;
    const boundary = overflow.updated_at;
    const whole = rows.filter((row) => row.updated_at !== boundary);
    if (whole.length > 0) return { rows: whole, truncated: true };
    return { rows: changesAt(this.db, viewer, boundary, SAME_INSTANT_LIMIT), truncated: true };
  }
}
