import { tokensOfChars } from "../core/tokens.js";

// Filling a token budget best first (docs/search.md "Budgets").

export interface Packed<T> {
  kept: T[];
  /** Items that qualified but did not fit. */
  leftOut: number;
  /** Tokens the kept items take, as a JSON array. */
  tokens: number;
}

/**
 * The items, best first, that fit in `budget` tokens as a JSON array, none cut. `skip`: an item
 * that does not fit is left out and smaller ones after it may still come (a search's hits);
 * `prefix`: the first that does not fit ends the list (a delta, whose cursor moves past what
 * was kept and only that).
 */
export function packByTokens<T>(items: readonly T[], budget: number, mode: "skip" | "prefix"): Packed<T> {
  const kept: T[] = [];
  // "[]", and a comma before every item but the first.
  let chars = 2;
  let index = 0;
  for (; index < items.length; index++) {
    const size = (JSON.stringify(items[index])?.length ?? 0) + (kept.length > 0 ? 1 : 0);
    if (tokensOfChars(chars + size) > budget) {
      if (mode === "prefix") break;
      continue;
    }
    kept.push(items[index] as T);
    chars += size;
  }
  return { kept, leftOut: items.length - kept.length, tokens: tokensOfChars(chars) };
}
