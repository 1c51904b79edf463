// Seeded random unit vectors and their exact cosine distance: what the vector-index tests compare
// an index's answers against.

/** A seeded uniform generator over [-0.5, 0.5): the same seed, the same vectors on every run. */
export function seededUniform(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

export function randomUnitVector(next: () => number, dimensions: number): Float32Array {
  const vector = Float32Array.from({ length: dimensions }, next);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

/** 1 − cosine, for unit vectors. */
export const cosineDistance = (a: Float32Array, b: Float32Array): number => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return 1 - dot;
};
