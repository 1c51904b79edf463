import type { Db } from "./connection.js";

// What the in-memory copies of a store's vectors (the HNSW index, ann.ts; the bit mirror,
// bit-mirror.ts) read to follow the database: the index's identity and the change log.

const IDENTITY = `(SELECT value FROM meta WHERE key = 'vector_model') || '|' || (SELECT value FROM meta WHERE key = 'vector_dimensions') || '|' ||
  (SELECT value FROM meta WHERE key = 'vector_layout') || '|' || COALESCE((SELECT value FROM meta WHERE key = 'vector_generation'), '')`;

/**
 * The database's model, dimensions, layout and generation, as one string: a copy of another is
 * useless. Null when there is no index.
 */
export const vectorIdentity = (db: Db): string | null => db.get<{ identity: string | null }>(`SELECT ${IDENTITY} AS identity`)?.identity ?? null;

/** The dimensions an identity names. */
export const identityDimensions = (identity: string): number => Number(identity.split("|")[1]);

/** The last seq of `vector_changes` deleted by a prune: a copy that applied less must start again. */
export const changesPrunedThrough = (db: Db): number => Number(db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'vector_changes_pruned'")?.value ?? 0);

/** The last seq the log has drawn (kept by SQLite after its rows are pruned). */
export const lastChangeSeq = (db: Db): number => db.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'")?.seq ?? 0;

/**
 * Up to `take` changes after `seq` (all with -1), oldest first, where the log was last pruned
 * through, and the index's identity. Two statements, the changes first: a prune or a new model
 * that came between them shows in the second, and makes the copy start again. A copy asks before
 * every query, and on a server under writes the two cost about two thirds of what one statement
 * joining them did (docs/decisions.md, "The vector log read through the writer").
 */
export function changesAfter(db: Db, seq: number, take: number): { changes: { seq: number; pk: number }[]; prunedThrough: number; identity: string | null } {
  const changes = db.all<{ seq: number; pk: number }>("SELECT seq, pk FROM vector_changes WHERE seq > ? ORDER BY seq LIMIT ?", seq, take);
  const state = db.get<{ pruned: string | null; identity: string | null }>(
    `SELECT (SELECT value FROM meta WHERE key = 'vector_changes_pruned') AS pruned, ${IDENTITY} AS identity`,
  );
  return { changes, prunedThrough: Number(state?.pruned ?? 0), identity: state?.identity ?? null };
}

/** A vec0 row's filter columns, as SQLite returns them. */
export interface VectorMetaRow {
  vis_key: string;
  owner_key: string;
  project_key: string;
  type: string;
  agent_id: string;
  confidence: number;
  expires_ms: number;
}

/**
 * A copy's background catch-up: `step` once a turn of the event loop (the first after `afterMs`,
 * or at the next turn) until it returns true; a throw ends it and is handed to `failed`.
 */
export class TurnLoop {
  private running = false;

  constructor(
    private readonly step: () => boolean,
    private readonly failed: (error: unknown) => void,
  ) {}

  start(afterMs = 0): void {
    if (this.running) return;
    this.running = true;
    const turn = (): void => {
      try {
        if (this.step()) {
          this.running = false;
          return;
        }
      } catch (error) {
        this.running = false;
        this.failed(error);
        return;
      }
      setImmediate(turn);
    };
    if (afterMs > 0) setTimeout(turn, afterMs).unref();
    else setImmediate(turn);
  }
}
