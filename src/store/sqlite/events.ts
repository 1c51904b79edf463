import type { EventAppend } from "../sql/events.js";

// One writer runs one transaction at a time, so seqs are drawn, and become visible, in commit order
// without more ado.
export const sqliteEventAppend: EventAppend = (_tx, insert) => insert();
