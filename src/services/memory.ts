import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, AppError, forbidden, invalid, notFound } from "../core/errors.js";
import { newId, parseIdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import { getAgentRow } from "../store/agents.js";
import type { Db } from "../store/db.js";
import {
  expiredMemory,
  findLiveMemory,
  insertMemory,
  listDirectives,
  kindRank,
  listMemory,
  memoryByPk,
  mergedInto,
  memoryDelta,
  patchMemory,
  replaceTags,
  visibleMemoryIds,
  type MemoryFilters,
  type MemoryOrder,
  type MemoryPatch,
  type MemoryRow,
  type MemoryType,
  type Scope,
} from "../store/memory.js";
import { deleteVector, getVectors, updateVectorMeta } from "../store/vectors.js";
import type { Viewer } from "../store/visibility.js";
import type { EventBus } from "../events/bus.js";
import { viewerOf, type Caller } from "./caller.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import { OverlapFinder, type SimilarEntry } from "./memory-overlap.js";
import { contentKey, toEntry, toTombstone, vectorMetaOf, type MemoryEntry, type Tombstone, round6 } from "./memory-records.js";
import { decodeCursor, isKeyset, isRankedKeyset, pageOf, type Page } from "./paging.js";
import { checkProjectWrite } from "./projects.js";
import type { ReadRecorder } from "./reads.js";

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
}


export type WriteResult =
  | { created: true; entry: MemoryEntry & { similar: SimilarEntry[] } }
  | { created: false; entry: MemoryEntry & { duplicate_of: string; similarity: number } };

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
}

export interface BulkDeleteResult {
  deleted: string[];
  skipped: { id: string; reason: string }[];
}

const DIRECTIVE_DENIED = "directive writes require elevated permission";
const DIRECTIVE_LIMIT = 1000;

export interface NewEntryFields {
  type: MemoryType;
  project: string | null;
  scope: Scope;
  content: string;
  confidence: number;
  parents: string[];
  tags: string[];
  expiresAt: string | null;
  version?: number;
}

/** A row for a new entry by `agentId`, created and updated `at`. */
export function newMemoryRow(agentId: string, fields: NewEntryFields, at: string): Omit<MemoryRow, "pk"> {
  return {
    id: newId(),
    type: fields.type,
    agent_id: agentId,
    project: fields.project,
    scope: fields.scope,
    content: fields.content,
    content_key: contentKey(fields.content),
    confidence: fields.confidence,
    parents: JSON.stringify(fields.parents),
    tags: JSON.stringify(fields.tags),
    headline: null,
    created_at: at,
    updated_at: at,
    version: fields.version ?? 1,
    expires_at: fields.expiresAt,
    read_count: 0,
    distinct_readers: 0,
    reinforcement_count: 0,
    last_reinforced_at: null,
    superseded_by: null,
    embedding_model: null,
    deleted_at: null,
  };
}

