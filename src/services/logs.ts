import { checkByteSize } from "../core/byte-size.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { Db } from "../store/db.js";
import { insertLog, listLogs, pruneLogs, type LogFilters, type LogRow } from "../store/logs.js";
import type { Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";

export interface LogEntry {
  id: string;
  level: LogRow["level"];
  source: string;
  action: string;
  message: string;
  details: Record<string, unknown>;
  agent_id: string;
  created_at: string;
}

export const MAX_LOG_DETAILS_BYTES = 16 * 1024;

const toLogEntry = (row: LogRow): LogEntry => ({
  id: row.id,
  level: row.level,
  source: row.source,
  action: row.action,
  message: row.message,
  details: JSON.parse(row.details) as Record<string, unknown>,
  agent_id: row.agent_id,
  created_at: row.created_at,
});

const isPkCursor = (value: unknown): value is { pk: number } =>
  typeof value === "object" && value !== null && Number.isSafeInteger((value as { pk?: unknown }).pk);

/**
 * The archivist's operational log (and the owner's notes in it). Log lines are records, not
 * shared state: they emit no events and are pruned with the event log's retention.
 */
export class LogService {
  constructor(
    private readonly db: Db,
    private readonly checkFence: () => void,
  ) {}

  write(caller: Caller, input: Omit<LogEntry, "id" | "agent_id" | "created_at">): LogEntry {
    const details = JSON.stringify(input.details);
    checkByteSize(details, MAX_LOG_DETAILS_BYTES, "details exceed");
    return this.db.write(() => {
      this.checkFence();
      const row = { id: newId(), ...input, details, agent_id: caller.agentId, created_at: now() };
      const pk = insertLog(this.db, row);
      return toLogEntry({ ...row, pk });
    });
  }

  list(filters: LogFilters & { limit: number; cursor?: string | undefined }): Page<LogEntry> {
    const after = decodeCursor(filters.cursor, isPkCursor);
    const rows = listLogs(this.db, filters, after?.pk ?? null, filters.limit + 1);
    return pageOf(rows, filters.limit, toLogEntry, (row) => ({ pk: row.pk }));
  }

  prune(before: string): number {
    return this.db.write(() => pruneLogs(this.db, before));
  }
}
