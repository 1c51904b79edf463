// The Blueprints tab: the human gates waiting for your approval, the blueprints (each opening to
// its plan and its older versions) and their runs, filtered by status and blueprint; a run opens
// to its own page (`#/blueprints/runs/<id>`, run-view.tsx).

import { useEffect, useState } from "preact/hooks";
import { api, fetchAll, query } from "../../api.js";
import { Field } from "../../components/fields.js";
import { PagedList } from "../../components/paged-list.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { useLiveRefresh, useLoad, usePaged, type Paged } from "../../hooks.js";
import type { BlueprintRun, RunStatus } from "../../../../src/wire/blueprint-runs.js";
import type { Blueprint } from "../../../../src/wire/blueprints.js";
import type { Task } from "../../../../src/wire/tasks.js";
import { BlueprintCard } from "./blueprint-card.js";
import { progressOf } from "./plan-model.js";
import { GateRow, RunView } from "./run-view.js";
import { RunStatusPill } from "./run-status.js";

/** The run id in `#/blueprints/runs/<id>`. */
const runFromHash = (): string | undefined => /^#\/blueprints\/runs\/([0-9a-f-]{36})/i.exec(location.hash)?.[1];

interface RunFilters {
  status: "" | RunStatus;
  blueprint: string;
}

const NO_FILTERS: RunFilters = { status: "", blueprint: "" };

