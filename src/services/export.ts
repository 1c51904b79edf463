import { hostname } from "node:os";
import type { Config } from "../core/config.js";
import { forbidden, notFound } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import { now } from "../core/time.js";
import type { Store } from "../store/store.js";
import type { TaskRow } from "../store/tasks.js";
import type { TransferSelection } from "../store/transfer.js";
import type { Caller } from "./caller.js";
import { toDecision } from "./decision-records.js";
import { agentLine, blueprintLine, entryLine, handoffLine, line, messageLine, projectLine, runLine, taskLine } from "./export-lines.js";
import { EXPORT_FORMAT, type DecisionLineOut, type EdgeLineOut, type HeaderLineOut } from "./transfer-lines.js";

const PAGE = 200;

/** Lets other requests run between two pages of a long export. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** This server's name in exports: the host name as a slug. */
const instanceName = (): string =>
  hostname()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64) || "cairn";

/**
 * Orders tasks so that each comes after the tasks it depends on (those of the selection), and
 * otherwise oldest first: an import then never meets a dependency it has not created yet.
 */
function dependencyOrder(tasks: { pk: number; dependsOn: number[] }[]): number[] {
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

/** Rows grouped by one of their keys, each group in the order of `rows`. */
function groupBy<T, K>(rows: T[], key: (row: T) => K): Map<K, T[]> {
  const grouped = new Map<K, T[]>();
  for (const row of rows) {
    const list = grouped.get(key(row));
    if (list) list.push(row);
    else grouped.set(key(row), [row]);
  }
  return grouped;
}

/**
 * The owner's export: JSON Lines of projects (with their members), agents (never a key), shared
 * memory entries (a compiled one with its anchor), graph edges, decisions, blueprint versions,
 * tasks, blueprint runs, messages (with each recipient's read state) and handoffs, read page by
 * page as the client takes them, so a large store is never held in memory. Private entries are
 * left out, and so are edges that touch one. Each kind comes after what its lines name.
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
    const projects = await transfer.projects(reader, selection.project);
    const members = groupBy(await transfer.membersOf(reader, projects.map((project) => project.id)), (member) => member.project_id);
    for (const project of projects) yield line(projectLine(project, members.get(project.id) ?? []));
    for (let afterId = ""; ; ) {
      const rows = await transfer.agents(reader, selection, afterId, PAGE);
      if (rows.length === 0) break;
      yield rows.map((row) => line(agentLine(row))).join("");
      afterId = (rows.at(-1) as { agent_id: string }).agent_id;
      await turn();
    }
    // One clock for the whole export: an entry that expires meanwhile neither vanishes halfway nor drops its edges.
    const at = now();
    yield* paged(
      (afterPk) => transfer.entries(reader, selection, at, afterPk, PAGE),
      async (rows) => {
        const compiled = rows.filter((row) => row.type === "compiled").map((row) => row.pk);
        const anchors = new Map((await transfer.anchorsOf(reader, compiled)).map((anchor) => [anchor.memory_pk, anchor]));
        return rows.map((row) => line(entryLine(row, anchors.get(row.pk))));
      },
    );
    yield* paged(
      (afterPk) => transfer.edges(reader, selection, at, afterPk, PAGE),
      (rows) =>
        rows.map(({ pk: _pk, ...edge }) => {
          const edgeLine: EdgeLineOut = { kind: "edge", ...edge };
          return line(edgeLine);
        }),
    );
    yield* paged(
      (afterPk) => transfer.decisions(reader, selection, afterPk, PAGE),
      (rows) =>
        rows.map((row) => {
          const decisionLine: DecisionLineOut = { kind: "decision", ...toDecision(row) };
          return line(decisionLine);
        }),
    );
    yield* paged(
      (afterPk) => transfer.blueprints(reader, selection, afterPk, PAGE),
      (rows) => rows.map((row) => line(blueprintLine(row))),
    );
    const order = dependencyOrder(await transfer.taskGraph(reader, selection));
    for (let start = 0; start < order.length; start += PAGE) {
      const pks = order.slice(start, start + PAGE);
      const comments = groupBy(await transfer.commentsOf(reader, pks), (comment) => comment.task_pk);
      const outcomes = groupBy(await transfer.outcomesOf(reader, pks), (outcome) => outcome.task_pk);
      // One statement a page: a request per task would queue a page's worth on PostgreSQL's pool ahead of everyone else's.
      const byPk = await this.store.tasks.byPks(reader, pks);
      const text = pks
        .map((pk) => byPk.get(pk))
        .filter((row): row is TaskRow => row !== undefined)
        .map((row) => line(taskLine(row, comments.get(row.pk) ?? [], outcomes.get(row.pk) ?? [])))
        .join("");
      if (text !== "") yield text;
      await turn();
    }
    // Runs after tasks: a run's nodes name their tasks.
    yield* paged(
      (afterPk) => transfer.runs(reader, selection, afterPk, PAGE),
      async (rows) => {
        const nodes = groupBy(await transfer.runNodesOf(reader, rows.map((row) => row.pk)), (node) => node.run_pk);
        return rows.map((row) => line(runLine(row, nodes.get(row.pk) ?? [])));
      },
    );
    yield* paged(
      (afterPk) => transfer.messages(reader, selection, afterPk, PAGE),
      async (rows) => {
        const recipients = groupBy(await transfer.recipientsOf(reader, rows.map((row) => row.pk)), (recipient) => recipient.message_pk);
        return rows.map((row) => line(messageLine(row, recipients.get(row.pk) ?? [])));
      },
    );
    yield* paged(
      (afterPk) => transfer.handoffs(reader, selection, afterPk, PAGE),
      (rows) => rows.map((row) => line(handoffLine(row))),
    );
  }
}

/** Every page of rows after row key 0 as text, one page at a time, letting other requests run between two. */
async function* paged<Row extends { pk: number }>(read: (afterPk: number) => Promise<Row[]>, lines: (rows: Row[]) => string[] | Promise<string[]>): AsyncGenerator<string> {
  for (let afterPk = 0; ; ) {
    const rows = await read(afterPk);
    if (rows.length === 0) return;
    yield (await lines(rows)).join("");
    afterPk = (rows.at(-1) as Row).pk;
    await turn();
  }
}
