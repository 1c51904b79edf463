import type { Config } from "../core/config.js";
import { cosine } from "../embed/embedder.js";
import type { DuplicateKey, MemoryRow } from "../store/memory.js";
import type { Reader, Store, Tx } from "../store/store.js";
import { visKeyFor, type Neighbour } from "../store/vectors.js";
import type { Viewpoint } from "../store/visibility.js";
import type { SimilarEntry } from "../wire/memory.js";
import { round6 } from "./memory-records.js";

const DUPLICATE_CANDIDATES = 3;
const SIMILAR_LIMIT = 3;
// A KNN scan reads every vector, so it is most of a write's cost: one scan of this many
// neighbours (at least SIMILAR_LIMIT and DUPLICATE_CANDIDATES) serves both the duplicate check
// and `similar`.
const NEIGHBOURS = 8;
/**
 * Changes committed between a write's survey and its transaction that are checked one by one; more
 * (a burst of writes, or an import) and the transaction scans again instead.
 */
const CATCH_UP_LIMIT = 64;

export interface NearHit {
  row: MemoryRow;
  distance: number;
}

/** The nearest visible entries to a new text, down to the lower of the two thresholds. */
export interface Neighbourhood {
  vector: Float32Array;
  hits: NearHit[];
  /** False when the list is full and still duplicate-close at its end, so candidates may be missing. */
  complete: boolean;
  /** When not complete: the duplicate candidates from a scan of the duplicate scope, if one was made. */
  scoped?: NearHit[];
}

/**
 * What a write saw before its transaction, read from committed data without any lock: the scan of
 * the vector index is most of a write's cost, and inside the transaction it would hold the
 * project's lock (PostgreSQL) or the one writer (SQLite) for its whole length. The transaction then
 * only looks at what changed since `mark`.
 */
export interface Survey {
  /** Every change with a seq up to this had committed before the scans began. */
  mark: number;
  /** Null when there was no vector, or an exact duplicate made the scan needless. */
  near: Neighbourhood | null;
}

/** The rows a duplicate may come from: same type, project and scope (and author, if private). */
const inDuplicateScope = (row: MemoryRow, key: DuplicateKey): boolean =>
  row.type === key.type &&
  (row.project ?? "") === (key.project ?? "") &&
  visKeyFor(row.scope, row.project, row.agent_id) === visKeyFor(key.scope, key.project, key.agentId);

/** Tokens that carry digits: numbers, versions, ports, dates, ids. */
export const numbersIn = (text: string): Set<string> =>
  new Set(
    (text.toLowerCase().match(/[\p{L}\p{N}._:/-]*\p{N}[\p{L}\p{N}._:/-]*/gu) ?? []).map((token) => token.replace(/^[._:/-]+|[._:/-]+$/g, "")),
  );

const sameSet = (a: Set<string>, b: Set<string>): boolean => a.size === b.size && [...a].every((item) => b.has(item));

export interface Duplicate {
  row: MemoryRow;
  similarity: number;
}

/**
 * What a new text overlaps: the entry it duplicates (reinforced instead of writing a copy) and the
 * entries similar enough to show the writer. The scans run before the write's transaction
 * (`survey`); inside it, `catchUp` and the duplicate checks take the transaction (`r`).
 */
