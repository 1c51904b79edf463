import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { shortId } from "../../format.js";
import type { Task } from "../../../../src/wire/tasks.js";

interface TaskCardProps {
  task: Task;
  /** Tasks by id, to name dependencies by title and show whether they are done. */
  known: ReadonlyMap<string, Task>;
  onOpen: (id: string) => void;
}

export function TaskCard({ task, known, onOpen }: TaskCardProps) {
  return (
    <article class={task.blocked ? "task-card is-blocked" : "task-card"} data-task-id={task.id} data-status={task.status}>
      <h3 class="task-title">
        <button type="button" class="link-button" onClick={() => onOpen(task.id)}>
          {task.title}
        </button>
      </h3>
      <p class="row-line small">
        {task.blocked && (
          <Pill tone="blocked" title="a dependency is not completed yet">
            blocked
          </Pill>
        )}
        {task.priority !== "normal" && <Pill tone={`priority-${task.priority}`}>{`${task.priority} priority`}</Pill>}
        <span class="muted">{task.project ?? "global"}</span>
        {task.assigned_to && <span>{task.status === "open" ? `reserved for ${task.assigned_to}` : `→ ${task.assigned_to}`}</span>}
      </p>
      {task.depends_on.length > 0 && (
        <div class="deps small">
          <span class="muted">depends on </span>
          <ul class="inline-list">
            {task.depends_on.map((id) => {
              const dependency = known.get(id);
              const done = dependency?.status === "completed";
              return (
                <li key={id} class={done ? "dep dep-done" : "dep dep-pending"}>
                  <button type="button" class="link-button" onClick={() => onOpen(id)}>
                    {dependency ? dependency.title : shortId(id)}
                  </button>
                  <span class="muted"> ({dependency ? dependency.status : "?"})</span>
                </li>
              );
            })}
          </ul>
        </div>
      )}
      {task.tags.length > 0 && (
        <ul class="tags" aria-label="Tags">
          {task.tags.map((tag) => (
            <li key={tag} class="tag">
              {tag}
            </li>
          ))}
        </ul>
      )}
      <p class="muted small">
        by {task.created_by} · updated <Time iso={task.updated_at} />
      </p>
    </article>
  );
}
