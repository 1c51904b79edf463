import type { EventRow } from "./events.js";
import type { MemoryRow } from "./memory.js";
import type { MessageRow } from "./messages.js";
import type { Reader } from "./store.js";

/** A message with its recipients (a JSON array), whoever may read it. */
export type MessageSnapshotRow = Pick<MessageRow, "id" | "sender" | "recipient" | "project" | "subject" | "body" | "reply_to" | "created_at"> & {
  recipients: string;
};

/**
 * Reads for the audit log: every event in commit order, and the resource each one is about, in
 * whatever state it is in now (live or deleted), regardless of who may see it.
 */
export interface AuditReads {
  eventsAfter(r: Reader, afterSeq: number, limit: number): Promise<EventRow[]>;
  eventSeqsThrough(r: Reader, throughSeq: number): Promise<number[]>;
  /** Seq and id of each retained event through `throughSeq`: after a restore, a seq alone names two events. */
  eventIdsThrough(r: Reader, throughSeq: number): Promise<{ seq: number; id: string }[]>;
  eventIdAt(r: Reader, seq: number): Promise<string | undefined>;
  memoryById(r: Reader, id: string): Promise<MemoryRow | undefined>;
  taskById(r: Reader, id: string): Promise<Record<string, unknown> | undefined>;
  messageById(r: Reader, id: string): Promise<MessageSnapshotRow | undefined>;
  projectById(r: Reader, id: string): Promise<Record<string, unknown> | undefined>;
  agentById(r: Reader, agentId: string): Promise<Record<string, unknown> | undefined>;
  handoffById(r: Reader, id: string): Promise<{ id: string; agent_id: string; summary: string; created_at: string } | undefined>;
}
