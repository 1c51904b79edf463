import { createHash } from "node:crypto";
import type { Config } from "../core/config.js";
import type { EventBus } from "../events/bus.js";
import type { Store, Tx } from "../store/store.js";
import { blueprintDocument, type BlueprintDocument } from "../wire/blueprints.js";
import { checkBlueprint } from "./blueprints/validate.js";
import { requireProject, requireSize, type Applied, type ImportContext } from "./import-checks.js";
import { LineRefusal, type BlueprintLine, type DecisionLine, type HandoffLine, type MessageLine, type RunLine, type TaskLine } from "./transfer-lines.js";

const MAX_RESULT_BYTES = 65536;

/** A blueprint document as a save checks it; a LineRefusal naming its first problem otherwise. */
function checkedDocument(document: Record<string, unknown>): BlueprintDocument {
  const parsed = blueprintDocument.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LineRefusal(`the blueprint's document has problems: ${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"}`);
  }
  const checked = checkBlueprint(parsed.data);
  if (!checked.ok) {
    const problem = checked.problems[0];
    throw new LineRefusal(`the blueprint's document has problems: ${problem ? `${problem.path}: ${problem.message}` : "invalid"}`);
  }
  return parsed.data;
}

/**
 * Writes the import lines of the team's work — decisions, blueprints, tasks, runs, messages and
 * handoffs — inside the caller's transaction, each with its event, keeping the ids, authors and
 * times the line gives.
 */
