import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { cosine } from "../../src/embed/embedder.js";
import { hashEmbedder, hashVector } from "../../src/embed/hash.js";
import { BULK_BATCH_SIZE, BULK_TURN_AFTER, EmbeddingQueue, EmbeddingsUnavailableError, WRITE_BATCH_SIZE, type EmbeddingLane } from "../../src/embed/queue.js";

describe("the embedding queue", () => {
  it("is loading until the model has loaded, then ready", async () => {
    const queue = new EmbeddingQueue(() => Promise.resolve(hashEmbedder()), silentLogger);
    expect(queue.status).toBe("loading");
    queue.start();
    expect(await queue.settled(5000)).toBe("ready");
    expect(queue.model).toEqual({ id: "hash-512", dimensions: 512 });
    await queue.close();
  });

  it("batches texts that arrive together", async () => {
    const queue = new EmbeddingQueue(() => Promise.resolve(hashEmbedder()), silentLogger, 32);
    queue.start();
    await queue.settled(5000);
    const texts = Array.from({ length: 64 }, (_, index) => `note number ${index}`);
    const vectors = await Promise.all(texts.map((text) => queue.embed(text, "query")));
    expect(vectors).toHaveLength(64);
    expect(queue.stats.texts).toBe(64);
    expect(queue.stats.batches).toBeLessThanOrEqual(3);
    expect(Array.from(vectors[5]!)).toEqual(Array.from(hashVector("note number 5")));
    await queue.close();
  });

  it("reports unavailable when the model cannot load, and refuses to embed", async () => {
    const queue = new EmbeddingQueue(() => Promise.reject(new Error("no model here")), silentLogger);
    queue.start();
    expect(await queue.settled(5000)).toBe("unavailable");
    await expect(queue.embed("anything")).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
    await queue.close();
  });
});

describe("the embedding queue's lanes", () => {
  async function readyQueue(): Promise<EmbeddingQueue> {
    const queue = new EmbeddingQueue(() => Promise.resolve(hashEmbedder()), silentLogger, 32);
    queue.start();
    await queue.settled(5000);
    return queue;
  }

  /** Queues `count` texts in `lane`, noting in `done` the lane of each as its vector arrives. */
  const enqueue = (queue: EmbeddingQueue, lane: EmbeddingLane, count: number, done: EmbeddingLane[]): Promise<Float32Array>[] =>
    Array.from({ length: count }, (_, index) =>
      queue.embed(`${lane} text number ${index}`, lane).then((vector) => {
        done.push(lane);
        return vector;
      }),
    );

  it("serves a query that arrives behind a bulk backlog after at most the bulk batch in progress", async () => {
    const queue = await readyQueue();
    const done: EmbeddingLane[] = [];
    const bulk = enqueue(queue, "bulk", 400, done);
    // The first bulk batch has been embedded and the next one is under way when the query comes.
    await bulk[0];
    const [query] = enqueue(queue, "query", 1, done);
    await query;
    const bulkBeforeQuery = done.indexOf("query");
    expect(bulkBeforeQuery).toBeLessThanOrEqual(2 * BULK_BATCH_SIZE);
    await Promise.all(bulk);
    expect(done.filter((lane) => lane === "bulk")).toHaveLength(400);
    expect(queue.stats.lanes).toEqual({ query: 1, write: 0, bulk: 400 });
    await queue.close();
  });

  it("fills a batch with queries first, then writes WRITE_BATCH_SIZE at a time, and embeds bulk texts BULK_BATCH_SIZE at a time when nothing else waits", async () => {
    const queue = await readyQueue();
    const done: EmbeddingLane[] = [];
    const all = [...enqueue(queue, "bulk", 40, done), ...enqueue(queue, "write", 20, done), ...enqueue(queue, "query", 20, done)];
    await Promise.all(all);
    // One batch of the 20 queries, the writes in batches of WRITE_BATCH_SIZE, then the bulk texts.
    expect(done.slice(0, 20).every((lane) => lane === "query")).toBe(true);
    expect(done.slice(20, 40).every((lane) => lane === "write")).toBe(true);
    expect(queue.stats.batches).toBe(1 + 20 / WRITE_BATCH_SIZE + 40 / BULK_BATCH_SIZE);
    await queue.close();
  });

  it("serves a query that arrives behind a backlog of writes after at most the write batch in progress", async () => {
    const queue = await readyQueue();
    const done: EmbeddingLane[] = [];
    const writes = enqueue(queue, "write", 200, done);
    await writes[0];
    const [query] = enqueue(queue, "query", 1, done);
    await query;
    expect(done.indexOf("query")).toBeLessThanOrEqual(2 * WRITE_BATCH_SIZE);
    await Promise.all(writes);
    await queue.close();
  });

  it("gives bulk work a batch after BULK_TURN_AFTER batches that passed it over", async () => {
    const queue = await readyQueue();
    const done: EmbeddingLane[] = [];
    const writes = (BULK_TURN_AFTER + 4) * WRITE_BATCH_SIZE;
    const all = [...enqueue(queue, "bulk", 1, done), ...enqueue(queue, "write", writes, done)];
    await Promise.all(all);
    expect(done.indexOf("bulk")).toBe(BULK_TURN_AFTER * WRITE_BATCH_SIZE);
    await queue.close();
  });

  it("refuses what waits in every lane when it closes", async () => {
    const queue = await readyQueue();
    const waiting = (["query", "write", "bulk"] as const).map((lane) => queue.embed(`closing ${lane}`, lane));
    await queue.close();
    for (const promise of waiting) await expect(promise).rejects.toBeInstanceOf(EmbeddingsUnavailableError);
  });
});

describe("the hash embedder", () => {
  it("gives unit vectors, close for shared wording and far for unrelated text", () => {
    const a = hashVector("the deploy script needs AWS_PROFILE");
    const b = hashVector("The deploy script needs the AWS_PROFILE variable");
    const c = hashVector("kittens sleep on warm windowsills");
    expect(cosine(a, a)).toBeCloseTo(1, 5);
    expect(cosine(a, b)).toBeGreaterThan(0.7);
    expect(cosine(a, c)).toBeLessThan(0.2);
  });

  it("maps empty text to a fixed unit vector", () => {
    expect(cosine(hashVector(""), hashVector("   "))).toBeCloseTo(1, 5);
  });
});