export class MemoryService {
  private readonly overlap: OverlapFinder;

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly embeddings: MemoryEmbeddings,
    private readonly reads: ReadRecorder,
  ) {
    this.overlap = new OverlapFinder(db, config);
  }

  private checkContentSize(content: string): void {
    checkByteSize(content, this.config.MAX_CONTENT_BYTES, "content exceeds");
  }

  private checkFutureExpiry(expiresAt: string | null | undefined): void {
    if (expiresAt && expiresAt <= now()) throw invalid("expires_at", "must be in the future");
  }

  /** A live entry the caller can see, by full id or unique prefix; anything else is 404. */
  resolve(viewer: Viewer, ref: string): MemoryRow {
    const parsed = parseIdRef(ref);
    const rows = findLiveMemory(this.db, viewer, now(), parsed.kind === "full" ? { id: parsed.id } : { prefix: parsed.prefix });
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound("memory entry");
    return row;
  }

  async write(caller: Caller, input: WriteInput): Promise<WriteResult> {
    this.checkContentSize(input.content);
    const type = input.type ?? "memory";
    if (type === "compiled") throw invalid("type", "compiled entries are written by the compile routes only");
    if (type === "directive" && !this.config.DIRECTIVE_WRITERS.includes(caller.agentId)) throw forbidden(DIRECTIVE_DENIED);
    const scope = input.scope ?? "project";
    const project =
      input.project === undefined ? (getAgentRow(this.db, caller.agentId)?.current_project ?? null) : input.project;
    checkProjectWrite(this.db, caller, project);
    this.checkFutureExpiry(input.expires_at);
    const viewer = viewerOf(caller);
    const parents = [...new Set(input.parents ?? [])];
    if (parents.length > 0) {
      const found = visibleMemoryIds(this.db, viewer, parents);
      parents.forEach((id, index) => {
        if (!found.has(id)) throw invalid(`parents.${index}`, "no such entry");
      });
    }
    const tags = [...new Set(input.tags ?? [])];
    const confidence = type === "directive" ? 1 : (input.confidence ?? 1);
    const key = contentKey(input.content);
    const vector = await this.embeddings.embedForWrite(input.content);

    // Everything from the duplicate check to the insert is one synchronous transaction, so two
    // identical writes racing each other cannot both be inserted.
    return this.db.writeSoon((): WriteResult => {
      const at = now();
      const dupKey = { type, project, scope, agentId: caller.agentId, contentKey: key };
      const exact = input.allow_duplicate ? null : this.overlap.exactDuplicate(dupKey, vector, at);
      if (exact) return { created: false, entry: this.reinforce(caller, exact.row, exact.similarity, at) };
      const near = vector ? this.overlap.neighbourhood(viewer, vector, at) : null;
      const duplicate = input.allow_duplicate || !near ? null : this.overlap.nearDuplicate(dupKey, input.content, near, at);
      if (duplicate) return { created: false, entry: this.reinforce(caller, duplicate.row, duplicate.similarity, at) };
      const row = newMemoryRow(caller.agentId, { type, project, scope, content: input.content, confidence, parents, tags, expiresAt: input.expires_at ?? null }, at);
      const pk = this.insert(caller, row, tags, vector);
      const similar = near ? this.overlap.similarAmong(near) : [];
      return { created: true, entry: { ...toEntry({ ...row, pk }), similar } };
    });
  }

  private reinforce(
    caller: Caller,
    row: MemoryRow,
    similarity: number,
    at: string,
  ): MemoryEntry & { duplicate_of: string; similarity: number } {
    const confidence = row.type === "directive" ? row.confidence : round6(row.confidence + 0.2 * (1 - row.confidence));
    const patch = { confidence, last_reinforced_at: at, reinforcement_count: row.reinforcement_count + 1 };
    patchMemory(this.db, row.pk, patch);
    const updated = { ...row, ...patch };
    if (row.embedding_model !== null) updateVectorMeta(this.db, row.pk, vectorMetaOf(updated));
    this.emitChange("memory.updated", caller.agentId, updated, { reason: "reinforced" });
    return { ...toEntry(updated), duplicate_of: row.id, similarity };
  }

  /**
   * Inside the caller's transaction: stores a new entry with its vector (when there is one) and
   * announces it. Returns its row key.
   */
  insert(caller: Caller, row: Omit<MemoryRow, "pk">, tags: string[], vector: Float32Array | null): number {
    const pk = insertMemory(this.db, row, tags);
    if (vector) row.embedding_model = this.embeddings.store(pk, vector, row);
    this.emitChange("memory.written", caller.agentId, row, {});
    return pk;
  }

  emitChange(
    type: "memory.written" | "memory.updated" | "memory.deleted",
    actor: string,
    row: Pick<MemoryRow, "id" | "type" | "project" | "scope" | "version" | "agent_id">,
    extra: Record<string, unknown>,
  ): void {
    this.bus.emit({
      type,
      agentId: actor,
      project: row.project,
      privateTo: row.scope === "agent" ? row.agent_id : null,
      payload: { memory_id: row.id, type: row.type, project: row.project, scope: row.scope, version: row.version, ...extra },
    });
  }

  /**
   * One entry; a read by anyone but its author or the archivist is counted. An entry the caller
   * could see that was merged away answers 404 naming `superseded_by`, so an old id (in a handoff,
   * a message, a task) still leads to what it became.
   */
  get(caller: Caller, ref: string, options: { includeEmbedding?: boolean | undefined; context?: string | undefined } = {}): MemoryEntry {
    let row: MemoryRow;
    try {
      row = this.resolve(viewerOf(caller), ref);
    } catch (error) {
      const parsed = parseIdRef(ref);
      const merged = error instanceof AppError && error.code === "NOT_FOUND" && parsed.kind === "full" ? mergedInto(this.db, viewerOf(caller), parsed.id) : null;
      if (merged === null) throw error;
      throw new AppError("NOT_FOUND", `memory entry not found: it was merged into ${merged}`, { extra: { superseded_by: merged } });
    }
    if (caller.agentId !== row.agent_id && caller.role !== "archivist") {
      this.reads.recordNow([{ pk: row.pk, agentId: caller.agentId, at: now(), context: options.context ?? null }]);
      row = memoryByPk(this.db, row.pk) ?? row;
    }
    return toEntry(row, options.includeEmbedding ? getVectors(this.db, [row.pk]).get(row.pk) : undefined);
  }

  list(caller: Caller, input: ListInput): Page<MemoryEntry> {
    const order = input.order ?? "recent";
    const after = decodeCursor(input.cursor, order === "kind" ? isRankedKeyset : isKeyset);
    const rows = listMemory(this.db, viewerOf(caller), now(), input, after, input.limit + 1, order);
    const vectors = input.includeEmbedding ? getVectors(this.db, rows.map((row) => row.pk)) : undefined;
    const keyOf = (row: MemoryRow) => (order === "kind" ? { rank: kindRank(row.type), at: row.updated_at, pk: row.pk } : { at: row.updated_at, pk: row.pk });
    return pageOf(rows, input.limit, (row) => toEntry(row, vectors?.get(row.pk)), keyOf);
  }

  delta(
    caller: Caller,
    input: { since: string; agent?: string | undefined; project?: string | null | undefined; type?: MemoryType | undefined; cursor?: string | undefined; limit: number },
  ): Page<MemoryEntry | Tombstone> {
    const after = decodeCursor(input.cursor, isKeyset);
    const rows = memoryDelta(this.db, viewerOf(caller), input.since, input, after, input.limit + 1);
    const at = now();
    return pageOf(
      rows,
      input.limit,
      (row) => (row.deleted_at !== null || (row.expires_at !== null && row.expires_at <= at) ? toTombstone(row) : toEntry(row)),
      (row) => ({ at: row.updated_at, pk: row.pk }),
    );
  }

  directives(caller: Caller, project: string | undefined): MemoryEntry[] {
    return listDirectives(this.db, viewerOf(caller), now(), project, DIRECTIVE_LIMIT).map((row) => toEntry(row));
  }

  private checkMayChange(caller: Caller, row: MemoryRow): void {
    if (row.type === "directive") {
      if (caller.agentId !== row.agent_id) throw forbidden("only the author may change a directive");
      return;
    }
    if (caller.agentId !== row.agent_id && caller.role !== "archivist" && caller.role !== "owner") {
      throw forbidden("only the author, the archivist or an owner may change this entry");
    }
  }

  /** `expected`: the version the caller read (its If-Match); the change applies only to that version. */
  async update(caller: Caller, ref: string, patch: PatchInput, expected: number | undefined): Promise<MemoryEntry> {
    const viewer = viewerOf(caller);
    const current = this.resolve(viewer, ref);
    this.checkMayChange(caller, current);
    if (patch.content !== undefined) this.checkContentSize(patch.content);
    if (patch.type !== undefined && (patch.type === "directive") !== (current.type === "directive")) {
      throw invalid("type", "an entry cannot become or stop being a directive");
    }
    if (patch.type === "compiled" && current.type !== "compiled") throw invalid("type", "compiled entries are written by the compile routes only");
    if (patch.project !== undefined && patch.project !== current.project) checkProjectWrite(this.db, caller, patch.project);
    if (patch.expires_at !== undefined) this.checkFutureExpiry(patch.expires_at);
    const contentChanged = patch.content !== undefined && patch.content !== current.content;
    const vector = contentChanged && patch.content !== undefined ? await this.embeddings.embedForWrite(patch.content) : null;

    return this.db.write(() => {
      // Re-read inside the transaction: the entry may have changed while the content was embedded.
      const row = this.resolve(viewer, current.id);
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
      if (changed.length === 0) return toEntry(row);
      const at = now();
      if (changes.content !== undefined) changes.content_key = contentKey(changes.content);
      changes.version = row.version + 1;
      changes.updated_at = at;
      patchMemory(this.db, row.pk, changes);
      if (tags !== undefined) replaceTags(this.db, row.pk, tags);
      const updated: MemoryRow = { ...row, ...changes } as MemoryRow;
      if (changes.content !== undefined) {
        if (vector) updated.embedding_model = this.embeddings.store(row.pk, vector, updated);
        else {
          deleteVector(this.db, row.pk);
          updated.embedding_model = null;
          patchMemory(this.db, row.pk, { embedding_model: null });
        }
      } else if (row.embedding_model !== null) {
        updateVectorMeta(this.db, row.pk, vectorMetaOf(updated));
      }
      this.emitChange("memory.updated", caller.agentId, updated, { changed });
      return toEntry(updated);
    });
  }

  /**
   * Inside the caller's transaction: marks the entry deleted (replaced by `supersededBy`, when a
   * merge replaced it), drops its vectors, emits the event.
   */
  softDelete(caller: Caller, row: MemoryRow, reason: string, supersededBy: string | null = null): void {
    const at = now();
    patchMemory(this.db, row.pk, { deleted_at: at, updated_at: at, superseded_by: supersededBy ?? undefined });
    deleteVector(this.db, row.pk);
    this.emitChange("memory.deleted", caller.agentId, row, supersededBy === null ? { reason } : { reason, superseded_by: supersededBy });
  }

  remove(caller: Caller, ref: string): void {
    this.db.write(() => {
      const row = this.resolve(viewerOf(caller), ref);
      this.checkMayChange(caller, row);
      this.softDelete(caller, row, "deleted");
    });
  }

  removeMany(caller: Caller, refs: string[]): BulkDeleteResult {
    const viewer = viewerOf(caller);
    return this.db.write(() => {
      const result: BulkDeleteResult = { deleted: [], skipped: [] };
      for (const ref of new Set(refs)) {
        try {
          const row = this.resolve(viewer, ref);
          this.checkMayChange(caller, row);
          this.softDelete(caller, row, "deleted");
          result.deleted.push(row.id);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const reason = error.code === "NOT_FOUND" ? "not found" : error.code === "FORBIDDEN" ? "forbidden" : error.detail;
          result.skipped.push({ id: ref, reason: error.code === "VALIDATION_FAILED" ? "invalid id" : reason });
        }
      }
      return result;
    });
  }

  /** Archivist only (checked by the operation); leaves `version` and `updated_at` alone. */
  setHeadline(caller: Caller, ref: string, headline: string | null): MemoryEntry {
    return this.db.write(() => {
      const row = this.resolve(viewerOf(caller), ref);
      if (row.type === "directive") throw forbidden("directives are never modified by the archivist");
      if (row.headline === headline) return toEntry(row);
      patchMemory(this.db, row.pk, { headline });
      const updated = { ...row, headline };
      this.emitChange("memory.updated", caller.agentId, updated, { reason: "headline", changed: ["headline"] });
      return toEntry(updated);
    });
  }

  /** Soft-deletes entries whose `expires_at` has passed; returns how many. */
  sweepExpired(batch = 500): number {
    return this.db.write(() => {
      const rows = expiredMemory(this.db, now(), batch);
      for (const row of rows) this.softDelete({ agentId: row.agent_id, role: "agent" }, row, "expired");
      return rows.length;
    });
  }
}