export class OverlapFinder {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
  ) {}

  async exactDuplicate(r: Reader, key: DuplicateKey, vector: Float32Array | null, at: string): Promise<Duplicate | null> {
    const exact = await this.store.memory.exactDuplicate(r, key, at);
    if (!exact) return null;
    const stored = vector ? (await this.store.vectors.get(r, [exact.pk])).get(exact.pk) : undefined;
    return { row: exact, similarity: stored && vector ? round6(cosine(stored, vector)) : 1 };
  }

  /**
   * The neighbourhood of a new text from committed data, before the write's transaction. Seqs are
   * drawn and become visible in commit order (on both backends), so a change not seen by the scans
   * has a seq above the mark read first; `catchUp` finds it there.
   */
  async survey(r: Reader, viewpoint: Viewpoint, key: DuplicateKey, vector: Float32Array | null, at: string, checkDuplicates: boolean): Promise<Survey> {
    const { mark, duplicate } =
      checkDuplicates && vector ? await this.store.memory.surveyStart(r, key, at) : { mark: await this.store.events.maxSeq(r), duplicate: false };
    if (!vector || duplicate) return { mark, near: null };
    const near = await this.neighbourhood(r, viewpoint, vector, at);
    if (checkDuplicates && !near.complete) near.scoped = await this.scopedCandidates(r, key, vector, at);
    return { mark, near };
  }

  /**
   * The survey's neighbourhood as it is now, inside the write's transaction (which holds the
   * project's lock, so no other write to the duplicate scope commits meanwhile): entries changed
   * since the mark leave it, and those of them still live and near come back at their new distance.
   * After more changes than it is worth checking one by one, or without a survey, a new scan.
   *
   * `ahead`: for a transaction that inserted its entry before the lock, whose scans would meet that
   * entry. Null instead of a new scan, and null when an entry changed since the mark has the new
   * text's content key (a possible exact duplicate: the survey checked for those among what
   * committed before the mark, and a change since has a seq above it).
   */
  async catchUp(tx: Tx, survey: Survey, viewpoint: Viewpoint, key: DuplicateKey, vector: Float32Array, at: string): Promise<Neighbourhood>;
  async catchUp(tx: Tx, survey: Survey, viewpoint: Viewpoint, key: DuplicateKey, vector: Float32Array, at: string, ahead: true): Promise<Neighbourhood | null>;
  async catchUp(tx: Tx, survey: Survey, viewpoint: Viewpoint, key: DuplicateKey, vector: Float32Array, at: string, ahead = false): Promise<Neighbourhood | null> {
    const rescan = (): Promise<Neighbourhood> | null => (ahead ? null : this.neighbourhood(tx, viewpoint, vector, at));
    const near = survey.near;
    if (!near) return rescan();
    const changed = await this.store.memory.changesSince(tx, viewpoint, survey.mark, CATCH_UP_LIMIT + 1);
    if (ahead && changed.some((row) => row.content_key === key.contentKey && row.deleted_at === null)) return null;
    if (changed.length === 0) return near;
    if (changed.length > CATCH_UP_LIMIT) return rescan();
    const nowMs = Date.parse(at);
    const live = changed.filter((row) => row.deleted_at === null && row.embedding_model !== null && (row.expires_at === null || Date.parse(row.expires_at) > nowMs));
    const stored = await this.store.vectors.get(tx, live.map((row) => row.pk));
    const maxDistance = 1 - Math.min(this.config.SIMILAR_THRESHOLD, this.config.DUPLICATE_THRESHOLD);
    const moved = live.flatMap((row) => {
      const other = stored.get(row.pk);
      const distance = other ? 1 - cosine(other, vector) : Infinity;
      return distance <= maxDistance ? [{ row, distance }] : [];
    });
    const gone = new Set(changed.map((row) => row.pk));
    const merge = (hits: NearHit[], added: NearHit[]): NearHit[] =>
      [...hits.filter((hit) => !gone.has(hit.row.pk)), ...added].sort((a, b) => a.distance - b.distance || a.row.pk - b.row.pk);
    const caughtUp: Neighbourhood = { vector, hits: merge(near.hits, moved), complete: near.complete };
    if (near.scoped) {
      const closeInScope = moved.filter((hit) => hit.distance <= 1 - this.config.DUPLICATE_THRESHOLD && inDuplicateScope(hit.row, key));
      caughtUp.scoped = merge(near.scoped, closeInScope).slice(0, DUPLICATE_CANDIDATES);
    }
    return caughtUp;
  }

  async neighbourhood(r: Reader, viewpoint: Viewpoint, vector: Float32Array, at: string): Promise<Neighbourhood> {
    const floor = Math.min(this.config.SIMILAR_THRESHOLD, this.config.DUPLICATE_THRESHOLD);
    // Coarse: the nearest few among thousands of similar entries need not be the exact few, and a
    // near duplicate is nearer still (docs/architecture.md, the bit mirror's lists).
    const found = await this.store.vectors.nearest(r, vector, NEIGHBOURS, { within: { viewpoint }, nowMs: Date.parse(at), maxDistance: 1 - floor, coarse: true });
    const hits = await this.withRows(r, found);
    const farthest = found.at(-1);
    const complete = found.length < NEIGHBOURS || farthest === undefined || farthest.distance > 1 - this.config.DUPLICATE_THRESHOLD;
    return { vector, hits, complete };
  }

  private async withRows(r: Reader, found: Neighbour[]): Promise<NearHit[]> {
    const rows = await this.store.memory.byPks(r, found.map((hit) => hit.pk));
    return found.flatMap((hit) => {
      const row = rows.get(hit.pk);
      return row ? [{ row, distance: hit.distance }] : [];
    });
  }

  /**
   * The nearest duplicate-close entries in the duplicate scope, taken from the neighbourhood when
   * it holds them all (the writer sees every row of that scope), else from a scan of the scope.
   */
  private async duplicateCandidates(r: Reader, key: DuplicateKey, near: Neighbourhood, at: string): Promise<NearHit[]> {
    if (near.complete) {
      return near.hits.filter((hit) => hit.distance <= 1 - this.config.DUPLICATE_THRESHOLD && inDuplicateScope(hit.row, key)).slice(0, DUPLICATE_CANDIDATES);
    }
    return near.scoped ?? this.scopedCandidates(r, key, near.vector, at);
  }

  /** The nearest duplicate-close entries from a scan of the duplicate scope alone. */
  private async scopedCandidates(r: Reader, key: DuplicateKey, vector: Float32Array, at: string): Promise<NearHit[]> {
    const found = await this.store.vectors.nearest(r, vector, DUPLICATE_CANDIDATES, {
      within: { visKey: visKeyFor(key.scope, key.project, key.agentId) },
      projectKey: key.project ?? "",
      types: [key.type],
      nowMs: Date.parse(at),
      maxDistance: 1 - this.config.DUPLICATE_THRESHOLD,
    });
    return this.withRows(r, found);
  }

  async nearDuplicate(r: Reader, key: DuplicateKey, content: string, near: Neighbourhood, at: string): Promise<Duplicate | null> {
    const numbers = numbersIn(content);
    for (const candidate of await this.duplicateCandidates(r, key, near, at)) {
      // Sentence embeddings barely notice numbers: "port 8080" and "port 8081" embed alike but
      // are different facts. A near-identical text with other numbers is new (and shows as similar).
      if (sameSet(numbersIn(candidate.row.content), numbers)) return { row: candidate.row, similarity: round6(1 - candidate.distance) };
    }
    return null;
  }

  similarAmong(near: Neighbourhood): SimilarEntry[] {
    const maxDistance = 1 - this.config.SIMILAR_THRESHOLD;
    return near.hits
      .filter((hit) => hit.distance <= maxDistance)
      .slice(0, SIMILAR_LIMIT)
      .map((hit) => ({ id: hit.row.id, similarity: round6(1 - hit.distance), agent_id: hit.row.agent_id }));
  }
}
