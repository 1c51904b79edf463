import type { Config } from "../core/config.js";
import { newId } from "../core/ids.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { MemoryRow } from "../store/memory.js";
import type { Store, Tx } from "../store/store.js";
import type { Caller } from "./caller.js";
import { entityContent, entityEntryId, entityTags, NOTE_SEPARATOR } from "./import-memory-json.js";
import { contentKey, newMemoryRow } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import {
  EXPORT_FORMAT,
  LineRefusal,
  type DecisionLine,
  type EdgeLine,
  type EntityLine,
  type EntryLine,
  type ParsedLine,
  type ProjectLine,
  type RelationLine,
  type TaskLine,
} from "./transfer-lines.js";
import type { ImportCounts } from "../wire/transfer.js";

/** What one line did: created a record of a kind, found it there already, or (a header) nothing. */
export type Applied = keyof ImportCounts | "skipped" | "nothing";

export interface ImportContext {
  caller: Caller;
  /** The project memory.json entities go to. */
  project: string | null;
}

const MAX_RESULT_BYTES = 65536;

const COMPILED_NOT_IMPORTED = "compiled entries are not imported: run cairn compile against this server to make them with their anchors";

/**
 * Writes the records of one import line inside the caller's transaction, with their events,
 * keeping the ids, authors, versions and times the line gives; refuses a line it cannot write
 * whole by throwing a LineRefusal before anything of it is kept.
 */
