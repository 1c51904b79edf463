import { invalid } from "../core/errors.js";

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Cursors are opaque to clients: base64url JSON of the last row's sort key. */
export const encodeCursor = (key: unknown): string => Buffer.from(JSON.stringify(key)).toString("base64url");

export function decodeCursor<T>(cursor: string | undefined, isValid: (value: unknown) => value is T): T | null {
  if (cursor === undefined) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (isValid(value)) return value;
  } catch {
    // fall through to the validation error
  }
  throw invalid("cursor", "invalid cursor");
}

/**
 * Fetches one row more than asked, to know whether a next page exists without a count query.
 */
export function pageOf<Row, Item>(rows: Row[], limit: number, toItem: (row: Row) => Item, keyOf: (row: Row) => unknown): Page<Item> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept.at(-1);
  return { items: kept.map(toItem), nextCursor: more && last !== undefined ? encodeCursor(keyOf(last)) : null };
}

export const isKeyset = (value: unknown): value is { at: string; pk: number } =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { at?: unknown }).at === "string" &&
  Number.isSafeInteger((value as { pk?: unknown }).pk);

/** A keyset that also carries a rank (listings ordered by kind first). */
export const isRankedKeyset = (value: unknown): value is { rank: number; at: string; pk: number } =>
  isKeyset(value) && Number.isSafeInteger((value as { rank?: unknown }).rank);
