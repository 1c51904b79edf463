// One task: its fields and dependencies, the lifecycle actions the signed-in agent may take, the
// decisions recorded for it and the comment log.

import { useState } from "preact/hooks";
import { ApiError, api, encode, query } from "../../api.js";
import { CopyButton } from "../../components/copy-button.js";
import { Dialog } from "../../components/dialog.js";
import { Empty, ErrorNote, Loading } from "../../components/feedback.js";
import { Field } from "../../components/fields.js";
import { PagedList } from "../../components/paged-list.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { shortId } from "../../format.js";
import { useLiveRefresh, useLoad, usePaged } from "../../hooks.js";
import { allowedFrom } from "../../../../src/wire/task-lifecycle.js";
import type { Task, TaskComment } from "../../../../src/wire/tasks.js";
import { approveGate, gateSentence } from "../blueprints/gates.js";
import { TaskDecisions } from "../decisions/task-decisions.js";

interface DetailProps {
  id: string;
  known: ReadonlyMap<string, Task>;
  onClose: () => void;
  onChanged: () => void;
}

export function TaskDetailDialog({ id: firstId, known, onClose, onChanged }: DetailProps) {
  const [id, setId] = useState(firstId);
  const task = useLoad(async () => (await api.get<Task>(`/tasks/${encode(id)}`)).data, [id]);
  const comments = usePaged<TaskComment>((cursor, limit) => api.get<TaskComment[]>(`/tasks/${encode(id)}/comments` + query({ limit, cursor })), [id], 50);
  useLiveRefresh(["task.*"], () => {
    task.reload();
    comments.refresh();
  });
  const gone = task.error instanceof ApiError && task.error.status === 404;
  return (
    <Dialog title={task.data ? task.data.title : `Task ${shortId(id)}`} onClose={onClose} wide>
      {task.loading && !task.data && <Loading />}
      {gone ? (
        <p class="empty" role="status">
          This task does not exist, or it belongs to a project you cannot see.
        </p>
      ) : (
        task.error !== undefined && <ErrorNote error={task.error} onRetry={task.reload} />
      )}
      {task.data && !gone && (
        <div class="stack">
          <TaskFacts task={task.data} known={known} onOpen={setId} />
          <TaskActions
            task={task.data}
            onChanged={() => {
              task.reload();
              comments.refresh();
              onChanged();
            }}
          />
          <TaskDecisions key={task.data.id} taskId={task.data.id} />
          <section aria-labelledby="comment-log-title">
            <h3 class="subheading" id="comment-log-title">
              Comment log
            </h3>
            <PagedList paged={comments} empty="No comment yet.">
              {(items) => (
                <ol class="comment-log">
                  {items.map((comment) => (
                    <li key={comment.id} class={`comment comment-${comment.kind}`}>
                      <span class="row-line small">
                        <strong>{comment.agent_id}</strong>
                        {comment.kind !== "comment" && <Pill tone="neutral">{comment.kind}</Pill>}
                        <Time iso={comment.created_at} />
                      </span>
                      {comment.comment ? <p class="comment-text">{comment.comment}</p> : null}
                    </li>
                  ))}
                </ol>
              )}
            </PagedList>
            <CommentForm taskId={task.data.id} onCommented={comments.refresh} />
          </section>
        </div>
      )}
    </Dialog>
  );
}