export class ImportedCoordination {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
  ) {}

  /**
   * A decision as it was recorded: its author, time and links are kept as written, whether or not
   * what they name is here (the task's comment about it comes with the task's line). When the
   * decision it supersedes is here, that one is marked superseded by it, as recording it did there.
   */
  async decision(tx: Tx, context: ImportContext, line: DecisionLine): Promise<Applied> {
    if (await this.store.decisions.byId(tx, line.id)) return "skipped";
    await requireProject(this.store, tx, line.project);
    requireSize(this.config, "rationale", line.rationale);
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

  /**
   * A blueprint version with the document it was saved with, checked as a save checks it (a
   * document this server would refuse is refused: a run of it could not be instantiated here).
   */
  async blueprint(tx: Tx, context: ImportContext, line: BlueprintLine): Promise<Applied> {
    if ((await this.store.transfer.blueprintPkById(tx, line.id)) !== undefined) return "skipped";
    await requireProject(this.store, tx, line.project);
    const checked = checkedDocument(line.document);
    if (checked.name !== line.name) throw new LineRefusal(`the document is named ${checked.name}, the blueprint ${line.name}`);
    if (await this.store.transfer.blueprintVersionTaken(tx, line.project, line.name, line.version)) {
      throw new LineRefusal(`version ${line.version} of blueprint ${line.name} exists here under another id`);
    }
    // Stored as it was there: the same text, so the same hash, and a save of the same document is recognised.
    const document = JSON.stringify(line.document);
    await this.store.blueprints.insert(tx, {
      id: line.id,
      project: line.project,
      name: line.name,
      version: line.version,
      document,
      doc_hash: createHash("sha256").update(document, "utf8").digest("hex"),
      node_count: checked.nodes.length,
      created_by: line.created_by,
      created_at: line.created_at,
    });
    await this.bus.emit(tx, {
      type: "blueprint.saved",
      agentId: context.caller.agentId,
      project: line.project,
      payload: { blueprint_id: line.id, name: line.name, project: line.project, version: line.version, reason: "imported" },
    });
    return "blueprints";
  }

  /**
   * A task as it stood, claim and lease included: a claim whose lease has lapsed here is released
   * by the lease sweeper as it would have been there. A run's task keeps its run and node key; the
   * run's line comes after the tasks and ties them together.
   */
  async task(tx: Tx, context: ImportContext, line: TaskLine): Promise<Applied> {
    if (await this.store.transfer.taskIdTaken(tx, line.id)) return "skipped";
    await requireProject(this.store, tx, line.project);
    requireSize(this.config, "description", line.description);
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
        run_id: line.run_id ?? null,
        node_key: line.node_key ?? null,
        gate: line.gate ?? null,
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

  /** A run with its nodes, each tied to its task (imported before it), whole or not at all. */
  async run(tx: Tx, context: ImportContext, line: RunLine): Promise<Applied> {
    if (await this.store.transfer.runIdTaken(tx, line.id)) return "skipped";
    await requireProject(this.store, tx, line.project);
    const blueprintPk = await this.store.transfer.blueprintPkById(tx, line.blueprint_id);
    if (blueprintPk === undefined) throw new LineRefusal(`blueprint ${line.blueprint_id} not found`);
    const taskPk = async (id: string | null, what: string): Promise<number | null> => {
      if (id === null) return null;
      const pk = await this.store.transfer.taskPkById(tx, id);
      if (pk === undefined) throw new LineRefusal(`${what} ${id} not found`);
      return pk;
    };
    const nodes = [];
    for (const node of line.nodes) {
      nodes.push({
        ...node,
        task_pk: await taskPk(node.task_id, `task of node ${node.key}:`),
        gate_task_pk: await taskPk(node.gate_task_id, `task the gate of node ${node.key} waits for:`),
      });
    }
    const runPk = await this.store.blueprintRuns.insertRun(tx, {
      id: line.id,
      blueprint_pk: blueprintPk,
      project: line.project,
      params: JSON.stringify(line.params),
      status: line.status,
      created_by: line.created_by,
      created_at: line.created_at,
      updated_at: line.updated_at,
    });
    for (const node of nodes) {
      await this.store.blueprintRuns.insertNode(tx, {
        run_pk: runPk,
        node_id: node.node_id,
        key: node.key,
        task_pk: node.task_pk,
        state: node.state,
        // A fan-out's item is stored as JSON, null included; other nodes have none.
        item: node.item_index === null ? null : JSON.stringify(node.item ?? null),
        item_index: node.item_index,
        attempt: node.attempt,
        anchors: JSON.stringify(node.anchors),
        gate_task_pk: node.gate_task_pk,
      });
    }
    const run = await this.store.blueprintRuns.byPk(tx, runPk);
    if (!run) throw new LineRefusal(`run ${line.id} was not stored`);
    await this.bus.emit(tx, {
      type: "blueprint.run.started",
      agentId: context.caller.agentId,
      project: line.project,
      payload: { run_id: run.id, blueprint_id: run.blueprint_id, name: run.blueprint_name, version: run.blueprint_version, project: run.project, reason: "imported" },
    });
    return "runs";
  }

  /**
   * A message with each recipient's read state as it was: a message read or consumed there is not
   * in anyone's inbox here, one unread is. Recipients are kept by id, like every author.
   */
  async message(tx: Tx, context: ImportContext, line: MessageLine): Promise<Applied> {
    if (await this.store.transfer.messageIdTaken(tx, line.id)) return "skipped";
    await requireProject(this.store, tx, line.project);
    requireSize(this.config, "body", line.body);
    const recipients = [...new Map(line.recipients.map((recipient) => [recipient.agent_id, recipient])).values()];
    const pk = await this.store.messages.insert(
      tx,
      { id: line.id, sender: line.from, recipient: line.to, project: line.project, subject: line.subject, body: line.body, reply_to: line.reply_to, created_at: line.created_at },
      [],
    );
    await this.store.transfer.insertRecipients(tx, pk, recipients);
    await this.bus.emit(tx, {
      type: "message.received",
      agentId: context.caller.agentId,
      project: line.project,
      audience: [...new Set([line.from, ...recipients.map((recipient) => recipient.agent_id)])],
      payload: { message_id: line.id, from: line.from, to: line.to, project: line.project, reply_to: line.reply_to, recipients: recipients.length, reason: "imported" },
    });
    return "messages";
  }

  async handoff(tx: Tx, context: ImportContext, line: HandoffLine): Promise<Applied> {
    if (await this.store.transfer.handoffIdTaken(tx, line.id)) return "skipped";
    await this.store.handoffs.insert(tx, {
      id: line.id,
      agent_id: line.agent_id,
      host: line.host,
      summary: line.summary,
      in_progress: JSON.stringify(line.in_progress),
      next_steps: JSON.stringify(line.next_steps),
      memory_refs: JSON.stringify(line.memory_refs),
      created_at: line.created_at,
    });
    await this.bus.emit(tx, {
      type: "session.handoff_saved",
      agentId: context.caller.agentId,
      project: null,
      payload: { handoff_id: line.id, agent_id: line.agent_id, reason: "imported" },
    });
    return "handoffs";
  }
}
