// What the retrieval benchmark compares Cairn's search with, and how it scores a ranking:
// plain Okapi BM25 (lower-cased words, no stemming, no stop list: the baseline anyone gets from a
// BM25 library), exact cosine over the stored vectors, and recall@k, MRR@10 and nDCG@10.
import { cosine } from "../src/embed/embedder.js";

const K1 = 1.2;
const B = 0.75;

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Okapi BM25 over one group's texts, with the Lucene-style idf that never goes negative. */
export class Bm25 {
  private readonly terms: Map<string, number>[] = [];
  private readonly lengths: number[] = [];
  private readonly df = new Map<string, number>();
  private readonly averageLength: number;

  constructor(private readonly ids: string[], texts: string[]) {
    for (const text of texts) {
      const counts = new Map<string, number>();
      const tokens = words(text);
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      for (const token of counts.keys()) this.df.set(token, (this.df.get(token) ?? 0) + 1);
      this.terms.push(counts);
      this.lengths.push(tokens.length);
    }
    this.averageLength = this.lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, this.lengths.length);
  }

  rank(query: string, k: number): string[] {
    const n = this.ids.length;
    const scores: { id: string; score: number }[] = [];
    const queryTerms = [...new Set(words(query))];
    this.terms.forEach((counts, index) => {
      let score = 0;
      for (const term of queryTerms) {
        const tf = counts.get(term);
        if (!tf) continue;
        const df = this.df.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * (this.lengths[index] ?? 0)) / this.averageLength));
      }
      if (score > 0) scores.push({ id: this.ids[index] as string, score });
    });
    return scores.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k).map((hit) => hit.id);
  }
}

/** Exact nearest neighbours by cosine: what the vectors alone would rank. */
export function nearest(ids: string[], vectors: Float32Array[], query: Float32Array, k: number): string[] {
  return ids
    .map((id, index) => ({ id, score: cosine(query, vectors[index] as Float32Array) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, k)
    .map((hit) => hit.id);
}

export interface Scores {
  r1: number;
  r5: number;
  r10: number;
  mrr: number;
  ndcg10: number;
}

/** One query's scores: recall@k is the share of its relevant entries in the top k. */
export function score(ranked: string[], relevant: Set<string>): Scores {
  const found = (k: number): number => ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;
  const first = ranked.slice(0, 10).findIndex((id) => relevant.has(id));
  let dcg = 0;
  ranked.slice(0, 10).forEach((id, index) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(index + 2);
  });
  let ideal = 0;
  for (let index = 0; index < Math.min(10, relevant.size); index++) ideal += 1 / Math.log2(index + 2);
  return { r1: found(1), r5: found(5), r10: found(10), mrr: first < 0 ? 0 : 1 / (first + 1), ndcg10: dcg / ideal };
}

export function mean(all: Scores[]): Scores {
  const total = { r1: 0, r5: 0, r10: 0, mrr: 0, ndcg10: 0 };
  for (const one of all) for (const key of Object.keys(total) as (keyof Scores)[]) total[key] += one[key];
  for (const key of Object.keys(total) as (keyof Scores)[]) total[key] /= Math.max(1, all.length);
  return total;
}
