// The task board: one column per status, blocked tasks marked, dependencies named; filters,
// creating tasks and each task's detail with its actions and comment log.

import { useEffect, useMemo, useState } from "preact/hooks";
import { api, query } from "../../api.js";
import { Field } from "../../components/fields.js";
import { PagedList } from "../../components/paged-list.js";
import { AgentSelect, ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import { useDebounced, useLiveRefresh, useLoad, usePaged, type Paged } from "../../hooks.js";
import type { Priority, Task, TaskStatus } from "../../../../src/wire/tasks.js";
import { TaskCard } from "./task-card.js";
import { TaskCreateDialog } from "./task-create.js";
import { TaskDetailDialog } from "./task-detail.js";

const COLUMNS: { status: TaskStatus; label: string }[] = [
  { status: "open", label: "Open" },
  { status: "claimed", label: "Claimed" },
  { status: "completed", label: "Completed" },
  { status: "failed", label: "Failed" },
];

interface Filters {
  project: string;
  agent: string;
  tag: string;
  priority: "" | Priority;
}

const NO_FILTERS: Filters = { project: "", agent: "", tag: "", priority: "" };

/** The task id in `#/tasks/<id>`, as the Overview links to it. */
const taskFromHash = (): string | undefined => /^#\/tasks\/([0-9a-f-]{6,})/i.exec(location.hash)?.[1];

const filterParams = (filters: Filters) => ({
  project: projectValue(filters.project),
  agent: filters.agent || undefined,
  tag: filters.tag.trim() || undefined,
  priority: filters.priority || undefined,
});

function useColumn(status: TaskStatus, filters: Filters): Paged<Task> {
  return usePaged<Task>((cursor, limit) => api.get<Task[]>("/tasks" + query({ status, ...filterParams(filters), limit, cursor })), [status, JSON.stringify(filters)], 25);
}

type TaskCounts = Record<TaskStatus | "blocked", number>;

export function TasksTab() {
  const { notify } = useApp();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [creating, setCreating] = useState(false);
  const [detail, setDetail] = useState<string | undefined>(taskFromHash);
  const tag = useDebounced(filters.tag, 400);
  const settled = { ...filters, tag };
  const set = (change: Partial<Filters>) => setFilters((current) => ({ ...current, ...change }));

  const open = useColumn("open", settled);
  const claimed = useColumn("claimed", settled);
  const completed = useColumn("completed", settled);
  const failed = useColumn("failed", settled);
  const columns = { open, claimed, completed, failed };
  const refreshAll = () => {
    open.refresh();
    claimed.refresh();
    completed.refresh();
    failed.refresh();
  };
  // The columns page; their headers count every task that matches, in one query.
  const counts = useLoad(async () => (await api.get<TaskCounts>("/tasks/counts" + query(filterParams(settled)))).data, [JSON.stringify(settled)]);
  useLiveRefresh(["task.*"], refreshAll);
  useLiveRefresh(["task.*"], counts.reload);

  useEffect(() => {
    const changed = () => {
      const id = taskFromHash();
      if (id) setDetail(id);
    };
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  const closeDetail = () => {
    setDetail(undefined);
    if (taskFromHash()) history.replaceState(null, "", "#/tasks");
  };

  const known = useMemo(() => {
    const all = new Map<string, Task>();
    for (const column of [open, claimed, completed, failed]) for (const task of column.items) all.set(task.id, task);
    return all;
  }, [open.items, claimed.items, completed.items, failed.items]);

  const hasFilter = filters.project !== "" || filters.agent !== "" || filters.tag.trim() !== "" || filters.priority !== "";
  return (
    <div class="tasks-tab">
      <div class="toolbar">
        <fieldset class="filters">
          <legend class="visually-hidden">Filters</legend>
          <ProjectSelect label="Project" value={filters.project} onChange={(project) => set({ project })} emptyLabel="any project" />
          <AgentSelect label="Agent" value={filters.agent} onChange={(agent) => set({ agent })} emptyLabel="anyone" />
          <Field label="Tag">
            <input type="text" value={filters.tag} onInput={(event) => set({ tag: event.currentTarget.value })} />
          </Field>
          <Field label="Priority">
            <select value={filters.priority} onChange={(event) => set({ priority: event.currentTarget.value as Filters["priority"] })}>
              <option value="">any priority</option>
              <option value="high">high</option>
              <option value="normal">normal</option>
              <option value="low">low</option>
            </select>
          </Field>
          {hasFilter && (
            <button type="button" class="link-button clear-filters" onClick={() => setFilters(NO_FILTERS)}>
              Clear filters
            </button>
          )}
        </fieldset>
        <button type="button" class="primary new-button" onClick={() => setCreating(true)}>
          New task
        </button>
      </div>
      <div class="board">
        {COLUMNS.map(({ status, label }) => {
          const column = columns[status];
          const total = counts.data?.[status];
          const blocked = status === "open" ? (counts.data?.blocked ?? column.items.filter((task) => task.blocked).length) : 0;
          return (
            <section key={status} class={`board-column column-${status}`} aria-labelledby={`column-${status}`}>
              <h2 class="column-title" id={`column-${status}`}>
                {label}{" "}
                <span class="count">{total ?? `${column.items.length}${column.hasMore ? "+" : ""}`}</span>
                {blocked > 0 && <span class="muted small"> · {blocked} blocked</span>}
              </h2>
              <PagedList paged={column} empty={hasFilter ? "None match." : `No ${label.toLowerCase()} task.`}>
                {(items) => (
                  <div class="column-cards">
                    {items.map((task) => (
                      <TaskCard key={task.id} task={task} known={known} onOpen={setDetail} />
                    ))}
                  </div>
                )}
              </PagedList>
            </section>
          );
        })}
      </div>
      {creating && (
        <TaskCreateDialog
          candidates={[...known.values()]}
          onClose={() => setCreating(false)}
          onCreated={() => {
            notify("success", "Task created.");
            refreshAll();
          }}
        />
      )}
      {/* Keyed: a link to another task (from a decision) opens that task's page. */}
      {detail && <TaskDetailDialog key={detail} id={detail} known={known} onClose={closeDetail} onChanged={refreshAll} />}
    </div>
  );
}
