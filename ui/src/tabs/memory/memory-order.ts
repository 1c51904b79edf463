// The Memory tab's order with no type filter: directives first, then docs, then memories (then
// skills and compiled entries). The list gets it from GET /memory?order=kind; search results,
// ranked by score, are grouped the same way here, keeping the score order inside each type.

import type { MemoryType } from "../../types.js";

export const TYPE_ORDER: readonly MemoryType[] = ["directive", "doc", "memory", "skill", "compiled"];

const rank = (type: MemoryType): number => {
  const index = TYPE_ORDER.indexOf(type);
  return index < 0 ? TYPE_ORDER.length : index;
};

/** A stable sort by type rank: the order inside each type is kept. */
export function sortByType<T extends { type: MemoryType }>(entries: readonly T[]): T[] {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => rank(a.entry.type) - rank(b.entry.type) || a.index - b.index)
    .map(({ entry }) => entry);
}
