import { normalize, type Embedder } from "./embedder.js";

const DIMENSIONS = 512;
const MAX_CHARS = 16_384;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function add(vector: Float32Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  // The top bit picks the sign, so colliding features tend to cancel instead of piling up.
  vector[hash % DIMENSIONS] = (vector[hash % DIMENSIONS] ?? 0) + (hash & 0x80000000 ? -weight : weight);
}

/**
 * Deterministic lexical vectors from word unigrams, bigrams and character trigrams: no model,
 * no I/O. Similar wording gives similar vectors; paraphrases with other words do not.
 */
export function hashVector(text: string): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  const words = text.slice(0, MAX_CHARS).toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    add(vector, `w:${word}`, 1);
    if (i > 0) add(vector, `b:${words[i - 1]} ${word}`, 0.5);
    const padded = `^${word}$`;
    for (let j = 0; j + 3 <= padded.length; j++) add(vector, `c:${padded.slice(j, j + 3)}`, 0.25);
  }
  return normalize(vector);
}

export const hashEmbedder = (): Embedder => ({
  id: `hash-${DIMENSIONS}`,
  dimensions: DIMENSIONS,
  embed: (texts) => Promise.resolve(texts.map(hashVector)),
  close: () => Promise.resolve(),
});
