import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

export type CaptureStatus = "pending" | "digested" | "dead";

export interface CaptureRow {
  pk: number;
  id: string;
  agent_id: string;
  project: string | null;
  session_id: string | null;
  host: string | null;
  /** Already redacted. */
  content: string;
  /** SHA-256 hex of `content`. */
  content_hash: string;
  bytes: number;
  redactions: number;
  status: CaptureStatus;
  attempts: number;
  last_error: string | null;
  /** JSON array of the entries a digest wrote. */
  memory_ids: string;
  created_at: string;
  expires_at: string;
  digested_at: string | null;
}

export const CAPTURE_ROW_COLUMNS = rowColumns<CaptureRow>("captures", {
  pk: true, id: true, agent_id: true, project: true, session_id: true, host: true, content: true, content_hash: true, bytes: true, redactions: true,
  status: true, attempts: true, last_error: true, memory_ids: true, created_at: true, expires_at: true, digested_at: true,
});

export type NewCaptureRow = Omit<CaptureRow, "pk" | "status" | "attempts" | "last_error" | "memory_ids" | "digested_at">;

/** Keyset position in a list of captures. */
export interface CaptureKey {
  at: string;
  pk: number;
}

/**
 * Captures: written by their author, read by the author and the archivist role only (the service
 * decides who asks), digested or given up on, then deleted by the sweeper.
 */
export interface CaptureStore {
  insert(tx: Tx, row: NewCaptureRow): Promise<number>;
  byId(r: Reader, id: string): Promise<CaptureRow | undefined>;
  /** By id, for a digest: read inside a transaction, held until it ends. */
  forDigest(tx: Tx, ids: string[]): Promise<CaptureRow[]>;
  /** The author's capture of the same content in the same session (null: none) since `sinceIso`. */
  duplicate(r: Reader, agentId: string, sessionId: string | null, contentHash: string, sinceIso: string): Promise<CaptureRow | undefined>;
  /** Pending (not digested, not dead, not expired) captures, oldest first; `project` undefined: every project. */
  pending(r: Reader, project: string | null | undefined, nowIso: string, after: CaptureKey | null, limit: number): Promise<CaptureRow[]>;
  /** The author's own captures, newest first. */
  byAuthor(r: Reader, agentId: string, project: string | null | undefined, after: CaptureKey | null, limit: number): Promise<CaptureRow[]>;
  /** Pending → digested with the entries written; false when it was not pending. */
  markDigested(tx: Tx, pk: number, memoryIds: string[], atIso: string): Promise<boolean>;
  /** One more failed attempt; at `maxAttempts` the capture is dead. Returns its status after, or null when it was not pending. */
  markFailed(tx: Tx, pk: number, error: string, maxAttempts: number): Promise<CaptureStatus | null>;
  /** Deletes captures past their expiry, and digested ones digested at or before `digestedThroughIso`; returns how many. */
  deleteSpent(tx: Tx, nowIso: string, digestedThroughIso: string): Promise<number>;
  deleteProject(tx: Tx, project: string): Promise<number>;
}
