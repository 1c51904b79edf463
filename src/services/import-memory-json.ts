import { createHash } from "node:crypto";
import type { Config } from "../core/config.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { MemoryRow } from "../store/memory.js";
import type { Store, Tx } from "../store/store.js";
import { announceEdge, requireSize, type Applied, type ImportContext } from "./import-checks.js";
import { newMemoryRow } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import { LineRefusal, type EntityLine, type RelationLine } from "./transfer-lines.js";

/**
 * How the reference MCP memory server's knowledge graph becomes memory: each entity one entry
 * (its name and type, then its observations), each relation a `relates_to` edge whose note is the
 * relation's type.
 */

/** Tags every imported entity carries, besides its entity type. */
const MEMORY_JSON_TAG = "mcp-memory";

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

function entityTags(entity: EntityLine): string[] {
  const type = entity.entityType.trim().slice(0, 64).trim();
  return type === "" || type === MEMORY_JSON_TAG ? [MEMORY_JSON_TAG] : [MEMORY_JSON_TAG, type];
}

/** A relation's types between the same two entities share one edge: its note lists them. */
const NOTE_SEPARATOR = "; ";

/** Writes a memory.json line's records inside the caller's transaction, with their events. */
export class ImportedMemoryJson {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly writes: MemoryWrites,
  ) {}

  async entity(tx: Tx, context: ImportContext, line: EntityLine, vector: Float32Array | null): Promise<Applied> {
    const id = entityEntryId(context.project, line.name);
    if (await this.store.transfer.memoryIdTaken(tx, id)) return "skipped";
    const content = entityContent(line);
    requireSize(this.config, "content", content);
    const tags = entityTags(line);
    const at = now();
    await this.writes.create(
      tx,
      context.caller.agentId,
      {
        ...newMemoryRow(
          context.caller.agentId,
          { type: "memory", project: context.project, scope: "project", content, confidence: 1, parents: [], tags, expiresAt: null },
          at,
        ),
        // Derived from the project and the entity's name, so relations find it and a second import skips it.
        id,
      },
      tags,
      vector,
      "imported",
    );
    return "entries";
  }

  async relation(tx: Tx, context: ImportContext, line: RelationLine): Promise<Applied> {
    const end = async (name: string): Promise<MemoryRow> => {
      const row = await this.store.transfer.liveMemoryById(tx, entityEntryId(context.project, name), now());
      if (!row) throw new LineRefusal(`entity ${name} not found`);
      return row;
    };
    const src = await end(line.from);
    const dst = await end(line.to);
    if (src.pk === dst.pk) throw new LineRefusal("an entity cannot be related to itself");
    const at = now();
    const existing = await this.store.transfer.edgeBetween(tx, src.pk, dst.pk, "relates_to");
    if (existing) {
      const types = existing.note === null || existing.note === "" ? [] : existing.note.split(NOTE_SEPARATOR);
      if (types.includes(line.relationType)) return "skipped";
      await this.store.transfer.setEdgeNote(tx, existing.pk, [...types, line.relationType].join(NOTE_SEPARATOR), at);
      await announceEdge(this.bus, tx, context, { id: existing.id, src: src.id, dst: dst.id, rel: "relates_to", project: context.project });
      return "edges";
    }
    const id = newId();
    await this.store.transfer.insertEdge(tx, {
      id,
      srcPk: src.pk,
      dstPk: dst.pk,
      rel: "relates_to",
      note: line.relationType,
      project: context.project,
      agentId: context.caller.agentId,
      createdAt: at,
      updatedAt: at,
    });
    await announceEdge(this.bus, tx, context, { id, src: src.id, dst: dst.id, rel: "relates_to", project: context.project });
    return "edges";
  }
}