function TaskFacts({ task, known, onOpen }: { task: Task; known: ReadonlyMap<string, Task>; onOpen: (id: string) => void }) {
  return (
    <>
      <div class="row-line">
        <Pill tone={`status-${task.status}`}>{task.status}</Pill>
        {task.blocked && <Pill tone="blocked">blocked</Pill>}
        <Pill tone={`priority-${task.priority}`}>{`${task.priority} priority`}</Pill>
        <span class="mono small">{task.id}</span>
        <CopyButton text={task.id} label="Copy id" />
      </div>
      {task.description ? <div class="card-content">{task.description}</div> : <p class="muted">No description.</p>}
      <dl class="facts facts-columns">
        <dt>Project</dt>
        <dd>{task.project ?? "global"}</dd>
        {task.run_id !== null && (
          <>
            <dt>Blueprint run</dt>
            <dd>
              <a href={`#/blueprints/runs/${task.run_id}`} class="task-run-link">
                {runName(task) ? `${runName(task)} run ${shortId(task.run_id)}` : `run ${shortId(task.run_id)}`}
              </a>
              {task.node_key !== null && (
                <>
                  {" · node "}
                  <span class="mono task-node-key">{task.node_key}</span>
                </>
              )}
            </dd>
          </>
        )}
        {task.gate !== null && (
          <>
            <dt>Gate</dt>
            <dd class="task-gate">{capitalized(gateSentence(task.gate, task.assigned_to))}</dd>
          </>
        )}
        <dt>Created by</dt>
        <dd>{task.created_by}</dd>
        <dt>{task.status === "open" ? "Reserved for" : "Assigned to"}</dt>
        <dd>{task.assigned_to ?? <span class="muted">nobody</span>}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={task.created_at} />
        </dd>
        {task.claimed_at && (
          <>
            <dt>Claimed</dt>
            <dd>
              <Time iso={task.claimed_at} />
            </dd>
          </>
        )}
        {task.lease_expires_at && (
          <>
            <dt>Claim lapses</dt>
            <dd>
              <Time iso={task.lease_expires_at} />
            </dd>
          </>
        )}
        {task.completed_at && (
          <>
            <dt>Finished</dt>
            <dd>
              <Time iso={task.completed_at} />
            </dd>
          </>
        )}
        {task.due_at && (
          <>
            <dt>Due</dt>
            <dd>
              <Time iso={task.due_at} />
            </dd>
          </>
        )}
        <dt>Tags</dt>
        <dd>{task.tags.length ? task.tags.join(", ") : <span class="muted">none</span>}</dd>
        {task.expected_outcome && (
          <>
            <dt>Expected outcome</dt>
            <dd>{task.expected_outcome}</dd>
          </>
        )}
        <dt>Depends on</dt>
        <dd>
          {task.depends_on.length === 0 ? (
            <span class="muted">nothing</span>
          ) : (
            <ul class="plain-list">
              {task.depends_on.map((dependency) => {
                const other = known.get(dependency);
                return (
                  <li key={dependency}>
                    <button type="button" class="link-button" onClick={() => onOpen(dependency)}>
                      {other ? other.title : shortId(dependency)}
                    </button>{" "}
                    <span class="muted small">{other ? other.status : ""}</span>
                  </li>
                );
              })}
            </ul>
          )}
        </dd>
      </dl>
      {task.result !== null && task.result !== undefined && (
        <section>
          <h3 class="subheading">Output</h3>
          <pre class="output">{typeof task.result === "string" ? task.result : JSON.stringify(task.result, null, 2)}</pre>
        </section>
      )}
    </>
  );
}

