import type { Logger } from "../core/log.js";
import type { EmbeddingQueue } from "../embed/queue.js";
import type { Db } from "../store/db.js";
import { liveMemoryAfter, memoryByPk, patchMemory, unembeddedMemory, type MemoryRow } from "../store/memory.js";
import { ensureVectorIndex, putVector, vectorIndexModel } from "../store/vectors.js";
import { vectorMetaOf } from "./memory-records.js";

// How long a write waits for a model that is still loading before it is stored unembedded.
const WRITE_WAIT_MS = 15_000;
const BACKFILL_BATCH = 64;

/**
 * Connects the embedding queue to the vector index: embeds content for writes and queries, keeps
 * the index on the current model, and embeds whatever was written while the model was away.
 */
export class MemoryEmbeddings {
  private indexModel: string | null = null;
  private backfilling: Promise<number> | null = null;

  constructor(
    private readonly db: Db,
    private readonly queue: EmbeddingQueue,
    private readonly log: Logger,
  ) {
    this.indexModel = vectorIndexModel(db)?.model ?? null;
    queue.onReady((embedder) => {
      if (ensureVectorIndex(db, embedder.id, embedder.dimensions) === "reset") {
        log.info("vector index reset for a new embedding model; re-embedding every entry", { model: embedder.id });
      }
      this.indexModel = embedder.id;
      void this.backfill();
    });
  }

  get status(): "loading" | "ready" | "unavailable" {
    return this.queue.status;
  }

  /** The vector for `text`, or null when there is no model (the caller then goes keyword-only). */
  async embed(text: string, waitMs = WRITE_WAIT_MS): Promise<Float32Array | null> {
    if (this.queue.status === "loading") await this.queue.settled(waitMs);
    if (this.queue.status !== "ready") return null;
    try {
      return await this.queue.embed(text);
    } catch {
      return null;
    }
  }

  embedForWrite(text: string): Promise<Float32Array | null> {
    return this.embed(text);
  }

  /**
   * Stores the vector of an entry inside the caller's transaction. Returns the model id recorded
   * on the row, or null when the index belongs to another model (the backfill will redo it).
   */
  store(pk: number, vector: Float32Array, row: Pick<MemoryRow, "scope" | "project" | "agent_id" | "type" | "confidence" | "expires_at">): string | null {
    const model = this.queue.model;
    if (!model || model.id !== this.indexModel || vector.length !== model.dimensions) return null;
    putVector(this.db, pk, vector, vectorMetaOf(row));
    patchMemory(this.db, pk, { embedding_model: model.id });
    return model.id;
  }

  /** Embeds every live entry that has no vector yet; returns how many it embedded. */
  backfill(): Promise<number> {
    this.backfilling ??= this.runBackfill().finally(() => {
      this.backfilling = null;
    });
    return this.backfilling;
  }

  private async runBackfill(): Promise<number> {
    let total = 0;
    for (;;) {
      if (this.queue.status !== "ready" || !this.db.sqlite.open) return total;
      const rows = unembeddedMemory(this.db, BACKFILL_BATCH);
      if (rows.length === 0) break;
      const done = await this.embedRows(rows);
      if (done === 0) return total;
      total += done;
    }
    if (total > 0) this.log.info("embedded stored entries", { count: total });
    return total;
  }

  /** Re-embeds every live entry with the current model (`cairn reindex`). */
  async reindexAll(onProgress: (done: number) => void = () => undefined): Promise<number> {
    let afterPk = 0;
    let total = 0;
    for (;;) {
      const rows = liveMemoryAfter(this.db, afterPk, BACKFILL_BATCH);
      const last = rows.at(-1);
      if (!last) return total;
      total += await this.embedRows(rows);
      afterPk = last.pk;
      onProgress(total);
    }
  }

  private async embedRows(rows: MemoryRow[]): Promise<number> {
    let vectors: Float32Array[];
    try {
      vectors = await this.queue.embedMany(rows.map((row) => row.content));
    } catch {
      return 0;
    }
    if (!this.db.sqlite.open) return 0;
    return this.db.write(() => {
      let stored = 0;
      rows.forEach((row, index) => {
        const vector = vectors[index];
        // Skip rows deleted or edited while they were being embedded; they are picked up again.
        const current = memoryByPk(this.db, row.pk);
        if (!vector || !current || current.deleted_at !== null || current.content !== row.content) return;
        if (this.store(row.pk, vector, current) !== null) stored++;
      });
      return stored;
    });
  }
}
