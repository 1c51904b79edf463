import { forbidden } from "../../core/errors.js";
import type { MemoryRow } from "../../store/memory.js";
import type { MeshSource } from "../../wire/memory.js";

/**
 * Copies of a peer's entries (CONTRACT §16) change only at their origin: here they are read-only
 * to every agent, the owner and the archivist alike. What a copy is, and the refusal, in one place.
 */
export const isCopy = (row: Pick<MemoryRow, "source_kind">): boolean => row.source_kind === "mesh";

/** The name of the instance a copy belongs to. */
function originNameOf(row: Pick<MemoryRow, "source">): string {
  const source = row.source === null ? null : (JSON.parse(row.source) as Partial<MeshSource>);
  return source?.origin_name ?? "another instance";
}

/** 403 for any change to a copy; nothing for an entry written here. */
export function refuseCopyChange(row: Pick<MemoryRow, "source_kind" | "source">): void {
  if (isCopy(row)) throw forbidden(`entry belongs to peer ${originNameOf(row)}`);
}
