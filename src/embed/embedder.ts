/** Turns text into unit-length vectors; cosine similarity is then a dot product. */
export interface Embedder {
  /** Stable id of the model, stored with every vector so a model change triggers re-embedding. */
  readonly id: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** Loads an embedder; may take time (a model file) or fail (a missing download). */
export type EmbedderLoader = () => Promise<Embedder>;

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}

export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm === 0) {
    // A constant direction, so empty input still compares (to itself) instead of dividing by zero.
    vector[0] = 1;
    return vector;
  }
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}
