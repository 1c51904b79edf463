import type { Logger } from "../core/log.js";
import type { EmbeddingLane, EmbeddingQueue } from "../embed/queue.js";
import type { MemoryRow } from "../store/memory.js";
import type { Reader, Store, Tx } from "../store/store.js";
import { vectorMetaOf } from "./memory-records.js";

// How long a write waits for a model that is still loading before it is stored unembedded.
const WRITE_WAIT_MS = 15_000;
const BACKFILL_BATCH = 64;

/**
 * Connects the embedding queue to the vector index: embeds content for writes and queries, keeps
 * the index on the current model, and embeds whatever was written while the model was away.
 */
export class MemoryEmbeddings {
  /** The model the index holds vectors of; undefined until read from the store (null: none yet). */
  private indexModel: string | null | undefined = undefined;
  /** Putting the index on a newly loaded model; settles (never rejects) once that is done or failed. */
  private indexSetup: Promise<void> | null = null;
  private backfilling: Promise<number> | null = null;
  // Not `store`: that name is the method that stores a vector.
  private readonly database: Store;

  constructor(
    store: Store,
    private readonly queue: EmbeddingQueue,
    private readonly log: Logger,
  ) {
    this.database = store;
    queue.onReady((embedder) => {
      this.indexSetup = this.useModel(embedder.id, embedder.dimensions);
    });
  }

  private async useModel(model: string, dimensions: number): Promise<void> {
    try {
      if ((await this.database.vectors.ensure(model, dimensions)) === "reset") {
        this.log.info("vector index reset for a new embedding model; re-embedding every entry", { model });
      }
    } catch (error) {
      this.log.error("the vector index could not be set up for the embedding model", {
        model,
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    this.indexModel = model;
    void this.backfill();
  }

  get status(): "loading" | "ready" | "unavailable" {
    return this.queue.status;
  }

  /**
   * The vector for `text`, or null when there is no model (the caller then goes keyword-only).
   * `lane`: who waits for it (a query first, bulk work last; see EmbeddingQueue).
   */
  async embed(text: string, waitMs = WRITE_WAIT_MS, lane: EmbeddingLane = "write"): Promise<Float32Array | null> {
    if (this.queue.status === "loading") await this.queue.settled(waitMs);
    if (this.queue.status !== "ready") return null;
    // Until the index is on the loaded model, `store` would refuse the vector and the entry would
    // wait for the backfill; the setup is one short transaction, so a write waits for it instead.
    await this.indexSetup;
    try {
      return await this.queue.embed(text, lane);
    } catch {
      return null;
    }
  }

  /** A search's query: served before any write or bulk text waiting. */
  embedForQuery(text: string, waitMs: number): Promise<Float32Array | null> {
    return this.embed(text, waitMs, "query");
  }

  embedForWrite(text: string): Promise<Float32Array | null> {
    return this.embed(text);
  }

  /** A text of bulk work (an import's entries): embedded when no query or write waits. */
  embedForBulk(text: string): Promise<Float32Array | null> {
    return this.embed(text, WRITE_WAIT_MS, "bulk");
  }

  /**
   * Stores the vector of an entry inside the caller's transaction. Returns the model id recorded
   * on the row, or null when the index belongs to another model (the backfill will redo it).
   */
  async store(
    tx: Tx,
    pk: number,
    vector: Float32Array,
    row: Pick<MemoryRow, "scope" | "project" | "agent_id" | "type" | "confidence" | "expires_at">,
  ): Promise<string | null> {
    const model = await this.modelFor(tx, vector);
    if (model === null) return null;
    await this.storeFor(tx, pk, vector, row);
    await this.database.memory.patch(tx, pk, { embedding_model: model });
    return model;
  }

  /**
   * The model id `store` would record for `vector`, or null when it would refuse it: for an entry
   * inserted with it as its `embedding_model` (one statement fewer than `store`'s patch), whose
   * vector `storeFor` then adds.
   */
  async modelFor(r: Reader, vector: Float32Array): Promise<string | null> {
    const model = this.queue.model;
    if (!model || model.id !== (await this.currentIndexModel(r)) || vector.length !== model.dimensions) return null;
    return model.id;
  }

  /** The vector of an entry inserted with `modelFor`'s id as its `embedding_model`. */
  async storeFor(tx: Tx, pk: number, vector: Float32Array, row: Pick<MemoryRow, "scope" | "project" | "agent_id" | "type" | "confidence" | "expires_at">): Promise<void> {
    await this.database.vectors.put(tx, pk, vector, vectorMetaOf(row));
  }

  /** Read once; from then on only `useModel` changes which model the index holds. */
  private async currentIndexModel(r: Reader): Promise<string | null> {
    if (this.indexModel === undefined) {
      const stored = (await this.database.vectors.model(r))?.model ?? null;
      // A model set while the read was under way is newer than what it read.
      if (this.indexModel === undefined) this.indexModel = stored;
    }
    return this.indexModel;
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
      if (this.queue.status !== "ready" || !this.database.open) return total;
      const rows = await this.database.memory.unembedded(this.database.reader, BACKFILL_BATCH);
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
    // The index is put on the model just loaded first; until then every vector would be refused.
    await this.indexSetup;
    let afterPk = 0;
    let total = 0;
    for (;;) {
      const rows = await this.database.memory.notDeletedAfter(this.database.reader, afterPk, BACKFILL_BATCH);
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
      vectors = await this.queue.embedMany(rows.map((row) => row.content), "bulk");
    } catch {
      return 0;
    }
    if (!this.database.open) return 0;
    return this.database.transaction(async (tx) => {
      let stored = 0;
      for (const [index, row] of rows.entries()) {
        const vector = vectors[index];
        // Skip rows deleted or edited while they were being embedded; they are picked up again.
        const current = await this.database.memory.byPk(tx, row.pk);
        if (!vector || !current || current.deleted_at !== null || current.content !== row.content) continue;
        if ((await this.store(tx, row.pk, vector, current)) !== null) stored++;
      }
      return stored;
    });
  }
}
