import { createHash } from "node:crypto";
import type { EntityLine } from "./transfer-lines.js";

/**
 * How the reference MCP memory server's knowledge graph becomes memory: each entity one entry
 * (its name and type, then its observations), each relation a `relates_to` edge whose note is the
 * relation's type.
 */

/** Tags every imported entity carries, besides its entity type. */
export const MEMORY_JSON_TAG = "mcp-memory";

/**
 * An entity's entry id, derived from the project and the entity's name: a relation finds its
 * ends even in a later request of the same import, and importing the file again skips what it
 * already created. Shaped as a version-4 UUID like every other id.
 */
export function entityEntryId(project: string | null, name: string): string {
  const bytes = createHash("sha256").update(`cairn/mcp-memory\n${project ?? ""}\n${name}`, "utf8").digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function entityContent(entity: EntityLine): string {
  const type = entity.entityType.trim();
  const title = type === "" ? entity.name : `${entity.name} (${type})`;
  const observations = entity.observations.map((observation) => observation.trim()).filter((observation) => observation !== "");
  return [title, ...observations.map((observation) => `- ${observation}`)].join("\n");
}

export function entityTags(entity: EntityLine): string[] {
  const type = entity.entityType.trim().slice(0, 64).trim();
  return type === "" || type === MEMORY_JSON_TAG ? [MEMORY_JSON_TAG] : [MEMORY_JSON_TAG, type];
}

/** A relation's types between the same two entities share one edge: its note lists them. */
export const NOTE_SEPARATOR = "; ";
