import { checkByteSize } from "../core/byte-size.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { LogFilters, LogRow } from "../store/logs.js";
import type { Store } from "../store/store.js";
import type { Caller } from "./caller.js";
import { decodeCursor, pageOf, type Page } from "./paging.js";
import type { LogEntry } from "../wire/logs.js";

const MAX_LOG_DETAILS_BYTES = 16 * 1024;

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
  constructor(private readonly store: Store) {}

  async write(caller: Caller, input: Omit<LogEntry, "id" | "agent_id" | "created_at">): Promise<LogEntry> {
    const details = JSON.stringify(input.details);
    checkByteSize(details, MAX_LOG_DETAILS_BYTES, "details exceed");
    return this.store.transaction(async (tx) => {
      const row = { id: newId(), ...input, details, agent_id: caller.agentId, created_at: now() };
      const pk = await this.store.logs.insert(tx, row);
      return toLogEntry({ ...row, pk });
    });
  }

  async list(filters: LogFilters & { limit: number; cursor?: string | undefined }): Promise<Page<LogEntry>> {
    const after = decodeCursor(filters.cursor, isPkCursor);
    const rows = await this.store.logs.list(this.store.reader, filters, after?.pk ?? null, filters.limit + 1);
    return pageOf(rows, filters.limit, toLogEntry, (row) => ({ pk: row.pk }));
  }

  prune(before: string): Promise<number> {
    return this.store.transaction((tx) => this.store.logs.prune(tx, before));
  }
}
