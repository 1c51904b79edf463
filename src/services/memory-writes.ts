import { ambiguousIdPrefix, notFound } from "../core/errors.js";
import { parseIdRef, type IdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import type { BusEvent, EventBus } from "../events/bus.js";
import type { MemoryPatch, MemoryRow, UnsavedMemoryRow } from "../store/memory.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { Viewpoint } from "../store/visibility.js";
import type { ServerEventPayloads } from "../wire/events.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import { contentKey, vectorMetaOf } from "./memory-records.js";

type MemoryEventType = "memory.written" | "memory.updated" | "memory.deleted";

/** What a memory event's payload says beyond the entry's own fields, by event type. */
type MemoryEventExtra<T extends MemoryEventType> = Omit<ServerEventPayloads[T], "memory_id" | "type" | "project" | "scope" | "version" | "source_kind">;

/** `emitChange`'s arguments after `tx`: each event type with its own payload fields, so the compiler checks them. */
type MemoryEventArgs = {
  [T in MemoryEventType]: [type: T, actor: string, row: Pick<MemoryRow, "id" | "type" | "project" | "scope" | "version" | "agent_id" | "source_kind">, extra: MemoryEventExtra<T>];
}[MemoryEventType];

export type DeleteReason = ServerEventPayloads["memory.deleted"]["reason"];

/**
 * Where a new entry came from when it was not written here, as its `memory.written` event says
 * (`reason`); an entry written here has none. Feeds and mesh replication add theirs.
 */
export type Provenance = NonNullable<ServerEventPayloads["memory.written"]["reason"]>;

/** Whether a row brings a past (an imported or replicated entry's) that the insert leaves at a new entry's defaults. */
const hasHistory = (row: UnsavedMemoryRow): boolean =>
  row.headline !== null || row.last_reinforced_at !== null || row.reinforcement_count > 0 || row.superseded_by !== null || row.stale_since !== null;

/**
 * The one way entries are created and deleted, inside the caller's transaction, with their vectors
 * and their events: the write use case, curation's merges, project clears and imports all go
 * through it (DESIGN §4a), so an entry never exists without its `memory.written` or goes without
 * its `memory.deleted`, and every `memory.*` event is emitted here. What differs between those
 * writers (the duplicate check, who may write what, the provenance) is theirs to decide before
 * they call it.
 */
export class MemoryWrites {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly embeddings: MemoryEmbeddings,
    /** This instance's id: the origin of every entry written here, named in its merkle leaf. */
    readonly localOrigin: string,
  ) {}

  /** A live entry `viewpoint` can see, by full id or unique prefix; undefined when there is none (400 when the prefix is ambiguous). */
  async find(r: Reader, viewpoint: Viewpoint, ref: IdRef): Promise<MemoryRow | undefined> {
    const rows = await this.store.memory.findLive(r, viewpoint, now(), ref);
    if (rows.length > 1) throw ambiguousIdPrefix();
    return rows[0];
  }

  /** A live entry `viewpoint` can see, by full id or unique prefix; anything else is 404. */
  async resolve(r: Reader, viewpoint: Viewpoint, ref: string): Promise<MemoryRow> {
    const row = await this.find(r, viewpoint, parseIdRef(ref));
    if (!row) throw notFound("memory entry");
    return row;
  }

  /**
   * Stores a new entry whole, with its tags and its vector (when there is one; otherwise the
   * backfill embeds it later), and announces it as `actor`'s. An entry that arrives with a past (an
   * import keeps its headline, reinforcements, reads and `superseded_by`) keeps it. Returns the
   * stored row; `row` itself is left as it was.
   */
  async create(
    tx: Tx,
    actor: string,
    row: UnsavedMemoryRow,
    tags: string[],
    vector: Float32Array | null,
    provenance?: Provenance,
  ): Promise<MemoryRow> {
    return this.announce(tx, actor, await this.insert(tx, row, tags, vector), provenance);
  }

  /**
   * `create` without the event: the entry stored, not yet announced. A caller that inserts before it
   * decides whether to keep the entry (a write inserting ahead of its project's lock) announces it,
   * or rolls the transaction back; its `change_seq` stays 0 until then.
   */
  async insert(tx: Tx, unsaved: UnsavedMemoryRow, tags: string[], vector: Float32Array | null): Promise<MemoryRow> {
    const row = vector ? { ...unsaved, embedding_model: await this.embeddings.modelFor(tx, vector) } : unsaved;
    const pk = await this.store.memory.insert(tx, row, tags);
    if (hasHistory(row)) {
      await this.store.memory.patch(tx, pk, {
        headline: row.headline,
        last_reinforced_at: row.last_reinforced_at,
        reinforcement_count: row.reinforcement_count,
        superseded_by: row.superseded_by,
        // An imported entry's stale mark (CONTRACT §18): its anchor came with the import.
        stale_since: row.stale_since,
        stale_reason: row.stale_reason,
      });
    }
    if (row.read_count > 0 || row.distinct_readers > 0) await this.store.transfer.restoreReadCounts(tx, pk, row.read_count, row.distinct_readers);
    const stored: MemoryRow = { ...row, pk, change_seq: 0 };
    if (vector && stored.embedding_model !== null) await this.embeddings.storeFor(tx, pk, vector, stored);
    return stored;
  }

  /** Announces an entry `insert` stored, as `actor`'s: its `memory.written` event. Returns it with its `change_seq`. */
  async announce(tx: Tx, actor: string, stored: MemoryRow, provenance?: Provenance): Promise<MemoryRow> {
    const change_seq = await this.emitChange(tx, "memory.written", actor, stored, provenance === undefined ? {} : { reason: provenance });
    return { ...stored, change_seq };
  }

  /**
   * Writes `changes` (already told apart from what is there) as the entry's next version: the
   * content key follows the content, the vector follows the content (`vector`, or none until the
   * backfill) or, without a new content, its metadata follows the row; then `memory.updated` with
   * `changed`. `tags` is the list behind `changes.tags`, when they change.
   */
  async update(tx: Tx, actor: string, row: MemoryRow, changes: MemoryPatch, changed: string[], tags: string[] | undefined, vector: Float32Array | null, at = now()): Promise<MemoryRow> {
    if (changes.content !== undefined) changes.content_key = contentKey(changes.content);
    changes.version = row.version + 1;
    changes.updated_at = at;
    await this.store.memory.patch(tx, row.pk, changes);
    if (tags !== undefined) await this.store.memory.replaceTags(tx, row.pk, tags);
    const updated: MemoryRow = { ...row, ...changes } as MemoryRow;
    if (changes.content !== undefined) {
      if (vector) updated.embedding_model = await this.embeddings.store(tx, row.pk, vector, updated);
      else {
        await this.store.vectors.delete(tx, row.pk);
        updated.embedding_model = null;
        await this.store.memory.patch(tx, row.pk, { embedding_model: null });
      }
    } else if (row.embedding_model !== null) {
      await this.store.vectors.updateMeta(tx, row.pk, vectorMetaOf(updated));
    }
    await this.emitChange(tx, "memory.updated", actor, updated, { changed });
    return updated;
  }

  /**
   * Announces a change of the entry as `actor`'s (an event about a private entry is its author's
   * alone), and marks the entry with the event's seq as its `change_seq`: the order of changes is
   * then the order of commits (seqs are drawn in commit order), which a cursor over them (the
   * handoff delta, the feed's `order=changes`) relies on. The same statement stamps the entry's
   * merkle leaf from the row as the change left it, so every caller must have written the change
   * before it announces it. Returns that seq.
   */
  async emitChange(tx: Tx, ...[type, actor, row, extra]: MemoryEventArgs): Promise<number> {
    const addressing = { agentId: actor, project: row.project, privateTo: row.scope === "agent" ? row.agent_id : null };
    const entry = {
      memory_id: row.id,
      type: row.type,
      project: row.project,
      scope: row.scope,
      version: row.version,
      ...(row.source_kind ? { source_kind: row.source_kind } : {}),
    };
    let event: BusEvent;
    // One case per type: each payload is checked against its own event type.
    const announces = { memoryId: row.id, localOrigin: this.localOrigin };
    switch (type) {
      case "memory.written":
        event = await this.bus.emit(tx, { type, ...addressing, payload: { ...entry, ...extra } }, announces);
        break;
      case "memory.updated":
        event = await this.bus.emit(tx, { type, ...addressing, payload: { ...entry, ...extra } }, announces);
        break;
      case "memory.deleted":
        event = await this.bus.emit(tx, { type, ...addressing, payload: { ...entry, ...extra } }, announces);
        break;
    }
    return event.seq;
  }

  /**
   * Marks the entry deleted (replaced by `supersededBy`, when a merge replaced it), drops its
   * vector, and announces it as `actor`'s.
   */
  /** `at`: the deletion's time; a bulk delete gives all of its rows one. */
  async softDelete(tx: Tx, actor: string, row: MemoryRow, reason: DeleteReason, supersededBy: string | null = null, at = now()): Promise<void> {
    // A deletion is the entry's next version: a peer holding the live one replaces it with the
    // tombstone by the single-writer rule (a higher version wins), and nothing else (CONTRACT §16).
    const version = row.version + 1;
    await this.store.memory.patch(tx, row.pk, { deleted_at: at, updated_at: at, version, superseded_by: supersededBy ?? undefined });
    await this.store.vectors.delete(tx, row.pk);
    await this.emitChange(tx, "memory.deleted", actor, { ...row, version }, supersededBy === null ? { reason } : { reason, superseded_by: supersededBy });
  }
}
