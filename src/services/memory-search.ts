import type { Config } from "../core/config.js";
import { cosine } from "../embed/embedder.js";
import { searchFloorFor } from "../embed/models.js";
import { now } from "../core/time.js";
import type { Store } from "../store/store.js";
import { viewpointOf, type Caller } from "./caller.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import { leavesCodeOut, toEntry, round6 } from "./memory-records.js";
import type { ReadRecorder } from "./reads.js";
import { memoryType, type CompactHit, type MemoryType, type SearchHit, type SourceKind } from "../wire/memory.js";
import { packByTokens } from "./budget.js";
import { compactEntry } from "./compact-entries.js";
import { keywordTerms } from "./keyword-terms.js";

export interface SearchInput {
  q: string;
  limit: number;
  project?: string | null | undefined;
  tag?: string | undefined;
  type?: MemoryType | undefined;
  agent?: string | undefined;
  max_distance?: number | undefined;
  confidence_min?: number | undefined;
  source_kind?: SourceKind | undefined;
  include_code?: boolean | undefined;
  max_content_length?: number | undefined;
  diversify?: boolean | undefined;
  context?: string | undefined;
  include_embedding?: boolean | undefined;
  /** Each hit in compact form (docs/search.md "Budgets"). */
  compact?: boolean | undefined;
  /** Hits best first while they fit, as served, in this many tokens; the rest are counted in `leftOut`. */
  max_tokens?: number | undefined;
}

export interface SearchResult {
  mode: "hybrid" | "keyword";
  hits: (SearchHit | CompactHit)[];
  /** Hits that qualified but did not fit `max_tokens`. */
  leftOut: number;
}

// The fused score (docs/search.md), on 0..1. Each half is on 0..1: the keyword half is an entry's
// BM25 over the query's ceiling (how much of the query it answers, weighted by idf); the semantic
// half is its cosine above the model's floor, scaled to 0..1 and then weighed by SEMANTIC_WEIGHT.
// The stronger half counts whole and the weaker adds AGREEMENT_WEIGHT of itself: a hit one half
// is sure of stands on its own, and one that both halves find rises above either alone. The
// weights were chosen on the retrieval benchmark (LoCoMo and Cranfield): with the bundled model the
// vectors add recall the words miss, but alone they rank far below BM25, so the words lead.
const SEMANTIC_WEIGHT = 0.5;
const AGREEMENT_WEIGHT = 0.25;

/** One hit's fused score from its keyword half and its (unweighted) semantic half. */
const fusedScore = (keyword: number, semantic: number): number => {
  const weighted = SEMANTIC_WEIGHT * semantic;
  // Divided by what the same text scores (both halves whole), so that it scores 1.
  return (Math.max(keyword, weighted) + AGREEMENT_WEIGHT * Math.min(keyword, weighted)) / (1 + AGREEMENT_WEIGHT * SEMANTIC_WEIGHT);
};
/** How many hits each half of a search asks its index for, for `limit` results: fusion re-ranks them. */
export const searchPool = (limit: number): number => Math.min(Math.max(limit * 4, 40), 200);

/** Every type but `compiled`: what the vector half looks in when code is left out. */
const SHARED_TYPES = memoryType.options.filter((type) => type !== "compiled");
const MMR_LAMBDA = 0.7;
const NEAR_COPY = 0.9;
const QUERY_WAIT_MS = 5_000;
export class MemorySearch {
  private readonly floor: number;
  private readonly minScore: number;

  constructor(
    private readonly store: Store,
    private readonly embeddings: MemoryEmbeddings,
    private readonly reads: ReadRecorder,
    config: Pick<Config, "EMBEDDING_MODEL" | "SEARCH_MIN_SIMILARITY" | "SEARCH_MIN_SCORE">,
  ) {
    this.floor = searchFloorFor(config);
    this.minScore = config.SEARCH_MIN_SCORE;
  }