export class ImportedRecords {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly writes: MemoryWrites,
  ) {}

  /** In the caller's transaction: one line's records and events, or a LineRefusal. */
  async apply(tx: Tx, context: ImportContext, parsed: ParsedLine, vector: Float32Array | null): Promise<Applied> {
    switch (parsed.kind) {
      case "header":
        if (parsed.line.format > EXPORT_FORMAT) throw new LineRefusal(`export format ${parsed.line.format} is newer than this server reads (${EXPORT_FORMAT})`);
        return "nothing";
      case "project":
        return this.project(tx, context, parsed.line);
      case "entry":
        return this.entry(tx, context, parsed.line, vector);
      case "edge":
        return this.edge(tx, context, parsed.line);
      case "decision":
        return this.decision(tx, context, parsed.line);
      case "task":
        return this.task(tx, context, parsed.line);
      case "entity":
        return this.entity(tx, context, parsed.line, vector);
      case "relation":
        return this.relation(tx, context, parsed.line);
    }
  }

  private async requireProject(tx: Tx, project: string | null): Promise<void> {
    if (project !== null && !(await this.store.projects.byId(tx, project))) {
      throw new LineRefusal(`project ${project} does not exist here: import its project line first`);
    }
  }

  private requireSize(field: string, text: string): void {
    if (Buffer.byteLength(text, "utf8") > this.config.MAX_CONTENT_BYTES) throw new LineRefusal(`${field} exceeds ${this.config.MAX_CONTENT_BYTES} bytes`);
  }

  private async project(tx: Tx, context: ImportContext, line: ProjectLine): Promise<Applied> {
    if (await this.store.projects.byId(tx, line.id)) return "skipped";
    await this.store.projects.insert(tx, { id: line.id, name: line.name, description: line.description, owner: line.owner, created_at: line.created_at });
    await this.bus.emit(tx, {
      type: "project.created",
      agentId: context.caller.agentId,
      project: line.id,
      payload: { project: line.id, owner: line.owner, reason: "imported" },
    });
    return "projects";
  }

  private async entry(tx: Tx, context: ImportContext, line: EntryLine, vector: Float32Array | null): Promise<Applied> {
    if (line.scope === "agent") throw new LineRefusal("private entries are not imported: only their author may write them");
    if (await this.store.transfer.memoryIdTaken(tx, line.id)) return "skipped";
    // A compiled entry stands for an anchor, which an export does not carry: without one, nothing
    // would mark what it grounds stale or rewrite it when its code changes (CONTRACT §18).
    if (line.type === "compiled") throw new LineRefusal(COMPILED_NOT_IMPORTED);
    await this.requireProject(tx, line.project);
    this.requireSize("content", line.content);
    const tags = [...new Set(line.tags)];
    // The entry keeps the id, author, times and history the line gives; the event is the importer's.
    await this.writes.create(
      tx,
      context.caller.agentId,
      {
        id: line.id,
        type: line.type,
        agent_id: line.agent_id,
        project: line.project,
        scope: line.scope,
        content: line.content,
        content_key: contentKey(line.content),
        confidence: line.type === "directive" ? 1 : line.confidence,
        parents: JSON.stringify([...new Set(line.parents)]),
        tags: JSON.stringify(tags),
        headline: line.headline,
        created_at: line.created_at,
        updated_at: line.updated_at,
        version: line.version,
        expires_at: line.expires_at,
        read_count: line.read_count,
        distinct_readers: line.distinct_readers,
        reinforcement_count: line.reinforcement_count,
        last_reinforced_at: line.last_reinforced_at,
        superseded_by: line.superseded_by,
        embedding_model: null,
        source: line.source ? JSON.stringify(line.source) : null,
        source_kind: line.source?.kind ?? null,
        deleted_at: null,
        // A stale mark belongs to this server's anchors, which an import does not bring.
        stale_since: null,
        stale_reason: null,
      },
      tags,
      vector,
      "imported",
    );
    return "entries";
  }

  /** A live, shared entry an imported edge may touch. */
  private async edgeEnd(tx: Tx, id: string, what: string): Promise<MemoryRow> {
    const row = await this.store.transfer.liveMemoryById(tx, id, now());
    if (!row) throw new LineRefusal(`${what} ${id} not found`);
    if (row.scope === "agent") throw new LineRefusal("edges touching private entries are not imported");
    return row;
  }

  private async linked(tx: Tx, context: ImportContext, edge: { id: string; src: string; dst: string; rel: string; project: string | null }): Promise<void> {
    await this.bus.emit(tx, {
      type: "graph.linked",
      agentId: context.caller.agentId,
      project: edge.project,
      payload: { edge_id: edge.id, src: edge.src, dst: edge.dst, rel: edge.rel, project: edge.project, reason: "imported" },
    });
  }

  private async edge(tx: Tx, context: ImportContext, line: EdgeLine): Promise<Applied> {
    if (await this.store.transfer.edgeIdTaken(tx, line.id)) return "skipped";
    const src = await this.edgeEnd(tx, line.src, "entry");
    const dst = await this.edgeEnd(tx, line.dst, "entry");
    if (src.pk === dst.pk) throw new LineRefusal("an entry cannot be linked to itself");
    if (src.project !== null && dst.project !== null && src.project !== dst.project) throw new LineRefusal("entries of different projects cannot be linked");
    // The same relation between the same entries under another id is the same edge.
    if (await this.store.transfer.edgeBetween(tx, src.pk, dst.pk, line.rel)) return "skipped";
    const project = src.project ?? dst.project;
    await this.store.transfer.insertEdge(tx, {
      id: line.id,
      srcPk: src.pk,
      dstPk: dst.pk,
      rel: line.rel,
      note: line.note,
      project,
      agentId: line.agent_id,
      createdAt: line.created_at,
      updatedAt: line.updated_at,
    });
    await this.linked(tx, context, { id: line.id, src: src.id, dst: dst.id, rel: line.rel, project });
    return "edges";
  }

  /**
   * A decision as it was recorded: its author, time and links are kept as written, whether or not
   * what they name is here (the task's comment about it comes with the task's line). When the
   * decision it supersedes is here, that one is marked superseded by it, as recording it did there.
   */
  private async decision(tx: Tx, context: ImportContext, line: DecisionLine): Promise<Applied> {
    if (await this.store.decisions.byId(tx, line.id)) return "skipped";
    await this.requireProject(tx, line.project);
    this.requireSize("rationale", line.rationale);
    const older = line.supersedes === null ? undefined : await this.store.decisions.byId(tx, line.supersedes);
    if (older && older.project !== line.project) throw new LineRefusal(`decision ${older.id} belongs to another project`);
    if (older && older.superseded_by !== null && older.superseded_by !== line.id) throw new LineRefusal(`decision ${older.id} is already superseded`);
    const tags = [...new Set(line.tags)];
    const alternatives = line.alternatives.map((alternative) => ({ option: alternative.option, reason_rejected: alternative.reason_rejected ?? null }));
    await this.store.decisions.insert(
      tx,
      {
        id: line.id,
        project: line.project,
        agent_id: line.agent_id,
        task_id: line.task_id,
        decision: line.decision,
        rationale: line.rationale,
        alternatives: JSON.stringify(alternatives),
        memory_refs: JSON.stringify([...new Set(line.memory_refs)]),
        tags: JSON.stringify(tags),
        supersedes: line.supersedes,
        superseded_by: line.superseded_by,
        created_at: line.created_at,
      },
      tags,
    );
    if (older && older.superseded_by === null) await this.store.decisions.markSuperseded(tx, older.pk, line.id);
    await this.bus.emit(tx, {
      type: "decision.recorded",
      agentId: context.caller.agentId,
      project: line.project,
      payload: { decision_id: line.id, project: line.project, task_id: line.task_id, supersedes: line.supersedes, reason: "imported" },
    });
    return "decisions";
  }

  private async task(tx: Tx, context: ImportContext, line: TaskLine): Promise<Applied> {
    if (await this.store.transfer.taskIdTaken(tx, line.id)) return "skipped";
    await this.requireProject(tx, line.project);
    this.requireSize("description", line.description);
    const result = line.result === undefined || line.result === null ? null : JSON.stringify(line.result);
    if (result !== null && Buffer.byteLength(result, "utf8") > MAX_RESULT_BYTES) throw new LineRefusal(`result exceeds ${MAX_RESULT_BYTES} bytes`);
    const dependencies: number[] = [];
    for (const id of new Set(line.depends_on)) {
      const pk = await this.store.transfer.taskPkById(tx, id);
      if (pk === undefined) throw new LineRefusal(`dependency ${id} not found`);
      dependencies.push(pk);
    }
    const tags = [...new Set(line.tags)];
    const pk = await this.store.tasks.insert(
      tx,
      {
        id: line.id,
        title: line.title,
        description: line.description,
        status: line.status,
        created_by: line.created_by,
        assigned_to: line.assigned_to,
        reserved: line.reserved ? 1 : 0,
        project: line.project,
        priority: line.priority,
        tags: JSON.stringify(tags),
        due_at: line.due_at,
        expected_outcome: line.expected_outcome,
        result,
        created_at: line.created_at,
        updated_at: line.updated_at,
        claimed_at: line.claimed_at,
        completed_at: line.completed_at,
        lease_expires_at: line.lease_expires_at,
        // An imported task stands alone: its run (if it had one) is not part of an export.
        run_id: null,
        node_key: null,
        gate: null,
      },
      tags,
      dependencies,
    );
    for (const comment of line.comments) await this.store.tasks.insertComment(tx, pk, comment);
    for (const outcome of line.outcomes) await this.store.tasks.insertOutcome(tx, { task_pk: pk, ...outcome, tags: JSON.stringify(outcome.tags) });
    await this.bus.emit(tx, {
      type: "task.created",
      agentId: context.caller.agentId,
      project: line.project,
      payload: { task_id: line.id, project: line.project, status: line.status, assigned_to: line.assigned_to, created_by: line.created_by, reason: "imported" },
    });
    return "tasks";
  }

  private async entity(tx: Tx, context: ImportContext, line: EntityLine, vector: Float32Array | null): Promise<Applied> {
    const id = entityEntryId(context.project, line.name);
    if (await this.store.transfer.memoryIdTaken(tx, id)) return "skipped";
    const content = entityContent(line);
    this.requireSize("content", content);
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

  private async relation(tx: Tx, context: ImportContext, line: RelationLine): Promise<Applied> {
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
      await this.linked(tx, context, { id: existing.id, src: src.id, dst: dst.id, rel: "relates_to", project: context.project });
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
    await this.linked(tx, context, { id, src: src.id, dst: dst.id, rel: "relates_to", project: context.project });
    return "edges";
  }
}
