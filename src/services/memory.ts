import { isCopy, refuseCopyChange } from "./mesh/copies.js";
import type { Config } from "../core/config.js";
import { AppError, forbidden, invalid, notFound } from "../core/errors.js";
import { parseIdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import { kindRank, type MemoryFilters, type MemoryOrder, type MemoryPatch, type MemoryRow } from "../store/memory.js";
import type { Store, Tx } from "../store/store.js";
import { checkProjectWrite } from "./access.js";
import { clearStaleMark } from "./compile/staleness.js";
import { viewpointOf, type Caller } from "./caller.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import { redactEntryFields } from "./memory-redaction.js";
import { OverlapFinder } from "./memory-overlap.js";
import { writeAhead } from "./memory-write-ahead.js";
import { contentKey, leavesCodeOut, newMemoryRow, toChange, toEntry, vectorMetaOf, round6 } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import { decodeCursor, isKeyset, isRankedKeyset, pageOf, type Page } from "./paging.js";
import type { Quotas } from "./quotas.js";
import type { ReadRecorder } from "./reads.js";
import type { BulkDeleteResult, CaptureSource, EntrySource, FeedSource, MemoryChange, MemoryEntry, MemoryType, Scope, SimilarEntry } from "../wire/memory.js";
import { locks } from "./locks.js";

export interface WriteInput {
  content: string;
  type?: MemoryType | undefined;
  scope?: Scope | undefined;
  project?: string | null | undefined;
  tags?: string[] | undefined;
  confidence?: number | undefined;
  parents?: string[] | undefined;
  expires_at?: string | null | undefined;
  allow_duplicate?: boolean | undefined;
  /** Only the archivist sets it, for a fact distilled from a capture (CONTRACT §13). */
  source?: CaptureSource | undefined;
}

/** `redactions`: secrets taken out of the content and tags before they were stored, when there were any. */
export type WriteResult =
  | { created: true; entry: MemoryEntry & { similar: SimilarEntry[]; redactions?: number } }
  | { created: false; entry: MemoryEntry & { duplicate_of: string; similarity: number; redactions?: number } };

export interface PatchInput {
  content?: string | undefined;
  tags?: string[] | undefined;
  confidence?: number | undefined;
  type?: MemoryType | undefined;
  scope?: Scope | undefined;
  project?: string | null | undefined;
  expires_at?: string | null | undefined;
}

export interface ListInput extends MemoryFilters {
  order?: MemoryOrder | undefined;
  cursor?: string | undefined;
  limit: number;
  includeEmbedding?: boolean | undefined;
  /** Also compiled entries, which a listing leaves out unless its type or provenance names them. */
  includeCode?: boolean | undefined;
}

interface WriteOptions {
  /** Who waits for the vector: a write's author (default), or nobody in particular (bulk work). */
  lane?: "write" | "bulk";
  /** Runs in the write's transaction with the id of the entry written or reinforced. */
  recorded?: (tx: Tx, entryId: string) => Promise<void>;
}

const DIRECTIVE_DENIED = "directive writes require elevated permission";
const DIRECTIVE_LIMIT = 1000;

/**
 * The share of the gap to full confidence that a duplicate write closes (CONTRACT §3:
 * `confidence += 0.2·(1−confidence)`). Each agreeing write counts, but for less the surer the
 * entry already is: confidence climbs towards 1 ever more slowly, so a few repeats do not make an
 * ordinary entry as certain as a directive (whose confidence is fixed at 1).
 */
const REINFORCEMENT_SHARE = 0.2;

/** Why `removeMany` skipped an id, in the words of its result. */
function skipReason(error: AppError): string {
  switch (error.code) {
    case "NOT_FOUND":
      return "not found";
    case "FORBIDDEN":
      return "forbidden";
    case "VALIDATION_FAILED":
      return "invalid id";
    default:
      return error.detail;
  }
}

/**
 * The memory use cases: who may write, read, change and delete which entries, and the rules of
 * each (duplicates reinforce, versions guard changes). Entries are created and deleted through
 * MemoryWrites, which every writer shares.
 */
export class MemoryService {
  private readonly overlap: OverlapFinder;

  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly config: Config,
    private readonly embeddings: MemoryEmbeddings,
    private readonly reads: ReadRecorder,
    private readonly quotas: Quotas,
  ) {
    this.overlap = new OverlapFinder(store, config);
  }

  private checkFutureExpiry(expiresAt: string | null | undefined): void {
    if (expiresAt && expiresAt <= now()) throw invalid("expires_at", "must be in the future");
  }

  async write(caller: Caller, input: WriteInput): Promise<WriteResult> {
    if (input.source) return this.writeFromCapture(caller, input, input.source);
    return this.writeAs(caller, input, null);
  }

  /**
   * A fact the archivist distilled from a capture is its author's entry, written as the author
   * would write it (their projects, their view for parents and duplicates), into the capture's
   * project, or the author's private scope when the capture has none. Never a directive, and
   * never a secret: its content and tags are redacted as the capture was.
   */
  private async writeFromCapture(caller: Caller, input: WriteInput, source: CaptureSource): Promise<WriteResult> {
    if (caller.role !== "archivist") throw forbidden("only the archivist writes entries from a capture");
    if ((input.type ?? "memory") !== "memory") throw invalid("type", "an entry from a capture is of type memory");
    const reader = this.store.reader;
    const capture = await this.store.captures.byId(reader, source.capture_id);
    if (!capture || capture.status !== "pending" || capture.expires_at <= now()) throw notFound("capture");
    if (input.project !== undefined && input.project !== capture.project) {
      throw invalid("project", "an entry from a capture goes into the capture's project");
    }
    const author = await this.store.agents.get(reader, capture.agent_id);
    if (!author) throw notFound("capture");
    const scope = capture.project === null ? "agent" : (input.scope ?? "project");
    // The capture was redacted, but a model can still echo or rebuild a secret: what it writes is
    // redacted again, as every entry is.
    return this.writeAs({ agentId: author.agent_id, role: author.role }, { ...input, project: capture.project, scope }, source);
  }

  /**
   * An item of a subscribed feed, written by the subscriber as the subscriber would write it (its
   * projects, its duplicates), embedded behind queries and writes. `recorded` runs in the write's
   * transaction with the entry the item became (a new one, or the duplicate it reinforced), so the
   * item is marked seen exactly when its entry exists.
   */
  writeFromFeed(subscriber: Caller, input: WriteInput, source: FeedSource, recorded: (tx: Tx, entryId: string) => Promise<void>): Promise<WriteResult> {
    return this.writeAs(subscriber, input, source, { lane: "bulk", recorded });
  }

  private async writeAs(caller: Caller, written: WriteInput, source: EntrySource | null, options: WriteOptions = {}): Promise<WriteResult> {
    const { fields: input, redactions } = await redactEntryFields(written, this.config.MAX_CONTENT_BYTES);
    const result = await this.writeClean(caller, input, source, options);
    if (redactions === 0) return result;
    return result.created ? { created: true, entry: { ...result.entry, redactions } } : { created: false, entry: { ...result.entry, redactions } };
  }

  private async writeClean(caller: Caller, input: WriteInput, source: EntrySource | null, options: WriteOptions): Promise<WriteResult> {
    const type = input.type ?? "memory";
    if (type === "compiled") throw invalid("type", "compiled entries are written by the compile routes only");
    if (type === "directive" && !this.config.DIRECTIVE_WRITERS.includes(caller.agentId)) throw forbidden(DIRECTIVE_DENIED);
    const scope = input.scope ?? "project";
    const reader = this.store.reader;
    const project =
      input.project === undefined ? ((await this.store.agents.get(reader, caller.agentId))?.current_project ?? null) : input.project;
    await checkProjectWrite(this.store.projects, reader, caller, project);
    this.checkFutureExpiry(input.expires_at);
    const viewpoint = viewpointOf(caller);
    const parents = [...new Set(input.parents ?? [])];
    if (parents.length > 0) {
      const found = await this.store.memory.visibleIds(reader, viewpoint, parents);
      parents.forEach((id, index) => {
        if (!found.has(id)) throw invalid(`parents.${index}`, "no such entry");
      });
    }
    const tags = [...new Set(input.tags ?? [])];
    const confidence = type === "directive" ? 1 : (input.confidence ?? 1);
    const key = contentKey(input.content);
    // Told now, thrown only if the write turns out to add an entry (a duplicate reinforces one instead).
    const full = await this.quotas.roomRefusal(reader, project, 1);
    const vector = options.lane === "bulk" ? await this.embeddings.embedForBulk(input.content) : await this.embeddings.embedForWrite(input.content);
    const dupKey = { type, project, scope, agentId: caller.agentId, contentKey: key };
    const survey = await this.overlap.survey(reader, viewpoint, dupKey, vector, now(), !input.allow_duplicate);
    const fields = { type, project, scope, content: input.content, confidence, parents, tags, expiresAt: input.expires_at ?? null, source };
    // The survey found no exact duplicate, there is room, and no parent row whose key lock could
    // meet a reinforcement's row lock while this write waits for the project's lock.
    if (vector && survey.near && !full && parents.length === 0) {
      const ahead = await writeAhead(this.store, this.writes, this.overlap, { caller, viewpoint, dupKey, vector, survey, fields, check: !input.allow_duplicate, recorded: options.recorded });
      if (ahead) return ahead;
    }

    // Everything from the duplicate check to the insert is one transaction, and two writes to one
    // project never overlap in it: on SQLite transactions run one after another anyway, on
    // PostgreSQL the project's lock makes the second of two identical writes racing each other
    // wait, then see the first's insert. They cannot both be inserted. The scans ran before it
    // (the survey); in it, only what committed since is looked at.
    return this.store.transaction(async (tx): Promise<WriteResult> => {
      await tx.lock(locks.memoryWrite(project));
      const at = now();
      const exact = input.allow_duplicate ? null : await this.overlap.exactDuplicate(tx, dupKey, vector, at);
      const reinforced = exact && (await this.reinforce(tx, caller, exact.row, exact.similarity, at));
      if (reinforced) {
        await options.recorded?.(tx, reinforced.id);
        return { created: false, entry: reinforced };
      }
      const near = vector ? await this.overlap.catchUp(tx, survey, viewpoint, dupKey, vector, at) : null;
      const duplicate = input.allow_duplicate || !near ? null : await this.overlap.nearDuplicate(tx, dupKey, input.content, near, at);
      const again = duplicate && (await this.reinforce(tx, caller, duplicate.row, duplicate.similarity, at));
      if (again) {
        await options.recorded?.(tx, again.id);
        return { created: false, entry: again };
      }
      if (full) throw full;
      const row = newMemoryRow(caller.agentId, fields, at);
      const created = await this.writes.create(tx, caller.agentId, row, tags, vector);
      await options.recorded?.(tx, created.id);
      const similar = near ? this.overlap.similarAmong(near) : [];
      return { created: true, entry: { ...toEntry(created), similar } };
    });
  }

  /**
   * Reinforces the duplicate found, from its row as it is now: read again, locked, since the
   * duplicate checks read without locks and a PATCH, decay or delete of it may have committed
   * since. Null when it has changed (a new version, deleted): it is no longer the entry that was
   * matched, and the write goes ahead as a new entry.
   */
  private async reinforce(
    tx: Tx,
    caller: Caller,
    found: MemoryRow,
    similarity: number,
    at: string,
  ): Promise<(MemoryEntry & { duplicate_of: string; similarity: number }) | null> {
    const row = await this.store.memory.byPk(tx, found.pk);
    // A peer's copy is never changed here, not even reinforced: the write becomes an entry of its own.
    if (!row || row.deleted_at !== null || row.version !== found.version || isCopy(row)) return null;
    const confidence = row.type === "directive" ? row.confidence : round6(row.confidence + REINFORCEMENT_SHARE * (1 - row.confidence));
    const patch = { confidence, last_reinforced_at: at, reinforcement_count: row.reinforcement_count + 1 };
    await this.store.memory.patch(tx, row.pk, patch);
    const updated = { ...row, ...patch };
    if (row.embedding_model !== null) await this.store.vectors.updateMeta(tx, row.pk, vectorMetaOf(updated));
    await this.writes.emitChange(tx, "memory.updated", caller.agentId, updated, { reason: "reinforced" });
    return { ...toEntry(updated), duplicate_of: row.id, similarity };
  }

  /**
   * One entry; a read by anyone but its author or the archivist is counted. An entry the caller
   * could see that was merged away answers 404 naming `superseded_by`, so an old id (in a handoff,
   * a message, a task) still leads to what it became.
   */
  async get(
    caller: Caller,
    ref: string,
    options: { includeEmbedding?: boolean | undefined; context?: string | undefined } = {},
  ): Promise<MemoryEntry> {
    const reader = this.store.reader;
    const viewpoint = viewpointOf(caller);
    const parsed = parseIdRef(ref);
    let row = await this.writes.find(reader, viewpoint, parsed);
    if (!row) {
      const merged = "id" in parsed ? await this.store.memory.mergedInto(reader, viewpoint, parsed.id) : null;
      if (merged !== null) throw new AppError("NOT_FOUND", `memory entry not found: it was merged into ${merged}`, { extra: { superseded_by: merged } });
      throw notFound("memory entry");
    }
    if (caller.agentId !== row.agent_id && caller.role !== "archivist") {
      await this.reads.recordNow([{ pk: row.pk, agentId: caller.agentId, at: now(), context: options.context ?? null }]);
      row = (await this.store.memory.byPk(reader, row.pk)) ?? row;
    }
    return toEntry(row, options.includeEmbedding ? (await this.store.vectors.get(reader, [row.pk])).get(row.pk) : undefined);
  }

  async list(caller: Caller, input: ListInput): Promise<Page<MemoryEntry>> {
    const order = input.order ?? "recent";
    const after = decodeCursor(input.cursor, order === "kind" ? isRankedKeyset : isKeyset);
    const reader = this.store.reader;
    const filters = { ...input, excludeCompiled: leavesCodeOut(input) };
    const rows = await this.store.memory.list(reader, viewpointOf(caller), now(), filters, after, input.limit + 1, order);
    const vectors = input.includeEmbedding ? await this.store.vectors.get(reader, rows.map((row) => row.pk)) : undefined;
    const keyOf = (row: MemoryRow) => (order === "kind" ? { rank: kindRank(row.type), at: row.updated_at, pk: row.pk } : { at: row.updated_at, pk: row.pk });
    return pageOf(rows, input.limit, (row) => toEntry(row, vectors?.get(row.pk)), keyOf);
  }

  async delta(
    caller: Caller,
    input: { since: string; agent?: string | undefined; project?: string | null | undefined; type?: MemoryType | undefined; cursor?: string | undefined; limit: number },
  ): Promise<Page<MemoryChange>> {
    const after = decodeCursor(input.cursor, isKeyset);
    const rows = await this.store.memory.delta(this.store.reader, viewpointOf(caller), input.since, input, after, input.limit + 1);
    const at = now();
    return pageOf(rows, input.limit, (row) => toChange(row, at), (row) => ({ at: row.updated_at, pk: row.pk }));
  }

  async directives(caller: Caller, project: string | undefined): Promise<MemoryEntry[]> {
    const rows = await this.store.memory.directives(this.store.reader, viewpointOf(caller), now(), project, DIRECTIVE_LIMIT);
    return rows.map((row) => toEntry(row));
  }

  private checkMayChange(caller: Caller, row: MemoryRow): void {
    refuseCopyChange(row);
    if (row.type === "directive") {
      if (caller.agentId !== row.agent_id) throw forbidden("only the author may change a directive");
      return;
    }
    if (caller.agentId !== row.agent_id && caller.role !== "archivist" && caller.role !== "owner") {
      throw forbidden("only the author, the archivist or an owner may change this entry");
    }
  }

  /** `expected`: the version the caller read (its If-Match); the change applies only to that version. */
  async update(caller: Caller, ref: string, asked: PatchInput, expected: number | undefined): Promise<MemoryEntry> {
    const viewpoint = viewpointOf(caller);
    const current = await this.writes.resolve(this.store.reader, viewpoint, ref);
    this.checkMayChange(caller, current);
    const { fields: patch } = await redactEntryFields(asked, this.config.MAX_CONTENT_BYTES);
    if (patch.type !== undefined && (patch.type === "directive") !== (current.type === "directive")) {
      throw invalid("type", "an entry cannot become or stop being a directive");
    }
    const changes = Object.values(patch).some((value) => value !== undefined);
    if (patch.type === "compiled" && current.type !== "compiled") throw invalid("type", "compiled entries are written by the compile routes only");
    if (current.type === "compiled" && changes) throw invalid("id", "a compiled entry changes only when compile finds its code changed", "compiled entries are written by the compile routes only");
    if (patch.project !== undefined && patch.project !== current.project) {
      await checkProjectWrite(this.store.projects, this.store.reader, caller, patch.project);
      const full = await this.quotas.roomRefusal(this.store.reader, patch.project, 1);
      if (full) throw full;
    }
    if (patch.expires_at !== undefined) this.checkFutureExpiry(patch.expires_at);
    const contentChanged = patch.content !== undefined && patch.content !== current.content;
    const vector = contentChanged && patch.content !== undefined ? await this.embeddings.embedForWrite(patch.content) : null;

    return this.store.transaction(async (tx) => {
      // Re-read inside the transaction: the entry may have changed while the content was embedded.
      const row = await this.writes.resolve(tx, viewpoint, current.id);
      if (expected !== undefined && expected !== row.version) {
        throw new AppError("PRECONDITION_FAILED", "version does not match if-match", { extra: { current_version: row.version } });
      }
      const changes: MemoryPatch = {};
      const changed: string[] = [];
      const tags = patch.tags === undefined ? undefined : [...new Set(patch.tags)];
      const candidate: MemoryPatch = {
        content: patch.content,
        tags: tags === undefined ? undefined : JSON.stringify(tags),
        confidence: patch.confidence,
        type: patch.type,
        scope: patch.scope,
        project: patch.project,
        expires_at: patch.expires_at,
      };
      for (const [field, value] of Object.entries(candidate) as [keyof MemoryPatch, unknown][]) {
        if (value !== undefined && value !== row[field]) {
          (changes as Record<string, unknown>)[field] = value;
          changed.push(field);
        }
      }
      // The author's own update says the entry still holds for the code as it is now (§18), even
      // one that re-saves what is there: that is how an author confirms a stale entry.
      const confirms = row.stale_since !== null && caller.agentId === row.agent_id && asked;
      if (changed.length === 0) return toEntry(confirms ? await clearStaleMark(this.store, this.writes, tx, caller.agentId, row) : row);
      if (confirms) {
        changes.stale_since = null;
        changes.stale_reason = null;
        changed.push("stale_since");
      }
      const updated = await this.writes.update(tx, caller.agentId, row, changes, changed, tags, vector);
      return toEntry(updated);
    });
  }

  async remove(caller: Caller, ref: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await this.writes.resolve(tx, viewpointOf(caller), ref);
      this.checkMayChange(caller, row);
      await this.writes.softDelete(tx, caller.agentId, row, "deleted");
    });
  }

  async removeMany(caller: Caller, refs: string[]): Promise<BulkDeleteResult> {
    const viewpoint = viewpointOf(caller);
    return this.store.transaction(async (tx) => {
      const result: BulkDeleteResult = { deleted: [], skipped: [] };
      // One deletion, one moment: every tombstone of it carries the same time, on either backend.
      const at = now();
      for (const ref of new Set(refs)) {
        try {
          const row = await this.writes.resolve(tx, viewpoint, ref);
          this.checkMayChange(caller, row);
          await this.writes.softDelete(tx, caller.agentId, row, "deleted", null, at);
          result.deleted.push(row.id);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          result.skipped.push({ id: ref, reason: skipReason(error) });
        }
      }
      return result;
    });
  }

  /** Archivist only (checked by the operation); leaves `version` and `updated_at` alone. */
  async setHeadline(caller: Caller, ref: string, headline: string | null): Promise<MemoryEntry> {
    return this.store.transaction(async (tx) => {
      const row = await this.writes.resolve(tx, viewpointOf(caller), ref);
      if (row.type === "directive") throw forbidden("directives are never modified by the archivist");
      refuseCopyChange(row);
      if (row.headline === headline) return toEntry(row);
      await this.store.memory.patch(tx, row.pk, { headline });
      const updated = { ...row, headline };
      await this.writes.emitChange(tx, "memory.updated", caller.agentId, updated, { reason: "headline", changed: ["headline"] });
      return toEntry(updated);
    });
  }

  /**
   * Soft-deletes entries whose `expires_at` has passed; returns how many. Nobody acts here, so each
   * `memory.deleted` is attributed to the entry's author (docs/decisions.md), said by passing the
   * author as the actor.
   */
  async sweepExpired(batch = 500): Promise<number> {
    return this.store.transaction(async (tx) => {
      const rows = await this.store.memory.expired(tx, now(), batch);
      for (const row of rows) await this.writes.softDelete(tx, row.agent_id, row, "expired");
      return rows.length;
    });
  }
}
