import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { cosine } from "../../src/embed/embedder.js";
import { hashEmbedder, hashVector } from "../../src/embed/hash.js";
import { EmbeddingQueue, EmbeddingsUnavailableError } from "../../src/embed/queue.js";

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
    const vectors = await Promise.all(texts.map((text) => queue.embed(text)));
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