export function BlueprintsTab() {
  const [runId, setRunId] = useState(runFromHash);
  // Kept here, so that coming back from a run finds the list as it was left.
  const [filters, setFilters] = useState<RunFilters>(NO_FILTERS);
  useEffect(() => {
    const changed = () => setRunId(runFromHash());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return runId ? <RunView key={runId} runId={runId} /> : <BlueprintsOverview filters={filters} setFilters={setFilters} />;
}

function BlueprintsOverview({ filters, setFilters }: { filters: RunFilters; setFilters: (filters: RunFilters) => void }) {
  const blueprints = usePaged<Blueprint>((cursor, limit) => api.get<Blueprint[]>("/blueprints" + query({ limit, cursor })), [], 50);
  useLiveRefresh(["blueprint.saved"], blueprints.refresh);
  const showRuns = (name: string) => {
    setFilters({ ...filters, blueprint: name });
    document.getElementById("run-list-title")?.scrollIntoView({ block: "start" });
  };
  return (
    <div class="blueprints-tab">
      <WaitingGates />
      <div class="blueprints-columns">
        <section class="blueprint-list-section" aria-labelledby="blueprint-list-title">
          <h2 id="blueprint-list-title">Blueprints</h2>
          <PagedList paged={blueprints} empty="No blueprint yet. Agents save one with the blueprint_save tool or POST /blueprints: a plan of tasks with what each needs, gates and fan-outs.">
            {(items) => (
              <ol class="blueprint-list">
                {items.map((blueprint) => (
                  <li key={blueprint.id}>
                    <BlueprintCard blueprint={blueprint} onShowRuns={showRuns} />
                  </li>
                ))}
              </ol>
            )}
          </PagedList>
        </section>
        <RunList filters={filters} setFilters={setFilters} blueprints={blueprints} />
      </div>
    </div>
  );
}

/** Where a gate is: its blueprint (from the `blueprint:<name>` tag every run task carries), project and node. */
function gatePlace(task: Task): string {
  const name = task.tags.find((tag) => tag.startsWith("blueprint:"))?.slice("blueprint:".length);
  return [name ? `${name} run` : "a run", task.project ?? "global", task.node_key ? `node ${task.node_key}` : ""].filter(Boolean).join(" · ");
}

/** Human gates reserved for you, open and no longer blocked, across runs. */
function WaitingGates() {
  const { me } = useApp();
  const gates = useLoad(async () => {
    const { rows } = await fetchAll<Task>("/tasks", { status: "open", unblocked: true, agent: me.agent_id }, 1000);
    return rows.filter((task) => task.gate === "human" && task.assigned_to === me.agent_id && task.run_id !== null);
  }, [me.agent_id]);
  useLiveRefresh(["task.*", "blueprint.run.*"], gates.reload, 400);
  const waiting = gates.data ?? [];
  if (waiting.length === 0) return null;
  return (
    <section class="panel run-gates" aria-labelledby="waiting-gates-title">
      <h2 id="waiting-gates-title">Waiting for your approval</h2>
      <ul class="plain-list">
        {waiting.map((task) => (
          <GateRow key={task.id} task={task} where={gatePlace(task)} onApproved={gates.reload} runLink />
        ))}
      </ul>
    </section>
  );
}

const STATUSES: RunStatus[] = ["running", "completed", "failed", "cancelled"];

function RunList({ filters, setFilters, blueprints }: { filters: RunFilters; setFilters: (filters: RunFilters) => void; blueprints: Paged<Blueprint> }) {
  const runs = usePaged<BlueprintRun>(
    (cursor, limit) => api.get<BlueprintRun[]>("/blueprints/runs" + query({ status: filters.status || undefined, blueprint: filters.blueprint || undefined, limit, cursor })),
    [filters.status, filters.blueprint],
    20,
  );
  // Task events move a run's progress; run events its status.
  useLiveRefresh(["blueprint.run.*", "task.*"], runs.refresh, 600);
  const names = [...new Set([...blueprints.items.map((blueprint) => blueprint.name), ...(filters.blueprint ? [filters.blueprint] : [])])].sort();
  const filtered = filters.status !== "" || filters.blueprint !== "";
  return (
    <section class="run-list-section" aria-labelledby="run-list-title">
      <h2 id="run-list-title">Runs</h2>
      <fieldset class="filters">
        <legend class="visually-hidden">Filters</legend>
        <Field label="Status">
          <select value={filters.status} onChange={(event) => setFilters({ ...filters, status: event.currentTarget.value as RunFilters["status"] })}>
            <option value="">any status</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Blueprint">
          <select value={filters.blueprint} onChange={(event) => setFilters({ ...filters, blueprint: event.currentTarget.value })}>
            <option value="">any blueprint</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        {filtered && (
          <button type="button" class="link-button clear-filters" onClick={() => setFilters(NO_FILTERS)}>
            Clear filters
          </button>
        )}
      </fieldset>
      <PagedList paged={runs} empty={filtered ? "No run matches these filters." : "No run yet. A blueprint runs with the blueprint_instantiate tool or POST /blueprints/{name}/instantiate."}>
        {(items) => (
          <ol class="run-list">
            {items.map((run) => (
              <RunRow key={run.id} run={run} />
            ))}
          </ol>
        )}
      </PagedList>
    </section>
  );
}

/** Parameters on one line: `version: 2.4 · regions: ["eu","us"]`. */
const paramsLine = (params: Record<string, unknown>): string =>
  Object.entries(params)
    .map(([name, value]) => `${name}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" · ");

function RunRow({ run }: { run: BlueprintRun }) {
  const progress = progressOf(run);
  const params = paramsLine(run.params);
  return (
    <li class={`run-row run-${run.status}`} data-run-id={run.id} data-status={run.status}>
      <div class="row-line">
        <a href={`#/blueprints/runs/${run.id}`} class="run-link">
          {run.blueprint.name} <span class="muted">v{run.blueprint.version}</span>
        </a>
        <RunStatusPill status={run.status} />
        <span class="spacer" />
        <span class="run-count small" title="tasks done (completed or skipped) of all">
          {progress.done}/{progress.total} done
          {progress.failed > 0 && ` · ${progress.failed} failed`}
        </span>
      </div>
      <meter class="run-meter" min={0} max={Math.max(1, progress.total)} value={progress.done} aria-label={`${progress.done} of ${progress.total} tasks done`} />
      {params && <p class="run-params-line mono small ellipsis" title={params}>{params}</p>}
      <p class="muted small row-line">
        <span>{run.project ?? "global"}</span>
        <span>by {run.created_by}</span>
        <span>
          started <Time iso={run.created_at} />
        </span>
      </p>
    </li>
  );
}
