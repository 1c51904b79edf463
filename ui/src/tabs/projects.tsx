// Projects: creating, joining and leaving, their members, and clearing one (after a confirmation).

import { useState } from "preact/hooks";
import { api, encode, query } from "../api.js";
import { ActionButton } from "../components/action-button.js";
import { Dialog } from "../components/dialog.js";
import { ErrorNote, Loading } from "../components/feedback.js";
import { Field, FormFooter } from "../components/fields.js";
import { PagedList } from "../components/paged-list.js";
import { Pill } from "../components/pills.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { plural } from "../format.js";
import { useLiveRefresh, useLoad, usePaged } from "../hooks.js";
import type { Project, ProjectClearCounts, ProjectMember } from "../../../src/wire/projects.js";

export function ProjectsTab() {
  const { me, notify, refreshShared } = useApp();
  const [creating, setCreating] = useState(false);
  const [clearing, setClearing] = useState<Project | undefined>(undefined);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const paged = usePaged<Project>((cursor, limit) => api.get<Project[]>("/projects" + query({ limit, cursor })), [], 50);
  useLiveRefresh(["project.*"], paged.refresh);
  const toggle = (id: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const changed = () => {
    paged.refresh();
    refreshShared();
  };

  return (
    <div class="projects-tab">
      <div class="toolbar">
        <p class="muted">
          An agent sees global things and those of the projects it joined. {me.role === "owner" ? "As the owner you see every project." : ""}
        </p>
        <span class="spacer" />
        <button type="button" class="primary new-button" onClick={() => setCreating(true)}>
          New project
        </button>
      </div>
      <PagedList paged={paged} empty="No project yet. Create one to group agents, memory, tasks and messages.">
        {(items) => (
          <ul class="project-list">
            {items.map((project) => {
              const member = me.projects.includes(project.id);
              const open = expanded.has(project.id);
              return (
                <li key={project.id} class="panel project" data-project-id={project.id}>
                  <div class="row-line">
                    <h2 class="project-name">{project.name}</h2>
                    <span class="mono small muted">{project.id}</span>
                    {member && <Pill tone="member">member</Pill>}
                    {me.current_project === project.id && <Pill tone="neutral">current</Pill>}
                  </div>
                  {project.description && <p>{project.description}</p>}
                  <p class="muted small">
                    {plural(project.member_count, "member")} · created by {project.owner} <Time iso={project.created_at} />
                  </p>
                  <div class="row-line">
                    <button type="button" class="link-button" aria-expanded={open} onClick={() => toggle(project.id)}>
                      {open ? "Hide members" : "Show members"}
                    </button>
                    {(!member || me.current_project !== project.id) && (
                      <ActionButton
                        className="link-button"
                        success={member ? `${project.id} is now your current project.` : `Joined ${project.id}.`}
                        onAction={async () => {
                          await api.post(`/projects/${encode(project.id)}/join`);
                          changed();
                        }}
                      >
                        {member ? "Make current" : "Join"}
                      </ActionButton>
                    )}
                    {member && (
                      <ActionButton
                        className="link-button"
                        success={`Left ${project.id}.`}
                        onAction={async () => {
                          await api.delete(`/projects/${encode(project.id)}/leave`);
                          changed();
                        }}
                      >
                        Leave
                      </ActionButton>
                    )}
                    {project.owner === me.agent_id && (
                      <button type="button" class="link-button danger-text" onClick={() => setClearing(project)}>
                        Clear…
                      </button>
                    )}
                  </div>
                  {open && <Members projectId={project.id} />}
                </li>
              );
            })}
          </ul>
        )}
      </PagedList>
      {creating && (
        <CreateProjectDialog
          onClose={() => setCreating(false)}
          onCreated={(project) => {
            notify("success", `Project ${project.id} created; you joined it.`);
            changed();
          }}
        />
      )}
      {clearing && <ClearProjectDialog project={clearing} onClose={() => setClearing(undefined)} onCleared={changed} />}
    </div>
  );
}

function Members({ projectId }: { projectId: string }) {
  const members = useLoad(async () => (await api.get<ProjectMember[]>(`/projects/${encode(projectId)}/members`)).data, [projectId]);
  useLiveRefresh(["project.*", "agent.*"], members.reload);
  if (members.loading && !members.data) return <Loading />;
  if (members.error !== undefined && !members.data) return <ErrorNote error={members.error} onRetry={members.reload} />;
  const joined = members.data ?? [];
  return (
    <div class="members">
      {joined.length === 0 ? (
        <p class="muted">No member.</p>
      ) : (
        <ul class="plain-list">
          {joined.map((row) => (
            <li key={row.agent_id} class="row-line">
              <strong>{row.agent_id}</strong>
              <span class="muted small">{row.role}</span>
              {row.project_owner && <Pill tone="neutral">project owner</Pill>}
              <span class="muted small">
                joined <Time iso={row.joined_at} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function CreateProjectDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (project: Project) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!name.trim()) {
      setError(new Error("Give the project a name."));
      return;
    }
    const body: Record<string, unknown> = { name: name.trim() };
    if (description.trim()) body.description = description.trim();
    setBusy(true);
    setError(undefined);
    api.post<Project>("/projects", body).then(
      (response) => {
        onCreated(response.data);
        onClose();
      },
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };
  return (
    <Dialog title="New project" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <Field label="Name (its id is the lower-cased slug)">
          <input type="text" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </Field>
        <Field label="Description (optional)">
          <textarea rows={3} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
        </Field>
        <FormFooter error={error} busy={busy} label="Create and join" busyLabel="Creating…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}

function ClearProjectDialog({ project, onClose, onCleared }: { project: Project; onClose: () => void; onCleared: () => void }) {
  const { notify } = useApp();
  const [parts, setParts] = useState({ memory: true, tasks: true, messages: true });
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const confirmed = typed.trim() === project.id;
  const anything = parts.memory || parts.tasks || parts.messages;
  const submit = (event: Event) => {
    event.preventDefault();
    if (!confirmed || !anything) return;
    setBusy(true);
    setError(undefined);
    api.post<ProjectClearCounts>(`/projects/${encode(project.id)}/clear`, parts).then(
      (response) => {
        const counts = response.data;
        notify("success", `Cleared ${project.id}: ${plural(counts.memory, "entry", "entries")}, ${plural(counts.tasks, "task")}, ${plural(counts.messages, "message")}.`);
        onCleared();
        onClose();
      },
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };
  const check = (key: keyof typeof parts, label: string) => (
    <label class="check">
      <input type="checkbox" checked={parts[key]} onChange={(event) => setParts((current) => ({ ...current, [key]: event.currentTarget.checked }))} />
      {label}
    </label>
  );
  return (
    <Dialog title={`Clear project ${project.id}?`} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <p>This deletes what the project holds for every agent. The project and its members stay.</p>
        <fieldset class="checks">
          <legend>Delete</legend>
          {check("memory", "its memory entries")}
          {check("tasks", "its tasks")}
          {check("messages", "its messages")}
        </fieldset>
        <Field
          label={
            <>
              Type <strong class="mono">{project.id}</strong> to confirm
            </>
          }
        >
          <input type="text" value={typed} onInput={(event) => setTyped(event.currentTarget.value)} autocomplete="off" />
        </Field>
        <FormFooter error={error} busy={busy} label="Clear project" busyLabel="Clearing…" onCancel={onClose} danger disabled={!confirmed || !anything} />
      </form>
    </Dialog>
  );
}
