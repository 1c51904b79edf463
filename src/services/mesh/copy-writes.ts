import { now } from "../../core/time.js";
import type { MeshSource } from "../../wire/memory.js";
import type { MemoryPatch, MemoryRow, UnsavedMemoryRow } from "../../store/memory.js";
import type { HeldEntry } from "../../store/mesh.js";
import type { Store, Tx } from "../../store/store.js";
import type { MemoryEmbeddings } from "../memory-embeddings.js";
import { vectorMetaOf } from "../memory-records.js";
import type { MemoryWrites } from "../memory-writes.js";

/** A peer's entry at one version, as this instance will hold it (mapped, renamed, capped). */
export interface CopyVersion {
  row: UnsavedMemoryRow;
  tags: string[];
  /** The instance it was written on. */
  origin: string;
}

/**
 * The writes of copies (CONTRACT §16), inside the applying transaction, with their vectors and
 * their ordinary `memory.*` events. A copy takes the origin's id and version as they are: it is
 * the same entry, held here; nothing here ever gives it a version of its own.
 */
export class CopyWrites {
  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly embeddings: MemoryEmbeddings,
  ) {}

  /** An entry not held here yet, live or a tombstone (a tombstone is kept, so the merkle summaries agree). */
  async insert(tx: Tx, actor: string, copy: CopyVersion, vector: Float32Array | null): Promise<void> {
    const pk = await this.store.memory.insert(tx, copy.row, copy.tags);
    await this.store.mesh.setOrigin(tx, pk, copy.origin);
    const stored: MemoryRow = { ...copy.row, pk, change_seq: 0 };
    if (copy.row.deleted_at !== null) {
      await this.store.memory.patch(tx, pk, { deleted_at: copy.row.deleted_at });
      await this.writes.emitChange(tx, "memory.deleted", actor, stored, { reason: "deleted" });
      return;
    }
    if (vector) stored.embedding_model = await this.embeddings.store(tx, pk, vector, stored);
    await this.writes.emitChange(tx, "memory.written", actor, stored, {});
  }

  /** A newer version of a copy held here (or of one deleted here, which the origin changed again). */
  async replace(tx: Tx, actor: string, held: HeldEntry, copy: CopyVersion, vector: Float32Array | null): Promise<void> {
    const next = copy.row;
    const patch: MemoryPatch = {
      content: next.content,
      content_key: next.content_key,
      tags: next.tags,
      confidence: next.confidence,
      type: next.type,
      project: next.project,
      updated_at: next.updated_at,
      version: next.version,
      deleted_at: next.deleted_at,
      source: next.source,
    };
    await this.store.memory.patch(tx, held.pk, patch);
    await this.store.memory.replaceTags(tx, held.pk, copy.tags);
    const updated: MemoryRow = { ...held, ...patch, embedding_model: null } as MemoryRow;
    if (next.deleted_at !== null) {
      await this.store.vectors.delete(tx, held.pk);
      if (held.embedding_model !== null) await this.store.memory.patch(tx, held.pk, { embedding_model: null });
      await this.writes.emitChange(tx, "memory.deleted", actor, updated, { reason: "deleted" });
      return;
    }
    if (next.content_key !== held.content_key || held.deleted_at !== null || vector === null) {
      if (vector) updated.embedding_model = await this.embeddings.store(tx, held.pk, vector, updated);
      else {
        await this.store.vectors.delete(tx, held.pk);
        await this.store.memory.patch(tx, held.pk, { embedding_model: null });
      }
    } else if (held.embedding_model !== null) {
      updated.embedding_model = held.embedding_model;
      await this.store.vectors.updateMeta(tx, held.pk, vectorMetaOf(updated));
    }
    const changed = (["content", "tags", "confidence", "type", "project"] as const).filter((field) => held[field] !== updated[field]);
    await this.writes.emitChange(tx, "memory.updated", actor, updated, { changed: [...changed, "version"] });
  }

  /**
   * Hides a copy here (an owner's choice, or a project clear): deleted at its version, which stays
   * the origin's, and remembered so it is not imported again at that version or a lower one, nor
   * passed on to other peers. A newer version from the origin brings it back.
   */
  async suppress(tx: Tx, actor: string, row: MemoryRow, reason: "suppressed" | "cleared"): Promise<void> {
    const at = now();
    const origin = (JSON.parse(row.source ?? "{}") as Partial<MeshSource>).origin ?? "";
    await this.store.mesh.suppress(tx, { memory_id: row.id, origin, version: row.version, suppressed_by: actor, suppressed_at: at });
    if (row.deleted_at !== null) return;
    await this.store.memory.patch(tx, row.pk, { deleted_at: at });
    await this.store.vectors.delete(tx, row.pk);
    await this.writes.emitChange(tx, "memory.deleted", actor, row, { reason: reason === "cleared" ? "cleared" : "suppressed" });
  }
}
