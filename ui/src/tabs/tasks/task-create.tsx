// Creating a task: title, description, priority, tags, project, dependencies, a reservation.

import { useState } from "preact/hooks";
import { api } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { Field, FormFooter } from "../../components/fields.js";
import { AgentSelect, ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import { localInputToIso, splitList } from "../../format.js";
import type { Priority, Task } from "../../../../src/wire/tasks.js";

interface CreateProps {
  candidates: Task[];
  onClose: () => void;
  onCreated: (task: Task) => void;
}

export function TaskCreateDialog({ candidates, onClose, onCreated }: CreateProps) {
  const { me } = useApp();
  const [title, setTitle] = useState("");
  const [description, setDescription] = useState("");
  const [priority, setPriority] = useState<Priority>("normal");
  const [tags, setTags] = useState("");
  const [project, setProject] = useState("");
  const [dependsOn, setDependsOn] = useState<string[]>([]);
  const [reservedFor, setReservedFor] = useState("");
  const [dueAt, setDueAt] = useState("");
  const [expected, setExpected] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    if (!title.trim()) {
      setError(new Error("Give the task a title."));
      return;
    }
    const body: Record<string, unknown> = { title: title.trim(), priority, tags: splitList(tags), depends_on: dependsOn };
    if (description.trim()) body.description = description;
    const projectId = projectValue(project);
    if (projectId !== undefined) body.project = projectId;
    if (reservedFor) body.assigned_to = reservedFor;
    const due = localInputToIso(dueAt);
    if (due) body.due_at = due;
    if (expected.trim()) body.expected_outcome = expected.trim();
    setBusy(true);
    setError(undefined);
    api
      .post<Task>("/tasks", body)
      .then((response) => {
        onCreated(response.data);
        onClose();
      })
      .catch((failure: unknown) => {
        setError(failure);
        setBusy(false);
      });
  };

  return (
    <Dialog title="New task" onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <Field label="Title">
          <input type="text" required value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        </Field>
        <Field label="Description">
          <textarea rows={4} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
        </Field>
        <div class="form-grid">
          <Field label="Priority">
            <select value={priority} onChange={(event) => setPriority(event.currentTarget.value as Priority)}>
              <option value="low">low</option>
              <option value="normal">normal</option>
              <option value="high">high</option>
            </select>
          </Field>
          <ProjectSelect label="Project" value={project} onChange={setProject} emptyLabel={`my current project (${me.current_project ?? "global"})`} />
          <Field label="Tags (comma-separated)">
            <input type="text" value={tags} onInput={(event) => setTags(event.currentTarget.value)} />
          </Field>
          <AgentSelect label="Reserve for (optional)" value={reservedFor} onChange={setReservedFor} emptyLabel="anyone may claim it" />
          <Field label="Due (optional)">
            <input type="datetime-local" value={dueAt} onInput={(event) => setDueAt(event.currentTarget.value)} />
          </Field>
          <Field label="Expected outcome (optional)">
            <input type="text" value={expected} onInput={(event) => setExpected(event.currentTarget.value)} />
          </Field>
        </div>
        {candidates.length > 0 && (
          <Field label="Depends on (Ctrl or ⌘ to pick several)">
            <select multiple size={Math.min(6, candidates.length)} onChange={(event) => setDependsOn([...event.currentTarget.selectedOptions].map((option) => option.value))}>
              {candidates.map((task) => (
                <option key={task.id} value={task.id} selected={dependsOn.includes(task.id)}>
                  {task.title} ({task.status})
                </option>
              ))}
            </select>
          </Field>
        )}
        <FormFooter error={error} busy={busy} label="Create task" busyLabel="Creating…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
