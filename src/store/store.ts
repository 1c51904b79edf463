import type { AgentStore } from "./agents.js";
import type { ArchivistStore } from "./archivist.js";
import type { AuditReads } from "./audit.js";
import type { CaptureStore } from "./captures.js";
import type { CompileStore } from "./compile.js";
import type { DecisionStore } from "./decisions.js";
import type { EventStore } from "./events.js";
import type { FeedStore } from "./feeds.js";
import type { MeshStore } from "./mesh.js";
import type { GraphStore } from "./graph.js";
import type { KnowledgeReads } from "./knowledge.js";
import type { BlueprintStore } from "./blueprints.js";
import type { BlueprintRunStore } from "./blueprint-runs.js";
import type { HandoffStore } from "./handoffs.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { JobStore } from "./jobs.js";
import type { LogStore } from "./logs.js";
import type { Maintenance } from "./maintenance.js";
import type { KeywordIndex, MemoryStore } from "./memory.js";
import type { MemoryFeedStore } from "./memory-feed.js";
import type { MerkleStore } from "./merkle.js";
import type { MessageStore } from "./messages.js";
import type { MetaStore } from "./meta.js";
import type { OAuthStore } from "./oauth.js";
import type { ProjectStore } from "./projects.js";
import type { QuotaStore } from "./quotas.js";
import type { TaskStore } from "./tasks.js";
import type { TransferStore } from "./transfer.js";
import type { UiSessionStore } from "./ui-sessions.js";
import type { VectorIndex } from "./vectors.js";

declare const readerBrand: unique symbol;
declare const txBrand: unique symbol;

/**
 * Where a repository read runs: `Store.reader` (what is committed, outside any transaction) or a
 * transaction, which also sees its own uncommitted writes. Only the implementation that made a
 * handle knows what is inside it.
 */
export interface Reader {
  readonly [readerBrand]: true;
}

/**
 * A write transaction. Every repository write takes one, so a write outside a transaction does not
 * compile, and "inside the caller's transaction" is a parameter rather than a comment.
 */
export interface Tx extends Reader {
  readonly [txBrand]: true;
  /** Runs once this transaction has committed; dropped when it (or the savepoint it was registered in) rolls back. */
  afterCommit(hook: () => void): void;
  /** Runs `work` in a savepoint of this transaction: when it throws, its writes (and hooks) alone roll back. */
  savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Until this transaction ends, holds the lock of `name`: another transaction that locks the same
   * name waits here for it. For a rule that spans rows no key constraint covers (no two entries
   * alike in one scope). Where transactions never overlap (SQLite) it costs nothing.
   */
  lock(name: string): Promise<void>;
}

/**
 * Runs at the end of every transaction, in the async context of the code that started it, just
 * before its writes are committed, with what the transaction's work returned: it may write in
 * `tx` too (an idempotency key's answer, committed with the change it describes); throwing rolls
 * the transaction back and fails it.
 */
export type TransactionGuard = (tx: Tx, result: unknown) => Promise<void>;

/** The store: per-aggregate repositories over one database, and the transactions that bind their writes. */
export interface Store {
  /** Reads of what is committed, outside any transaction. */
  readonly reader: Reader;
  /**
   * Runs `work` as one transaction: all of its writes commit together, or none do (it throws).
   * Transactions never nest: inside one, pass its `Tx` on (or use `tx.savepoint`); a nested call
   * waits for the transaction it is inside, for ever. Where transactions overlap (PostgreSQL), one
   * that collides with another (both inserting the same key, a deadlock) is rolled back and run
   * again, so `work` must do nothing but store work and register hooks: it may run more than once.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  addGuard(guard: TransactionGuard): void;
  /** False once closed: background work checks it before starting a step. */
  readonly open: boolean;
  /** Whether the database answers a trivial query. */
  ping(): Promise<boolean>;
  /** Waits for queued transactions, then releases the database. */
  close(): Promise<void>;

  /**
   * Present where several server processes may share the database: `subscribe` wakes the listener
   * whenever any process has committed events (the listener then reads the log by seq). Absent
   * where this process is the only writer, whose commits are all the events there are.
   */
  readonly eventWakeups?: EventWakeups;
  /** Present where several processes share the database: the per-agent rate limit they all count against. */
  readonly rateLimits?: SharedRateLimits;
  /** Failed authentications, where several processes share the database (one process keeps them in memory). */
  readonly authFailures?: SharedFailureLog;
  /**
   * Present where transactions writing events hold one lock until they commit (so that seqs are
   * visible in commit order): how long each held it, for /metrics and the benchmarks.
   */
  readonly eventsLock?: LockHolds;

  readonly agents: AgentStore;
  readonly archivist: ArchivistStore;
  readonly audit: AuditReads;
  readonly blueprints: BlueprintStore;
  readonly blueprintRuns: BlueprintRunStore;
  readonly captures: CaptureStore;
  readonly compile: CompileStore;
  readonly decisions: DecisionStore;
  readonly events: EventStore;
  readonly feeds: FeedStore;
  /** Mesh tokens, links, discovered peers and suppressed copies (CONTRACT §16). */
  readonly mesh: MeshStore;
  readonly graph: GraphStore;
  readonly handoffs: HandoffStore;
  readonly idempotency: IdempotencyStore;
  readonly jobs: JobStore;
  readonly keywords: KeywordIndex;
  readonly knowledge: KnowledgeReads;
  readonly logs: LogStore;
  readonly maintenance: Maintenance;
  readonly memory: MemoryStore;
  readonly memoryFeed: MemoryFeedStore;
  readonly merkle: MerkleStore;
  readonly messages: MessageStore;
  readonly meta: MetaStore;
  readonly oauth: OAuthStore;
  readonly projects: ProjectStore;
  readonly quotas: QuotaStore;
  readonly tasks: TaskStore;
  readonly transfer: TransferStore;
  readonly uiSessions: UiSessionStore;
  readonly vectors: VectorIndex;
}


export interface EventWakeups {
  /** Resolves once listening; the function it gives stops. */
  subscribe(listener: () => void): Promise<() => void>;
}

export interface LockHolds {
  /** Calls `listener` with the seconds each transaction held the lock, once it has ended; the function it gives stops. */
  onHeld(listener: (seconds: number) => void): () => void;
}

export interface SharedRateLimits {
  /**
   * Takes one request from the agent's bucket (`capacity` requests, refilled evenly over a
   * minute); says whether there was one, and if not, in how many seconds there will be.
   */
  take(agentId: string, capacity: number, nowMs: number): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }>;
}

/**
 * A write broke one of the database's constraints (a key already taken, a reference to nothing, a
 * value out of range): the data written was at fault, not the server. Every implementation throws
 * this rather than its driver's error.
 */
export class ConstraintViolation extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ConstraintViolation";
  }
}

/** Failed authentications by key (address and claimed identity), for the guessing throttle. */
export interface SharedFailureLog {
  /** The times (epoch ms) of the key's failures after `sinceMs`, the latest `limit` of them, oldest first. */
  recent(key: string, sinceMs: number, limit: number): Promise<number[]>;
  record(key: string, atMs: number): Promise<void>;
  /** Forgets failures at or before `throughMs`; returns how many. */
  forget(throughMs: number): Promise<number>;
}
