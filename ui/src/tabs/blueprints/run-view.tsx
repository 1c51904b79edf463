// One blueprint run (`#/blueprints/runs/<id>`): its status, parameters and progress, the human
// gates waiting for your approval, and the plan as a picture coloured by each task's state. Kept
// current by task and run events; Cancel stops a running run.

import type { RefObject } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, api, encode, fetchAll, query } from "../../api.js";
import { CopyButton } from "../../components/copy-button.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { ErrorNote, Loading } from "../../components/feedback.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { plural } from "../../format.js";
import { useLoad } from "../../hooks.js";
import { liveStream } from "../../live.js";
import type { BlueprintRun } from "../../../../src/wire/blueprint-runs.js";
import type { Blueprint } from "../../../../src/wire/blueprints.js";
import type { Task } from "../../../../src/wire/tasks.js";
import { approveGate } from "./gates.js";
import { PlanLegend, PlanPicture } from "./plan-picture.js";
import { asDocument, documentFromRun, progressOf, runNodes, type PlanNodeView } from "./plan-model.js";
import { RunStatusPill } from "./run-status.js";

/** The version a run was started from: in the run's project, else among the global blueprints. */
async function runVersion(run: BlueprintRun): Promise<Blueprint | undefined> {
  for (const project of [...new Set([run.project, null])]) {
    try {
      const versions = (await api.get<Blueprint[]>(`/blueprints/${encode(run.blueprint.name)}` + query({ project }))).data;
      const found = versions.find((version) => version.id === run.blueprint.id) ?? versions.find((version) => version.version === run.blueprint.version && version.project === run.project);
      if (found) return found;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  return undefined;
}

/**
 * Calls `reload` (debounced) on what may change the run: its own run events, events of its tasks,
 * any new task (a fan-out's items are new tasks, and task events do not name their run), and a
 * stream reset. Other tasks' events, on a busy server most of them, are left alone.
 */
function useRunEvents(runId: string, tasks: ReadonlyMap<string, Task> | undefined, reload: () => void): void {
  const known = useRef(tasks);
  known.current = tasks;
  const reloadRef = useRef(reload);
  reloadRef.current = reload;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = liveStream.subscribe((signal) => {
      if (signal.kind === "event") {
        const { type, payload } = signal.event;
        const ours = type.startsWith("blueprint.run.")
          ? payload.run_id === runId
          : type === "task.created" || (type.startsWith("task.") && typeof payload.task_id === "string" && known.current?.has(payload.task_id) === true);
        if (!ours) return;
      }
      clearTimeout(timer);
      timer = setTimeout(() => reloadRef.current(), 250);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [runId]);
}

/** A parameter's value as text: strings as they are, anything else as JSON. */
const paramText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

export function RunView({ runId }: { runId: string }) {
  const { me, notify } = useApp();
  const run = useLoad(async () => (await api.get<BlueprintRun>(`/blueprints/runs/${encode(runId)}`)).data, [runId]);
  const tasks = useLoad(async () => new Map((await fetchAll<Task>("/tasks", { run_id: runId })).rows.map((task) => [task.id, task])), [runId]);
  const data = run.data;
  // Tagged with the version it is for, so that a run's plan is never drawn from another's.
  const version = useLoad(async () => (data ? { id: data.blueprint.id, found: await runVersion(data) } : undefined), [data?.blueprint.id, data?.blueprint.version]);
  useRunEvents(runId, tasks.data, () => {
    run.reload();
    tasks.reload();
  });
  const [cancelling, setCancelling] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const focused = useRef(false);
  useEffect(() => {
    // Opening a run moves the focus to its heading, as changing tab does.
    if (data && !focused.current) {
      focused.current = true;
      heading.current?.focus();
    }
  }, [data]);

  const taskMap = useMemo(() => tasks.data ?? new Map<string, Task>(), [tasks.data]);
  const settled = data !== undefined && (version.data?.id === data.blueprint.id || version.error !== undefined);
  const found = settled ? version.data?.found : undefined;
  const saved = useMemo(() => (found ? asDocument(found.document) : undefined), [found]);
  const plan = useMemo(() => {
    if (saved) return saved;
    // Its version cannot be read: the plan is rebuilt from the run's tasks and their dependencies.
    return settled && data && tasks.data ? documentFromRun(data, tasks.data) : undefined;
  }, [saved, settled, data, tasks.data]);
  const nodes = useMemo<PlanNodeView[]>(() => (plan && data ? runNodes(plan, data, taskMap, me.agent_id) : []), [plan, data, taskMap, me.agent_id]);

  const gone = run.error instanceof ApiError && run.error.status === 404;
  const reload = () => {
    run.reload();
    tasks.reload();
  };

  return (
    <div class="run-view">
      <p class="back-line">
        <a href="#/blueprints">← Blueprints and runs</a>
      </p>
      {run.loading && !data && <Loading label="Loading the run…" />}
      {gone ? (
        <p class="empty" role="status">
          This run does not exist, or it belongs to a project you cannot see.
        </p>
      ) : (
        run.error !== undefined && <ErrorNote error={run.error} context="Could not load the run" onRetry={reload} />
      )}
      {data && !gone && (
        <>
          <RunHead run={data} title={plan?.title} heading={heading} onCancel={() => setCancelling(true)} canCancel={data.status === "running" && (me.role === "owner" || data.created_by === me.agent_id)} />
          <Gates nodes={nodes} tasks={taskMap} onApproved={reload} />
          <section class="panel run-plan" aria-labelledby="run-plan-title">
            <h2 id="run-plan-title">Plan</h2>
            {tasks.error !== undefined && <ErrorNote error={tasks.error} context="Could not load the run's tasks" onRetry={tasks.reload} />}
            {version.error !== undefined && <ErrorNote error={version.error} context="Could not load the blueprint" onRetry={version.reload} />}
            {nodes.length === 0 ? (
              <Loading label="Drawing the plan…" />
            ) : (
              <>
                <PlanPicture nodes={nodes} title={`Plan of ${data.blueprint.name} v${data.blueprint.version}: ${plural(nodes.length, "node")}, ${plural(data.nodes.length, "task")}`} />
                <PlanLegend />
                {settled && !saved && <p class="muted small">The blueprint's version could not be read: the plan is drawn from the run's tasks.</p>}
              </>
            )}
          </section>
          <RunDetails run={data} />
        </>
      )}
      {cancelling && data && (
        <ConfirmDialog
          title="Cancel this run?"
          confirmLabel="Cancel the run"
          onClose={() => setCancelling(false)}
          onConfirm={async () => {
            await api.post<BlueprintRun>(`/blueprints/runs/${encode(data.id)}/cancel`, {});
            notify("success", "Run cancelled.");
            reload();
          }}
        >
          <p>Its unfinished tasks fail with the comment “run cancelled”. What is done stays done.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

interface RunHeadProps {
  run: BlueprintRun;
  title: string | undefined;
  heading: RefObject<HTMLHeadingElement>;
  canCancel: boolean;
  onCancel: () => void;
}

function RunHead({ run, title, heading, canCancel, onCancel }: RunHeadProps) {
  const progress = progressOf(run);
  return (
    <section class="panel run-head" aria-labelledby="run-title">
      <div class="run-head-line">
        <h2 id="run-title" class="run-title" tabIndex={-1} ref={heading}>
          {run.blueprint.name} <span class="muted">v{run.blueprint.version}</span>
        </h2>
        <RunStatusPill status={run.status} />
        {title && <span class="run-doc-title">{title}</span>}
        <span class="spacer" />
        {canCancel && (
          <button type="button" class="danger" onClick={onCancel}>
            Cancel run
          </button>
        )}
      </div>
      <p class="run-progress" role="status">
        <meter min={0} max={Math.max(1, progress.total)} value={progress.done} aria-label="Tasks done" />
        <span>
          {progress.done} of {plural(progress.total, "task")} done
          {progress.failed > 0 && ` · ${progress.failed} failed`}
        </span>
        <span class="muted small">
          started by {run.created_by} <Time iso={run.created_at} /> · {run.status === "running" ? "last change" : "ended"} <Time iso={run.updated_at} />
        </span>
      </p>
    </section>
  );
}

/** The run's project, id and parameters. */
function RunDetails({ run }: { run: BlueprintRun }) {
  const params = Object.entries(run.params);
  return (
    <section class="panel run-details" aria-labelledby="run-details-title">
      <h2 id="run-details-title" class="visually-hidden">
        Details
      </h2>
      <div class="run-details-grid">
        <div>
          <h3 class="subheading">Run</h3>
          <dl class="facts">
            <dt>Project</dt>
            <dd>{run.project ?? "global"}</dd>
            <dt>Blueprint</dt>
            <dd>
              {run.blueprint.name} v{run.blueprint.version}
            </dd>
            <dt>Started</dt>
            <dd>
              <Time iso={run.created_at} /> by {run.created_by}
            </dd>
            <dt>Run id</dt>
            <dd class="row-line">
              <span class="mono small">{run.id}</span>
              <CopyButton text={run.id} label="Copy id" />
            </dd>
          </dl>
        </div>
        <div>
          <h3 class="subheading">Parameters</h3>
          {params.length === 0 ? (
            <p class="muted">none</p>
          ) : (
            <dl class="facts run-params">
              {params.map(([name, value]) => (
                <div key={name} class="run-param">
                  <dt class="mono">{name}</dt>
                  <dd class="mono">{paramText(value)}</dd>
                </div>
              ))}
            </dl>
          )}
        </div>
      </div>
    </section>
  );
}

function Gates({ nodes, tasks, onApproved }: { nodes: PlanNodeView[]; tasks: ReadonlyMap<string, Task>; onApproved: () => void }) {
  const waiting = nodes.filter((node) => node.awaiting && node.taskId !== null);
  if (waiting.length === 0) return null;
  return (
    <section class="panel run-gates" aria-labelledby="run-gates-title">
      <h2 id="run-gates-title">Waiting for your approval</h2>
      <ul class="plain-list">
        {waiting.map((node) => {
          const task = node.taskId ? tasks.get(node.taskId) : undefined;
          return task ? <GateRow key={node.id} task={task} where={`node ${node.id}`} onApproved={onApproved} /> : null;
        })}
      </ul>
    </section>
  );
}

/** One gate with its Approve button; a refusal stays beside it until the next try. */
export function GateRow({ task, where, onApproved, runLink }: { task: Task; where: string; onApproved: () => void; runLink?: boolean }) {
  const { notify } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const approve = () => {
    setBusy(true);
    setError(undefined);
    approveGate(task)
      .then(() => {
        notify("success", `Approved: ${task.title}.`);
        onApproved();
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => setBusy(false));
  };
  return (
    <li class="gate-row" data-task-id={task.id}>
      <div class="row-line">
        <a href={`#/tasks/${task.id}`} class="gate-title">
          {task.title}
        </a>
        <span class="muted small">{where}</span>
        {runLink && task.run_id && (
          <a href={`#/blueprints/runs/${task.run_id}`} class="small">
            open the run
          </a>
        )}
        <span class="spacer" />
        <button type="button" class="primary" onClick={approve} disabled={busy} aria-busy={busy} aria-label={`Approve: ${task.title}`}>
          {busy ? "Approving…" : "Approve"}
        </button>
      </div>
      {task.description && <p class="small">{task.description}</p>}
      {error !== undefined && <ErrorNote error={error} context="Could not approve" />}
    </li>
  );
}