/** The blueprint a run task comes from, by the `blueprint:<name>` tag every run task carries. */
const runName = (task: Task): string | undefined => task.tags.find((tag) => tag.startsWith("blueprint:"))?.slice("blueprint:".length);

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** JSON when the text parses as JSON, otherwise the text itself. */
function outputValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function TaskActions({ task, onChanged }: { task: Task; onChanged: () => void }) {
  const { me, notify } = useApp();
  const [note, setNote] = useState("");
  const [output, setOutput] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const act = (action: "claim" | "unclaim" | "complete" | "fail" | "reopen", done: string) => {
    const body: Record<string, unknown> = {};
    if (note.trim()) body.comment = note.trim();
    if (action === "complete" && output.trim()) body.output = outputValue(output.trim());
    setBusy(true);
    setError(undefined);
    api
      .post<Task>(`/tasks/${encode(task.id)}/${action}`, body)
      .then(() => {
        // Clear what was sent, not what was typed while the request ran.
        const sentNote = note;
        const sentOutput = output;
        setNote((current) => (current === sentNote ? "" : current));
        setOutput((current) => (current === sentOutput ? "" : current));
        notify("success", done);
        onChanged();
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => setBusy(false));
  };

  const approve = () => {
    setBusy(true);
    setError(undefined);
    approveGate(task, note.trim() || undefined, output.trim() ? outputValue(output.trim()) : undefined)
      .then(() => {
        const sentNote = note;
        const sentOutput = output;
        setNote((current) => (current === sentNote ? "" : current));
        setOutput((current) => (current === sentOutput ? "" : current));
        notify("success", "Gate approved.");
        onChanged();
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => setBusy(false));
  };

  const mine = task.assigned_to === me.agent_id;
  const reservedElsewhere = task.status === "open" && task.assigned_to !== null && task.assigned_to !== me.agent_id;
  // Timer and task gates are completed by the server; a human gate is approved, never just claimed.
  const serverGate = task.gate === "timer" || task.gate === "task" ? task.gate : undefined;
  const humanGate = task.gate === "human";
  let explanation: string | undefined;
  if (serverGate && task.status === "open") explanation = `It is ${gateSentence(serverGate, task.assigned_to)}.`;
  else if (task.status === "open" && task.blocked) explanation = humanGate ? "It can be approved once every task it depends on is completed." : "It cannot be claimed until every task it depends on is completed.";
  else if (reservedElsewhere) explanation = `It is reserved for ${task.assigned_to ?? ""}: only that agent may ${humanGate ? "approve" : "claim"} it.`;
  else if (task.status === "claimed" && !mine) explanation = `${task.assigned_to ?? "Another agent"} holds it: only the assignee can release, complete or fail it.`;
  const canClaim = allowedFrom("claim", task.status) && !task.blocked && !reservedElsewhere && serverGate === undefined && !humanGate;
  const canApprove = humanGate && mine && ((task.status === "open" && !task.blocked) || task.status === "claimed");
  const canFinish = allowedFrom("complete", task.status) && mine;
  const canReopen = allowedFrom("reopen", task.status);
  const anyAction = canClaim || canApprove || canFinish || canReopen;

  return (
    <section class="task-actions" aria-labelledby="task-actions-title">
      <h3 class="subheading" id="task-actions-title">
        Actions
      </h3>
      {explanation && <p class="muted">{explanation}</p>}
      {anyAction && (
        <div class="stack">
          <Field label="Comment for the log (optional)">
            <input type="text" value={note} onInput={(event) => setNote(event.currentTarget.value)} />
          </Field>
          {(canFinish || canApprove) && (
            <Field label={humanGate ? "Output to approve with (JSON or text, optional)" : "Output to complete with (JSON or text, optional)"}>
              <textarea rows={3} value={output} onInput={(event) => setOutput(event.currentTarget.value)} />
            </Field>
          )}
          <div class="form-actions">
            {canClaim && (
              <button type="button" class="primary" disabled={busy} onClick={() => act("claim", "Task claimed.")}>
                Claim
              </button>
            )}
            {canApprove && (
              <button type="button" class="primary" disabled={busy} onClick={approve}>
                Approve
              </button>
            )}
            {canFinish && (
              <>
                {!humanGate && (
                  <button type="button" class="primary" disabled={busy} onClick={() => act("complete", "Task completed.")}>
                    Complete
                  </button>
                )}
                <button type="button" class="danger" disabled={busy} onClick={() => act("fail", "Task marked failed.")}>
                  Fail
                </button>
                <button type="button" disabled={busy} onClick={() => act("unclaim", "Claim released.")}>
                  Unclaim
                </button>
              </>
            )}
            {canReopen && (
              <button type="button" disabled={busy} onClick={() => act("reopen", "Task reopened.")}>
                Reopen
              </button>
            )}
          </div>
        </div>
      )}
      {!anyAction && !explanation && <Empty>No action is open to you on this task.</Empty>}
      {error !== undefined && <ErrorNote error={error} />}
    </section>
  );
}

function CommentForm({ taskId, onCommented }: { taskId: string; onCommented: () => void }) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!text.trim()) return;
    setBusy(true);
    setError(undefined);
    api
      .post(`/tasks/${encode(taskId)}/comments`, { comment: text.trim() })
      .then(() => {
        const sent = text;
        setText((current) => (current === sent ? "" : current));
        onCommented();
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => setBusy(false));
  };
  return (
    <form class="comment-form" onSubmit={submit}>
      <Field label="Add a comment" className="grow">
        <textarea rows={2} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={busy || !text.trim()}>
        {busy ? "Sending…" : "Comment"}
      </button>
      {error !== undefined && <ErrorNote error={error} />}
    </form>
  );
}
