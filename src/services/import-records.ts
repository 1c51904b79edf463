import type { Config } from "../core/config.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { MemoryRow } from "../store/memory.js";
import type { Store, Tx } from "../store/store.js";
import { isReservedAgentId } from "./agents.js";
import { anchorName } from "./compile/entries.js";
import { announceEdge, requireProject, requireSize, type Applied, type ImportContext } from "./import-checks.js";
import { ImportedCoordination } from "./import-coordination.js";
import { ImportedMemoryJson } from "./import-memory-json.js";
import { contentKey } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import { EXPORT_FORMAT, LineRefusal, type AgentLine, type EdgeLine, type EntryLine, type ParsedLine, type ProjectLine } from "./transfer-lines.js";

export type { Applied, ImportContext } from "./import-checks.js";

const COMPILED_WITHOUT_ANCHOR = "a compiled entry comes with its anchor (format 2): without one, compile would neither rewrite it nor mark what it grounds stale";

/**
 * Writes the records of one import line inside the caller's transaction, with their events,
 * keeping the ids, authors, versions and times the line gives; refuses a line it cannot write
 * whole by throwing a LineRefusal before anything of it is kept.
 */
export class ImportedRecords {
  private readonly coordination: ImportedCoordination;
  private readonly memoryJson: ImportedMemoryJson;

  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly writes: MemoryWrites,
  ) {
    this.coordination = new ImportedCoordination(store, bus, config);
    this.memoryJson = new ImportedMemoryJson(store, bus, config, writes);
  }

  /** In the caller's transaction: one line's records and events, or a LineRefusal. */
  async apply(tx: Tx, context: ImportContext, parsed: ParsedLine, vector: Float32Array | null): Promise<Applied> {
    switch (parsed.kind) {
      case "header":
        if (parsed.line.format > EXPORT_FORMAT) throw new LineRefusal(`export format ${parsed.line.format} is newer than this server reads (${EXPORT_FORMAT})`);
        return "nothing";
      case "project":
        return this.project(tx, context, parsed.line);
      case "agent":
        return this.agent(tx, context, parsed.line);
      case "entry":
        return this.entry(tx, context, parsed.line, vector);
      case "edge":
        return this.edge(tx, context, parsed.line);
      case "decision":
        return this.coordination.decision(tx, context, parsed.line);
      case "blueprint":
        return this.coordination.blueprint(tx, context, parsed.line);
      case "task":
        return this.coordination.task(tx, context, parsed.line);
      case "run":
        return this.coordination.run(tx, context, parsed.line);
      case "message":
        return this.coordination.message(tx, context, parsed.line);
      case "handoff":
        return this.coordination.handoff(tx, context, parsed.line);
      case "entity":
        return this.memoryJson.entity(tx, context, parsed.line, vector);
      case "relation":
        return this.memoryJson.relation(tx, context, parsed.line);
    }
  }

  /** A project with its members, named by id whether or not those agents are here. */
  private async project(tx: Tx, context: ImportContext, line: ProjectLine): Promise<Applied> {
    if (await this.store.projects.byId(tx, line.id)) return "skipped";
    await this.store.projects.insert(tx, { id: line.id, name: line.name, description: line.description, owner: line.owner, created_at: line.created_at });
    await this.bus.emit(tx, {
      type: "project.created",
      agentId: context.caller.agentId,
      project: line.id,
      payload: { project: line.id, owner: line.owner, reason: "imported" },
    });
    for (const member of line.members) {
      if (!(await this.store.projects.addMember(tx, line.id, member.agent_id, member.joined_at))) continue;
      await this.bus.emit(tx, { type: "project.joined", agentId: context.caller.agentId, project: line.id, payload: { project: line.id, agent_id: member.agent_id, reason: "imported" } });
    }
    return "projects";
  }

  /**
   * An agent with its role and no key: nobody can act as it until an owner gives it one, and its
   * id, like a deleted agent's, can be taken by no one else meanwhile.
   */
  private async agent(tx: Tx, context: ImportContext, line: AgentLine): Promise<Applied> {
    if (isReservedAgentId(line.agent_id)) throw new LineRefusal(`${line.agent_id} is a reserved id`);
    if (await this.store.agents.get(tx, line.agent_id)) return "skipped";
    // Its current project only if that project is here: it is where its writes would go.
    const currentProject = line.current_project !== null && (await this.store.projects.byId(tx, line.current_project)) ? line.current_project : null;
    const { kind: _kind, ...agent } = line;
    await this.store.transfer.insertAgent(tx, { ...agent, current_project: currentProject });
    await this.bus.emit(
      tx,
      line.deleted_at === null
        ? { type: "agent.registered", agentId: context.caller.agentId, project: null, payload: { agent_id: line.agent_id, role: line.role, reason: "imported" } }
        : { type: "agent.deleted", agentId: context.caller.agentId, project: null, payload: { agent_id: line.agent_id, reason: "imported" } },
    );
    return "agents";
  }

  /** An entry, and for a compiled entry its anchor, so the next compile of that code finds it (CONTRACT §18). */
  private async entry(tx: Tx, context: ImportContext, line: EntryLine, vector: Float32Array | null): Promise<Applied> {
    if (line.scope === "agent") throw new LineRefusal("private entries are not imported: only their author may write them");
    if (await this.store.transfer.memoryIdTaken(tx, line.id)) return "skipped";
    const anchor = line.anchor ?? null;
    if (line.type === "compiled" && anchor === null) throw new LineRefusal(COMPILED_WITHOUT_ANCHOR);
    if (line.type !== "compiled" && anchor !== null) throw new LineRefusal("only a compiled entry has an anchor");
    await requireProject(this.store, tx, line.project);
    requireSize(this.config, "content", line.content);
    if (anchor !== null && (await this.store.compile.anchorSha(tx, line.project, anchor.path, anchor.symbol)) !== null) {
      throw new LineRefusal(`${anchorName(anchor)} is compiled here already, by another entry`);
    }
    const tags = [...new Set(line.tags)];
    // A peer's copy keeps its origin, so it is held here as a sync would have left it: read-only,
    // changed only by that origin's newer versions, which a link to the origin from here brings
    // (with no origin it would pass for an entry written here, in this instance's merkle summary and
    // feeds too, and refuse its origin's versions). A copy of an entry written here comes home.
    const origin = line.source?.kind === "mesh" ? line.source.origin : null;
    const source = origin === this.writes.localOrigin ? null : (line.source ?? null);
    // The entry keeps the id, author, times and history the line gives; the event is the importer's.
    const stored = await this.writes.insert(
      tx,
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
        source: source ? JSON.stringify(source) : null,
        source_kind: source?.kind ?? null,
        deleted_at: null,
        // A stale mark names the code that changed, by path and symbol: it holds wherever that code is compiled.
        stale_since: line.stale_since ?? null,
        stale_reason: line.stale_reason ? JSON.stringify(line.stale_reason) : null,
      },
      tags,
      vector,
    );
    if (source?.kind === "mesh") await this.store.mesh.setOrigin(tx, stored.pk, source.origin);
    const row = await this.writes.announce(tx, context.caller.agentId, stored, "imported");
    if (anchor !== null) {
      await this.store.compile.insert(tx, {
        project: line.project,
        path: anchor.path,
        symbol: anchor.symbol,
        kind: anchor.kind,
        lang: anchor.lang,
        start_line: anchor.start_line,
        end_line: anchor.end_line,
        sha: anchor.sha,
        previous_sha: anchor.previous_sha,
        signature: anchor.signature,
        memory_pk: row.pk,
        git_commit: anchor.git_commit,
        created_at: anchor.created_at,
        updated_at: anchor.updated_at,
      });
    }
    return "entries";
  }

  /** A live, shared entry an imported edge may touch. */
  private async edgeEnd(tx: Tx, id: string, what: string): Promise<MemoryRow> {
    const row = await this.store.transfer.liveMemoryById(tx, id, now());
    if (!row) throw new LineRefusal(`${what} ${id} not found`);
    if (row.scope === "agent") throw new LineRefusal("edges touching private entries are not imported");
    return row;
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
    await announceEdge(this.bus, tx, context, { id: line.id, src: src.id, dst: dst.id, rel: line.rel, project });
    return "edges";
  }
}
