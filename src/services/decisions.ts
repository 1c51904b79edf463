import type { Config } from "../core/config.js";
import { checkByteSize } from "../core/byte-size.js";
import { ambiguousIdPrefix, conflict, invalid, notFound } from "../core/errors.js";
import { newId, parseIdRef } from "../core/ids.js";
import { now } from "../core/time.js";
import type { EventBus } from "../events/bus.js";
import type { DecisionRow } from "../store/decisions.js";
import type { Reader, Store, Tx } from "../store/store.js";
import type { TaskRow } from "../store/tasks.js";
import { checkProjectWrite } from "./access.js";
import { viewpointOf, type Caller } from "./caller.js";
import { toDecision } from "./decision-records.js";
import { keywordTerms } from "./keyword-terms.js";
import type { MemoryWrites } from "./memory-writes.js";
import { decodeCursor, isKeyset, pageOf, type Page } from "./paging.js";
import type { TaskService } from "./tasks.js";
import type { Decision, DecisionAlternative } from "../wire/decisions.js";

export interface RecordDecisionInput {
  decision: string;
  rationale: string;
  alternatives?: { option: string; reason_rejected?: string | null | undefined }[] | undefined;
  project?: string | null | undefined;
  task_id?: string | null | undefined;
  memory_refs?: string[] | undefined;
  tags?: string[] | undefined;
  supersedes?: string | null | undefined;
}

export interface DecisionListInput {
  project?: string | null | undefined;
  task_id?: string | undefined;
  agent?: string | undefined;
  tag?: string | undefined;
  q?: string | undefined;
  include_superseded?: boolean | undefined;
  limit: number;
  cursor?: string | undefined;
}

const OTHER_PROJECT = "belongs to another project than the decision";

/**
 * Decisions (CONTRACT §12): recorded once, never edited; a later decision may supersede an earlier
 * one of its project, which is the one change a decision undergoes. What a decision names (its
 * task, its entries, the decision it supersedes) must be visible to its author (404 otherwise,
 * as for anything unseen) and of the decision's own project (422), so a decision never points its
 * readers at what they may not see.
 */
export class DecisionService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
    private readonly tasks: TaskService,
    private readonly writes: MemoryWrites,
  ) {}

  /** A decision the caller can see, by full id or unique prefix; anything else is 404. Read in `tx`, it is held until `tx` ends. */
  private async resolve(r: Reader, caller: Caller, ref: string, path = "id"): Promise<DecisionRow> {
    const rows = await this.store.decisions.findVisible(r, viewpointOf(caller), parseIdRef(ref, path));
    if (rows.length > 1) throw ambiguousIdPrefix();
    const row = rows[0];
    if (!row) throw notFound("decision");
    return row;
  }

  private async taskOf(tx: Tx, caller: Caller, ref: string, project: string | null): Promise<TaskRow> {
    parseIdRef(ref, "task_id");
    const task = await this.tasks.resolve(tx, caller, ref);
    if (task.project !== project) throw invalid("task_id", `the task ${OTHER_PROJECT}`);
    return task;
  }

  /** The entries' full ids, each once, in the order given. */
  private async memoryRefs(tx: Tx, caller: Caller, refs: string[], project: string | null): Promise<string[]> {
    const ids: string[] = [];
    for (const [index, ref] of refs.entries()) {
      const path = `memory_refs.${index}`;
      const entry = await this.writes.find(tx, viewpointOf(caller), parseIdRef(ref, path));
      if (!entry) throw notFound("memory entry");
      // Only its author could follow the reference: a shared record may not lean on it.
      if (entry.scope === "agent") throw invalid(path, "a private entry cannot be referenced by a decision");
      if (entry.project !== project) throw invalid(path, `the entry ${OTHER_PROJECT}`);
      if (!ids.includes(entry.id)) ids.push(entry.id);
    }
    return ids;
  }

  private async superseded(tx: Tx, caller: Caller, ref: string, project: string | null): Promise<DecisionRow> {
    const older = await this.resolve(tx, caller, ref, "supersedes");
    if (older.project !== project) throw invalid("supersedes", `the decision ${OTHER_PROJECT}`);
    if (older.superseded_by !== null) throw conflict("decision already superseded");
    return older;
  }

  async record(caller: Caller, input: RecordDecisionInput): Promise<Decision> {
    checkByteSize(input.rationale, this.config.MAX_CONTENT_BYTES, "rationale exceeds");
    const project =
      input.project === undefined ? ((await this.store.agents.get(this.store.reader, caller.agentId))?.current_project ?? null) : input.project;
    return this.store.transaction(async (tx) => {
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const task = input.task_id ? await this.taskOf(tx, caller, input.task_id, project) : null;
      const memoryRefs = await this.memoryRefs(tx, caller, input.memory_refs ?? [], project);
      const older = input.supersedes ? await this.superseded(tx, caller, input.supersedes, project) : null;
      const tags = [...new Set(input.tags ?? [])];
      const alternatives: DecisionAlternative[] = (input.alternatives ?? []).map((alternative) => ({
        option: alternative.option,
        reason_rejected: alternative.reason_rejected ?? null,
      }));
      const id = newId();
      const pk = await this.store.decisions.insert(
        tx,
        {
          id,
          project,
          agent_id: caller.agentId,
          task_id: task?.id ?? null,
          decision: input.decision,
          rationale: input.rationale,
          alternatives: JSON.stringify(alternatives),
          memory_refs: JSON.stringify(memoryRefs),
          tags: JSON.stringify(tags),
          supersedes: older?.id ?? null,
          superseded_by: null,
          created_at: now(),
        },
        tags,
      );
      // The older row is held since it was read (PostgreSQL), so this only guards the invariant.
      if (older && !(await this.store.decisions.markSuperseded(tx, older.pk, id))) throw conflict("decision already superseded");
      await this.bus.emit(tx, {
        type: "decision.recorded",
        agentId: caller.agentId,
        project,
        payload: { decision_id: id, project, task_id: task?.id ?? null, supersedes: older?.id ?? null },
      });
      if (task) await this.tasks.commentIn(tx, caller, task, `decision ${id}: ${input.decision}`);
      return toDecision((await this.store.decisions.byPk(tx, pk)) as DecisionRow);
    });
  }

  async get(caller: Caller, ref: string): Promise<Decision> {
    return toDecision(await this.resolve(this.store.reader, caller, ref));
  }

  async list(caller: Caller, input: DecisionListInput): Promise<Page<Decision>> {
    const after = decodeCursor(input.cursor, isKeyset);
    const words = input.q === undefined ? undefined : keywordTerms(input.q);
    // Text with no word in it matches no decision.
    if (words?.length === 0) return { items: [], nextCursor: null };
    const filters = {
      project: input.project,
      task: input.task_id === undefined ? undefined : parseIdRef(input.task_id, "task_id"),
      agent: input.agent,
      tag: input.tag,
      words,
      includeSuperseded: input.include_superseded,
    };
    const rows = await this.store.decisions.list(this.store.reader, viewpointOf(caller), filters, after, input.limit + 1);
    return pageOf(rows, input.limit, toDecision, (row) => ({ at: row.created_at, pk: row.pk }));
  }
}
