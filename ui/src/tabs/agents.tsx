// Agents: presence, roles, task performance; creating an agent (its key shown once), rotating a
// key and deleting an agent (owner only).

import { useState } from "preact/hooks";
import { api, encode, query } from "../api.js";
import { CopyButton } from "../components/copy-button.js";
import { ConfirmDialog, Dialog } from "../components/dialog.js";
import { ErrorNote } from "../components/feedback.js";
import { Field, FormFooter } from "../components/fields.js";
import { PagedList } from "../components/paged-list.js";
import { Pill } from "../components/pills.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { duration, percent } from "../format.js";
import { useLiveRefresh, useLoad, usePaged } from "../hooks.js";
import type { AgentPerformance, AgentRecord, KeyRotation, Registration } from "../../../src/wire/agents.js";

type Pending = { kind: "rotate"; agent: AgentRecord } | { kind: "delete"; agent: AgentRecord } | { kind: "key"; agentId: string; apiKey: string; created: boolean };

export function AgentsTab() {
  const { me, notify, refreshShared } = useApp();
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const paged = usePaged<AgentRecord>((cursor, limit) => api.get<AgentRecord[]>("/agents" + query({ limit, cursor })), [], 50);
  const performance = useLoad(async () => new Map((await api.get<AgentPerformance[]>("/agents/performance")).data.map((row) => [row.agent_id, row])), []);
  useLiveRefresh(["agent.*", "task.*"], () => {
    paged.refresh();
    performance.reload();
  }, 1000);
  const owner = me.role === "owner";

  return (
    <div class="agents-tab">
      <div class="toolbar">
        <p class="muted">An agent is online when it made a request in the last 5 minutes or holds the event stream.</p>
        <span class="spacer" />
        {owner && (
          <button type="button" class="primary new-button" onClick={() => setCreating(true)}>
            New agent
          </button>
        )}
      </div>
      {performance.error !== undefined && <ErrorNote error={performance.error} context="Performance" onRetry={performance.reload} />}
      <PagedList paged={paged} empty="No agent yet.">
        {(items) => (
          <div class="table-wrap">
            <table class="data-table stacking-table">
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Role</th>
                  <th scope="col">Presence</th>
                  <th scope="col">Project</th>
                  <th scope="col">Claimed</th>
                  <th scope="col">Completed / failed</th>
                  <th scope="col">Success</th>
                  <th scope="col">Median time</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((agent) => {
                  const stats = performance.data?.get(agent.agent_id);
                  return (
                    <tr key={agent.agent_id} data-agent-id={agent.agent_id}>
                      <th scope="row">
                        <span class="agent-name">{agent.agent_id}</span>
                        {agent.display_name && <span class="muted small"> {agent.display_name}</span>}
                        {agent.agent_id === me.agent_id && <span class="muted small"> (you)</span>}
                      </th>
                      <td data-label="Role">
                        <Pill tone={`role-${agent.role}`}>{agent.role}</Pill>
                      </td>
                      <td data-label="Presence">
                        <span class={agent.online ? "presence presence-on" : "presence"} aria-hidden="true" /> {agent.online ? "online" : "offline"}
                        <div class="muted small">
                          seen <Time iso={agent.last_seen_at} />
                        </div>
                      </td>
                      <td data-label="Project">{agent.current_project ?? <span class="muted">—</span>}</td>
                      <td data-label="Claimed">{agent.claimed_tasks.length}</td>
                      <td data-label="Completed / failed">{stats ? `${stats.completed} / ${stats.failed}` : "0 / 0"}</td>
                      <td data-label="Success">{stats && stats.success_rate !== null ? percent(stats.success_rate) : <span class="muted">—</span>}</td>
                      <td data-label="Median time">{stats && stats.median_seconds !== null ? duration(stats.median_seconds) : <span class="muted">—</span>}</td>
                      <td class="row-actions">
                        {(owner || agent.agent_id === me.agent_id) && (
                          <button type="button" class="link-button" onClick={() => setPending({ kind: "rotate", agent })}>
                            Rotate key
                          </button>
                        )}
                        {owner && agent.agent_id !== me.agent_id && (
                          <button type="button" class="link-button danger-text" onClick={() => setPending({ kind: "delete", agent })}>
                            Delete
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </PagedList>
      {creating && (
        <CreateAgentDialog
          onClose={() => setCreating(false)}
          onCreated={(registration) => {
            setCreating(false);
            setPending({ kind: "key", agentId: registration.agent_id, apiKey: registration.api_key, created: true });
            paged.refresh();
            refreshShared();
          }}
        />
      )}
      {pending?.kind === "rotate" && (
        <ConfirmDialog
          title={`Rotate ${pending.agent.agent_id}'s key?`}
          confirmLabel="Rotate key"
          onClose={() => setPending((current) => (current?.kind === "rotate" ? undefined : current))}
          onConfirm={async () => {
            const response = await api.post<KeyRotation>(`/agents/${encode(pending.agent.agent_id)}/rotate-key`);
            setPending({ kind: "key", agentId: pending.agent.agent_id, apiKey: response.data.api_key, created: false });
          }}
        >
          <p>The current key stops working at once, and its OAuth tokens are revoked. The agent needs the new key to continue.</p>
        </ConfirmDialog>
      )}
      {pending?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete ${pending.agent.agent_id}?`}
          confirmLabel="Delete agent"
          onClose={() => setPending(undefined)}
          onConfirm={async () => {
            await api.delete(`/agents/${encode(pending.agent.agent_id)}`);
            notify("success", `${pending.agent.agent_id} deleted.`);
            paged.refresh();
            refreshShared();
          }}
        >
          <p>Its key stops working. What it wrote stays, attributed to its id.</p>
        </ConfirmDialog>
      )}
      {pending?.kind === "key" && (
        <Dialog title={pending.created ? `Agent ${pending.agentId} created` : `New key for ${pending.agentId}`} onClose={() => setPending(undefined)}>
          <p>
            <strong>This key is shown once.</strong> Copy it now and give it to the agent; Cairn keeps only its hash.
          </p>
          <div class="key-box">
            <Field label="API key" className="grow">
              <input type="text" readOnly value={pending.apiKey} class="mono" onFocus={(event) => event.currentTarget.select()} />
            </Field>
            <CopyButton text={pending.apiKey} label="Copy key" />
          </div>
          <div class="form-actions">
            <button type="button" class="primary" onClick={() => setPending(undefined)}>
              Done
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}

function CreateAgentDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (registration: Registration) => void }) {
  const [agentId, setAgentId] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [registrationKey, setRegistrationKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { agent_id: agentId.trim() };
    if (displayName.trim()) body.display_name = displayName.trim();
    setBusy(true);
    setError(undefined);
    // With the registration key, the registration route; without, self-registration, which the
    // server allows on a loopback address when no registration key is configured.
    const key = registrationKey.trim();
    const call = key
      ? api.post<Registration>("/agents/register", body, { headers: { "x-registration-key": key } })
      : api.post<Registration>("/agents/self-register", body);
    call.then(
      (response) => onCreated(response.data),
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };
  return (
    <Dialog title="New agent" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <Field label="Agent id (lower-case letters, digits, - and _)">
          <input type="text" required pattern="[a-z0-9][a-z0-9_\-]{0,63}" value={agentId} onInput={(event) => setAgentId(event.currentTarget.value)} autocomplete="off" />
        </Field>
        <Field label="Display name (optional)">
          <input type="text" value={displayName} onInput={(event) => setDisplayName(event.currentTarget.value)} />
        </Field>
        <Field label="Registration key (needed when the server has REGISTRATION_KEY set)">
          <input type="password" value={registrationKey} onInput={(event) => setRegistrationKey(event.currentTarget.value)} autocomplete="off" />
        </Field>
        <FormFooter error={error} busy={busy} label="Create agent" busyLabel="Creating…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
