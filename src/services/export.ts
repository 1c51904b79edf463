import { hostname } from "node:os";
import type { Config } from "../core/config.js";
import { forbidden, notFound } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import { now } from "../core/time.js";
import type { Store } from "../store/store.js";
import type { TaskRow } from "../store/tasks.js";
import type { TaskCommentRow, TaskOutcomeRow, TransferSelection } from "../store/transfer.js";
import type { Caller } from "./caller.js";
import { toEntry } from "./memory-records.js";
import { toDecision } from "./decision-records.js";
import {
  EXPORT_FORMAT,
  type DecisionLineOut,
  type EdgeLineOut,
  type EntryLineOut,
  type HeaderLineOut,
  type ProjectLineOut,
  type TaskLineOut,
} from "./transfer-lines.js";
import { toTask } from "./task-records.js";

const PAGE = 200;

/** Lets other requests run between two pages of a long export. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** This server's name in exports: the host name as a slug. */
export const instanceName = (): string =>
  hostname()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64) || "cairn";

/**
 * Orders tasks so that each comes after the tasks it depends on (those of the selection), and
 * otherwise oldest first: an import then never meets a dependency it has not created yet.
 */
export function dependencyOrder(tasks: { pk: number; dependsOn: number[] }[]): number[] {
  const byPk = new Map(tasks.map((task) => [task.pk, task]));
  const done = new Set<number>();
  const order: number[] = [];
  for (const root of tasks) {
    // Iterative depth-first walk: a long dependency chain must not exhaust the call stack.
    const stack: { pk: number; next: number }[] = [{ pk: root.pk, next: 0 }];
    const onPath = new Set<number>();
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { pk: number; next: number };
      if (done.has(top.pk)) {
        stack.pop();
        continue;
      }
      onPath.add(top.pk);
      const dependencies = byPk.get(top.pk)?.dependsOn ?? [];
      const dependency = dependencies[top.next];
      if (dependency !== undefined) {
        top.next++;
        // The store refuses cycles; one found anyway is broken here rather than looping.
        if (byPk.has(dependency) && !done.has(dependency) && !onPath.has(dependency)) stack.push({ pk: dependency, next: 0 });
        continue;
      }
      stack.pop();
      onPath.delete(top.pk);
      done.add(top.pk);
      order.push(top.pk);
    }
  }
  return order;
}

function byTask<T extends { task_pk: number }>(rows: T[]): Map<number, T[]> {
  const grouped = new Map<number, T[]>();
  for (const row of rows) {
    const list = grouped.get(row.task_pk);
    if (list) list.push(row);
    else grouped.set(row.task_pk, [row]);
  }
  return grouped;
}

const line = (value: object): string => `${JSON.stringify(value)}\n`;

function taskLine(row: TaskRow, comments: TaskCommentRow[], outcomes: TaskOutcomeRow[]): TaskLineOut {
  // The task as the API shows it, less what is derived (`blocked`), plus what an import needs to restore.
  const { blocked: _blocked, ...task } = toTask(row);
  return {
    kind: "task",
    ...task,
    reserved: row.reserved === 1,
    comments: comments.map((comment) => ({
      id: comment.id,
      agent_id: comment.agent_id,
      kind: comment.kind,
      comment: comment.comment,
      created_at: comment.created_at,
    })),
    outcomes: outcomes.map((outcome) => ({
      agent_id: outcome.agent_id,
      outcome: outcome.outcome,
      tags: JSON.parse(outcome.tags) as string[],
      claimed_at: outcome.claimed_at,
      finished_at: outcome.finished_at,
    })),
  };
}

/**
 * The owner's export: JSON Lines of projects, shared memory entries, graph edges, decisions and tasks, read
 * page by page as the client takes them, so a large store is never held in memory. Private
 * entries are left out, and so are edges that touch one.
 */
export class ExportService {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
  ) {}

  /** Checks the request now, so a refusal is an error response rather than a broken stream. */
  async export(caller: Caller, selection: TransferSelection): Promise<AsyncGenerator<string>> {
    if (caller.role !== "owner") throw forbidden("only the owner may export");
    if (typeof selection.project === "string" && !(await this.store.projects.byId(this.store.reader, selection.project))) throw notFound("project");
    return this.lines(selection);
  }

  private async *lines(selection: TransferSelection): AsyncGenerator<string> {
    const { reader, transfer } = this.store;
    const header: HeaderLineOut = {
      kind: "header",
      format: EXPORT_FORMAT,
      instance: instanceName(),
      url: this.config.PUBLIC_URL,
      server_version: packageVersion,
      exported_at: now(),
      project: selection.project ?? null,
      since: selection.since ?? null,
    };
    yield line(header);
    for (const project of await transfer.projects(reader, selection.project)) {
      const projectLine: ProjectLineOut = { kind: "project", ...project };
      yield line(projectLine);
    }
    // One clock for the whole export: an entry that expires meanwhile neither vanishes halfway nor drops its edges.
    const at = now();
    for (let afterPk = 0; ; ) {
      const rows = await transfer.entries(reader, selection, at, afterPk, PAGE);
      if (rows.length === 0) break;
      yield rows
        .map((row) => {
          const entry: EntryLineOut = { kind: "entry", ...toEntry(row) };
          return line(entry);
        })
        .join("");
      afterPk = (rows.at(-1) as { pk: number }).pk;
      await turn();
    }
    for (let afterPk = 0; ; ) {
      const rows = await transfer.edges(reader, selection, at, afterPk, PAGE);
      if (rows.length === 0) break;
      yield rows
        .map(({ pk: _pk, ...edge }) => {
          const edgeLine: EdgeLineOut = { kind: "edge", ...edge };
          return line(edgeLine);
        })
        .join("");
      afterPk = (rows.at(-1) as { pk: number }).pk;
      await turn();
    }
    for (let afterPk = 0; ; ) {
      const rows = await transfer.decisions(reader, selection, afterPk, PAGE);
      if (rows.length === 0) break;
      yield rows
        .map((row) => {
          const decisionLine: DecisionLineOut = { kind: "decision", ...toDecision(row) };
          return line(decisionLine);
        })
        .join("");
      afterPk = (rows.at(-1) as { pk: number }).pk;
      await turn();
    }
    const order = dependencyOrder(await transfer.taskGraph(reader, selection));
    for (let start = 0; start < order.length; start += PAGE) {
      const pks = order.slice(start, start + PAGE);
      const comments = byTask(await transfer.commentsOf(reader, pks));
      const outcomes = byTask(await transfer.outcomesOf(reader, pks));
      const rows = await Promise.all(pks.map((pk) => this.store.tasks.byPk(reader, pk)));
      const text = rows
        .filter((row): row is TaskRow => row !== undefined)
        .map((row) => line(taskLine(row, comments.get(row.pk) ?? [], outcomes.get(row.pk) ?? [])))
        .join("");
      if (text !== "") yield text;
      await turn();
    }
  }
}
