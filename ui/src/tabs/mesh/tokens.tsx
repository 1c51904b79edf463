// Tokens this server grants peers: what each reads and may do, until when, when it was last used,
// and revoking one. A new token's secret is shown once, in its own dialog, and nowhere after it
// closes: the page keeps it in no state beyond that dialog.

import { useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import { CopyButton } from "../../components/copy-button.js";
import { ConfirmDialog, Dialog } from "../../components/dialog.js";
import { Field, FormFooter } from "../../components/fields.js";
import { PagedList } from "../../components/paged-list.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { localInputToIso } from "../../format.js";
import { useNow, type Paged } from "../../hooks.js";
import type { MeshCapability, MeshToken } from "../../../../src/wire/mesh.js";

type CreatedToken = MeshToken & { token: string };

const CAPABILITY_HINTS: Record<MeshCapability, string> = {
  pull: "read the shared memory, doc and skill entries of these projects (always granted)",
  handshake: "ask this server to link back, so a link is made both ways in one step",
  feed: "the memory feed routes (Atom, JSON Feed), which pull reads too",
  gossip: "ask whom this server is linked to",
};
const OPTIONAL_CAPABILITIES: MeshCapability[] = ["handshake", "gossip", "feed"];

type TokenState = "active" | "revoked" | "expired";

function stateOf(token: MeshToken, now: number): TokenState {
  if (token.revoked_at !== null) return "revoked";
  if (token.expires_at !== null && Date.parse(token.expires_at) <= now) return "expired";
  return "active";
}

interface TokensProps {
  paged: Paged<MeshToken>;
  /** Peer names by link id, for the tokens minted for a link made both ways. */
  peerNames: ReadonlyMap<string, string>;
  /** This server's address, to give the peer with the token. */
  selfUrl: string | undefined;
}

export function TokensSection({ paged, peerNames, selfUrl }: TokensProps) {
  const { notify } = useApp();
  const now = useNow();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedToken | undefined>(undefined);
  const [revoking, setRevoking] = useState<MeshToken | undefined>(undefined);

  return (
    <section class="mesh-section" aria-labelledby="mesh-tokens-heading">
      <header class="mesh-section-header">
        <h2 id="mesh-tokens-heading">Tokens</h2>
        <p class="muted small grow">What a peer presents to read this server's shared memory: scoped to projects, stored hashed, revocable at once.</p>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New token
        </button>
      </header>
      <PagedList
        paged={paged}
        empty="No token yet. Create one for each peer that should read this server's shared memory, and give it to that peer's owner."
      >
        {(items) => (
          <div class="table-wrap">
            <table class="data-table stacking-table token-table">
              <thead>
                <tr>
                  <th scope="col">Token</th>
                  <th scope="col">Reads</th>
                  <th scope="col">May also</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((token) => {
                  const state = stateOf(token, now);
                  const extra = token.capabilities.filter((capability) => capability !== "pull");
                  const peer = token.link_id === null ? undefined : peerNames.get(token.link_id);
                  return (
                    <tr key={token.id} data-token-id={token.id} data-state={state} class={state === "active" ? undefined : "is-inactive"}>
                      <th scope="row">
                        <span class="token-label">{token.label}</span>
                        <div class="mono small token-prefix" title="The token's first characters; the token itself is never shown again">
                          {token.prefix}…
                        </div>
                        {token.link_id !== null && <div class="muted small">minted for the link to {peer ?? "a peer"}</div>}
                      </th>
                      <td data-label="Reads" class="token-projects">
                        {token.projects.join(", ")}
                        {token.include_global && (token.projects.length > 0 ? ", global entries" : "global entries")}
                      </td>
                      <td data-label="May also" class="token-capabilities">
                        {extra.length === 0 ? <span class="muted">pull only</span> : extra.join(", ")}
                      </td>
                      <td data-label="Expires">{token.expires_at === null ? <span class="muted">never</span> : <Time iso={token.expires_at} />}</td>
                      <td data-label="Last used" class="token-last-used">
                        <Time iso={token.last_used_at} />
                      </td>
                      <td data-label="State" class="token-state">
                        <Pill tone={`token-${state}`}>{state}</Pill>
                        {token.revoked_at !== null && (
                          <div class="muted small">
                            <Time iso={token.revoked_at} />
                          </div>
                        )}
                      </td>
                      <td class="row-actions">
                        {token.revoked_at === null && (
                          <button type="button" class="link-button danger-text" onClick={() => setRevoking(token)} aria-label={`Revoke ${token.label}`}>
                            Revoke
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
        <CreateTokenDialog
          onClose={() => setCreating(false)}
          onCreated={(token) => {
            setCreating(false);
            setCreated(token);
            paged.refresh();
          }}
        />
      )}
      {created && <SecretDialog token={created} selfUrl={selfUrl} onClose={() => setCreated(undefined)} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke “${revoking.label}”?`}
          confirmLabel="Revoke"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await api.delete(`/mesh/tokens/${encode(revoking.id)}`);
            paged.refresh();
            notify("success", `Revoked “${revoking.label}”.`);
          }}
        >
          <p>
            A peer presenting <span class="mono">{revoking.prefix}…</span> is refused from its very next request, and its link to this server turns{" "}
            <strong>unauthorized</strong>. What it already copied stays there.
          </p>
          <p>This cannot be undone: to let the peer back in, create a new token.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function CreateTokenDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (token: CreatedToken) => void }) {
  const { projects } = useApp();
  const [label, setLabel] = useState("");
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [includeGlobal, setIncludeGlobal] = useState(false);
  const [capabilities, setCapabilities] = useState<ReadonlySet<MeshCapability>>(new Set<MeshCapability>(["handshake"]));
  const [expires, setExpires] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const toggle = <T,>(set: ReadonlySet<T>, value: T, on: boolean): ReadonlySet<T> => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

  const submit = (event: Event) => {
    event.preventDefault();
    if (chosen.size === 0 && !includeGlobal) {
      setError(new Error("Choose at least one project, or the global entries: a token that reads nothing is refused."));
      return;
    }
    const body: Record<string, unknown> = {
      label: label.trim(),
      projects: projects.map((project) => project.id).filter((id) => chosen.has(id)),
      include_global: includeGlobal,
      capabilities: ["pull", ...OPTIONAL_CAPABILITIES.filter((capability) => capabilities.has(capability))],
    };
    const expiresAt = localInputToIso(expires);
    if (expiresAt !== null) body.expires_at = expiresAt;
    setBusy(true);
    setError(undefined);
    api.post<CreatedToken>("/mesh/tokens", body).then(
      (response) => onCreated(response.data),
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };

  return (
    <Dialog title="New mesh token" onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <p class="muted small">
          A peer holding it reads the shared (project-scoped) memory, doc and skill entries of the projects you choose — never private entries, directives, compiled code, tasks,
          messages or events — and nothing on any other route.
        </p>
        <Field label="Label (for you: whom it is for)">
          <input type="text" required maxLength={100} value={label} onInput={(event) => setLabel(event.currentTarget.value)} placeholder="e.g. the laptop of team B" />
        </Field>
        <fieldset class="checks token-projects-choice">
          <legend>Projects it reads</legend>
          {projects.length === 0 && <p class="muted small">No project yet: create one in the Projects tab, or grant the global entries.</p>}
          {projects.map((project) => (
            <label class="check" key={project.id}>
              <input type="checkbox" checked={chosen.has(project.id)} onChange={(event) => setChosen((current) => toggle(current, project.id, event.currentTarget.checked))} />
              {project.name === project.id ? project.id : `${project.name} (${project.id})`}
            </label>
          ))}
          <label class="check">
            <input type="checkbox" checked={includeGlobal} onChange={(event) => setIncludeGlobal(event.currentTarget.checked)} />
            Global entries (those in no project)
          </label>
        </fieldset>
        <fieldset class="checks">
          <legend>It may</legend>
          <label class="check">
            <input type="checkbox" checked disabled />
            <span>
              <strong>pull</strong>: {CAPABILITY_HINTS.pull}
            </span>
          </label>
          {OPTIONAL_CAPABILITIES.map((capability) => (
            <label class="check" key={capability}>
              <input
                type="checkbox"
                checked={capabilities.has(capability)}
                onChange={(event) => setCapabilities((current) => toggle(current, capability, event.currentTarget.checked))}
              />
              <span>
                <strong>{capability}</strong>: {CAPABILITY_HINTS[capability]}
              </span>
            </label>
          ))}
        </fieldset>
        <Field label="Expires (optional; empty: never)">
          <input type="datetime-local" value={expires} onInput={(event) => setExpires(event.currentTarget.value)} />
        </Field>
        <FormFooter error={error} busy={busy} label="Create token" busyLabel="Creating…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}

function SecretDialog({ token, selfUrl, onClose }: { token: CreatedToken; selfUrl: string | undefined; onClose: () => void }) {
  return (
    <Dialog title={`Token “${token.label}” created`} onClose={onClose}>
      <div class="stack">
        <p class="secret-warning" role="note">
          <strong>This token is shown once: you will not see it again.</strong> Copy it now. Cairn keeps only its hash, and lists it by its first characters.
        </p>
        <div class="key-box">
          <Field label="Mesh token" className="grow">
            <input type="text" readOnly value={token.token} class="mono" onFocus={(event) => event.currentTarget.select()} />
          </Field>
          <CopyButton text={token.token} label="Copy token" />
        </div>
        <p class="small">
          Give it to the peer's owner, who links in their Mesh view (<strong>Link a peer</strong>) with this server's address
          {selfUrl ? (
            <>
              : <span class="mono wrap-anywhere">{selfUrl}</span>
            </>
          ) : (
            "."
          )}
        </p>
        <div class="form-actions">
          <button type="button" class="primary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}
