import type { AgentStore } from "./agents.js";
import type { ArchivistStore } from "./archivist.js";
import type { AuditReads } from "./audit.js";
import type { EventStore } from "./events.js";
import type { GraphStore } from "./graph.js";
import type { HandoffStore } from "./handoffs.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { LogStore } from "./logs.js";
import type { Maintenance } from "./maintenance.js";
import type { KeywordIndex, MemoryStore } from "./memory.js";
import type { MessageStore } from "./messages.js";
import type { OAuthStore } from "./oauth.js";
import type { ProjectStore } from "./projects.js";
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
}

/**
 * Runs at the end of every transaction, in the async context of the code that started it, just
 * before its writes are committed: throwing rolls them back and fails that transaction.
 */
export type TransactionGuard = (tx: Tx) => Promise<void>;

/** The store: per-aggregate repositories over one database, and the transactions that bind their writes. */
export interface Store {
  /** Reads of what is committed, outside any transaction. */
  readonly reader: Reader;
  /**
   * Runs `work` as one transaction: all of its writes commit together, or none do (it throws).
   * Transactions never nest: inside one, pass its `Tx` on (or use `tx.savepoint`); a nested call
   * waits for the transaction it is inside, for ever.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  addGuard(guard: TransactionGuard): void;
  /** False once closed: background work checks it before starting a step. */
  readonly open: boolean;
  /** Whether the database answers a trivial query. */
  ping(): Promise<boolean>;
  /** Waits for queued transactions, then releases the database. */
  close(): Promise<void>;

  readonly agents: AgentStore;
  readonly archivist: ArchivistStore;
  readonly audit: AuditReads;
  readonly events: EventStore;
  readonly graph: GraphStore;
  readonly handoffs: HandoffStore;
  readonly idempotency: IdempotencyStore;
  readonly keywords: KeywordIndex;
  readonly logs: LogStore;
  readonly maintenance: Maintenance;
  readonly memory: MemoryStore;
  readonly messages: MessageStore;
  readonly oauth: OAuthStore;
  readonly projects: ProjectStore;
  readonly tasks: TaskStore;
  readonly transfer: TransferStore;
  readonly uiSessions: UiSessionStore;
  readonly vectors: VectorIndex;
}

