// The Memory tab's order with no type filter: directives first, then docs, then memories (then
// skills and compiled entries). The list gets it from GET /memory?order=kind. Search results are
// not grouped: they keep the server's order, best score first, so a weak directive never sits
// above the best match.

import type { MemoryType } from "../../../../src/wire/memory.js";

export const TYPE_ORDER: readonly MemoryType[] = ["directive", "doc", "memory", "skill", "compiled"];