  /** A cosine as the semantic half: 0 at the model's floor and below, 1 for the same text. */
  private semanticScore(similarity: number): number {
    return Math.max(0, (similarity - this.floor) / (1 - this.floor));
  }

  async search(caller: Caller, input: SearchInput): Promise<SearchResult> {
    const viewpoint = viewpointOf(caller);
    const at = now();
    const pool = searchPool(input.limit);
    const reader = this.store.reader;
    const withoutCode = leavesCodeOut({ type: input.type, sourceKind: input.source_kind, includeCode: input.include_code });
    // Only compiled entries come from compile: that provenance is a type the vector index can filter on.
    const types = input.type !== undefined ? [input.type] : input.source_kind === "compile" ? ["compiled"] : withoutCode ? SHARED_TYPES : undefined;

    const words = keywordTerms(input.q);
    const filters = {
      project: input.project,
      type: input.type,
      agent: input.agent,
      tag: input.tag,
      confidenceMin: input.confidence_min,
      sourceKind: input.source_kind,
      excludeCompiled: withoutCode,
    };
    // The keyword query needs no vector: it runs while the model embeds the query in its worker
    // thread, and the vector query starts as soon as the vector is there, without waiting for the
    // keyword query (on PostgreSQL the two run at once, each on a connection of its own), so a
    // search costs the longest of them rather than their sum. The keyword query starts on the next
    // turn of the event loop, once the query's text has reached the worker: SQLite's queries hold
    // this thread until they finish.
    const embedding = this.embeddings.embedForQuery(input.q, QUERY_WAIT_MS);
    const keywordSearch = nextTurn().then(() =>
      words.length > 0 ? this.store.keywords.search(reader, viewpoint, at, words, filters, pool) : { hits: [], ceiling: 0 },
    );
    const nearestSearch = embedding.then((vector) =>
      vector
        ? this.store.vectors.nearest(reader, vector, pool, {
            within: { viewpoint },
            nowMs: Date.parse(at),
            ...(input.project === undefined ? {} : { projectKey: input.project ?? "" }),
            ...(types === undefined ? {} : { types }),
            ...(input.agent === undefined ? {} : { agentId: input.agent }),
            ...(input.confidence_min === undefined ? {} : { confidenceMin: input.confidence_min }),
            ...(input.max_distance === undefined ? {} : { maxDistance: input.max_distance }),
            ...(input.tag === undefined ? {} : { tag: input.tag }),
          })
        : [],
    );
    const [vector, keyword, nearest] = await Promise.all([embedding, keywordSearch, nearestSearch]);
    let semantic = nearest;
    // With a distance bound, only hits with a known distance can satisfy it; the keyword list then
    // only adds its half to those that also match a word.
    const bounded = vector !== null && input.max_distance !== undefined;

    // The vector index keeps no provenance: its hits are held to `source_kind` by their rows.
    if (input.source_kind !== undefined && semantic.length > 0) {
      const rows = await this.store.memory.byPks(reader, semantic.map((hit) => hit.pk));
      semantic = semantic.filter((hit) => rows.get(hit.pk)?.source_kind === input.source_kind);
    }
    const halves = new Map<number, { keyword: number; semantic: number; similarity: number | null; matchedSemantic: boolean; matchedKeyword: boolean }>();
    for (const hit of semantic) {
      const similarity = 1 - hit.distance;
      halves.set(hit.pk, { keyword: 0, semantic: this.semanticScore(similarity), similarity, matchedSemantic: true, matchedKeyword: false });
    }
    for (const hit of keyword.hits) {
      const entry = halves.get(hit.pk) ?? { keyword: 0, semantic: 0, similarity: null, matchedSemantic: false, matchedKeyword: false };
      if (bounded && !entry.matchedSemantic) continue;
      entry.keyword = Math.min(1, hit.score / keyword.ceiling);
      entry.matchedKeyword = true;
      halves.set(hit.pk, entry);
    }
    const fused = new Map<number, { score: number; similarity: number | null; semantic: boolean; keyword: boolean }>();
    for (const [pk, half] of halves) {
      // Without a model the keyword half is all there is, and it counts whole.
      const score = vector ? fusedScore(half.keyword, half.semantic) : half.keyword;
      fused.set(pk, { score, similarity: half.similarity, semantic: half.matchedSemantic, keyword: half.matchedKeyword });
    }
    // The floor (docs/search.md): nearest neighbours always exist, however unrelated the query, and
    // so do entries sharing one common word with it; a hit must score enough to mean something.
    for (const [pk, info] of fused) {
      if (info.score < this.minScore || info.score === 0) fused.delete(pk);
    }
    let ranked = [...fused.entries()].sort((a, b) => b[1].score - a[1].score || a[0] - b[0]).map(([pk]) => pk);
    const needVectors = input.diversify || input.include_embedding;
    const vectors = needVectors ? await this.store.vectors.get(reader, ranked) : new Map<number, Float32Array>();
    ranked = input.diversify ? diversify(ranked, fused, vectors, input.limit) : ranked.slice(0, input.limit);

    const rows = await this.store.memory.byPks(reader, ranked);
    const hits: SearchHit[] = [];
    for (const pk of ranked) {
      const row = rows.get(pk);
      const info = fused.get(pk);
      if (!row || !info) continue;
      const entry = toEntry(row, input.include_embedding ? vectors.get(pk) : undefined);
      const hit: SearchHit = {
        ...entry,
        score: round6(info.score),
        similarity: info.similarity === null ? null : round6(info.similarity),
        match: info.semantic && info.keyword ? "both" : info.semantic ? "semantic" : "keyword",
      };
      const limit = input.max_content_length;
      if (limit !== undefined) {
        const codePoints = [...hit.content];
        if (codePoints.length > limit) {
          hit.content = codePoints.slice(0, limit).join("");
          hit.truncated = true;
        }
      }
      hits.push(hit);
    }
    const nowMs = Date.parse(at);
    const served: (SearchHit | CompactHit)[] = input.compact ? hits.map((hit) => compactEntry(hit, input.q, hit.score, nowMs)) : hits;
    const packed = input.max_tokens === undefined ? { kept: served, leftOut: 0 } : packByTokens(served, input.max_tokens, "skip");
    if (caller.role !== "archivist") {
      // Only what the caller was given counts as read.
      const given = new Set(packed.kept.map((hit) => hit.id));
      const readPks = ranked.filter((pk) => {
        const row = rows.get(pk);
        return row !== undefined && row.agent_id !== caller.agentId && given.has(row.id);
      });
      this.reads.record(readPks.map((pk) => ({ pk, agentId: caller.agentId, at, context: input.context ?? null })));
    }
    return { mode: vector ? "hybrid" : "keyword", hits: packed.kept, leftOut: packed.leftOut };
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Maximal marginal relevance: trade relevance against similarity to what is already picked. */
function diversify(
  ranked: number[],
  fused: Map<number, { score: number }>,
  vectors: Map<number, Float32Array>,
  limit: number,
): number[] {
  const top = fused.get(ranked[0] ?? -1)?.score ?? 1;
  const remaining = [...ranked];
  const picked: number[] = [];
  while (picked.length < limit && remaining.length > 0) {
    let bestIndex = 0;
    let bestValue = -Infinity;
    remaining.forEach((pk, index) => {
      const relevance = (fused.get(pk)?.score ?? 0) / top;
      const vector = vectors.get(pk);
      let redundancy = 0;
      if (vector) {
        for (const other of picked) {
          const otherVector = vectors.get(other);
          if (otherVector) redundancy = Math.max(redundancy, cosine(vector, otherVector));
        }
      }
      // A near copy of a hit already picked says nothing new: it comes only when nothing else is left.
      const value = (redundancy >= NEAR_COPY ? -2 : 0) + MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * redundancy;
      if (value > bestValue) {
        bestValue = value;
        bestIndex = index;
      }
    });
    picked.push(...remaining.splice(bestIndex, 1));
  }
  return picked;
}
