// Linking a peer: its address and a token its owner minted there, which of its projects land in
// which project here, both ways or pull only, how often, and how far its copies are trusted. The
// server checks the token against the peer before keeping anything; its refusals each say what to
// do next: the peer refused the token (422), did not answer (502), is linked already (409).

import { useState } from "preact/hooks";
import { ApiError, api } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { ErrorNote } from "../../components/feedback.js";
import { Field } from "../../components/fields.js";
import { useApp } from "../../context.js";
import type { MeshDiscovered, MeshLink } from "../../../../src/wire/mesh.js";

interface LinkDialogProps {
  /** A peer heard of: its address is the one it was heard at, and the link goes by its instance id. */
  discovered?: MeshDiscovered | undefined;
  onClose: () => void;
  onLinked: (link: MeshLink) => void;
  /** Shows a link that already exists (the answer to a 409). */
  onShow: (id: string) => void;
}

interface MappingRow {
  key: number;
  remote: string;
  /** "" lands it in the project of the same id. */
  local: string;
}

export function LinkDialog({ discovered, onClose, onLinked, onShow }: LinkDialogProps) {
  const { projects } = useApp();
  const [url, setUrl] = useState(discovered?.url ?? "");
  const [token, setToken] = useState("");
  const [direction, setDirection] = useState<"both" | "pull">("both");
  const [rows, setRows] = useState<MappingRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [intervalSeconds, setIntervalSeconds] = useState("300");
  const [confidence, setConfidence] = useState("0.8");
  const [label, setLabel] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const addRow = () => {
    setRows((current) => [...current, { key: nextKey, remote: "", local: "" }]);
    setNextKey((key) => key + 1);
  };
  const changeRow = (key: number, change: Partial<MappingRow>) => setRows((current) => current.map((row) => (row.key === key ? { ...row, ...change } : row)));
  const removeRow = (key: number) => setRows((current) => current.filter((row) => row.key !== key));

  const submit = (event: Event) => {
    event.preventDefault();
    const mapped = rows.filter((row) => row.remote.trim() !== "");
    const body: Record<string, unknown> = {
      token: token.trim(),
      direction,
      interval_seconds: Number(intervalSeconds),
      max_confidence: Number(confidence),
    };
    if (mapped.length > 0) body.projects = mapped.map((row) => (row.local === "" || row.local === row.remote.trim() ? row.remote.trim() : { remote: row.remote.trim(), local: row.local }));
    if (label.trim()) body.label = label.trim();
    setBusy(true);
    setError(undefined);
    const call = discovered ? api.post<MeshLink>("/mesh/link-discovered", { ...body, instance_id: discovered.instance_id }) : api.post<MeshLink>("/mesh/peers", { ...body, url: url.trim() });
    call.then(
      (response) => {
        onLinked(response.data);
        onClose();
      },
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };

  return (
    <Dialog title={discovered ? `Link ${discovered.name}` : "Link a peer"} onClose={onClose} wide>
      <form class="stack link-form" onSubmit={submit}>
        <p class="muted small">
          This server then pulls the peer's shared memory, doc and skill entries of the projects its token grants. Copies are read-only here: they change only where they were
          written. Ask the peer's owner for a token (their Mesh view, <strong>New token</strong>).
        </p>
        <Field label="Peer URL (as this server reaches it)">
          <input
            type="url"
            required
            maxLength={2048}
            value={url}
            readOnly={discovered !== undefined}
            onInput={(event) => setUrl(event.currentTarget.value)}
            placeholder="e.g. https://cairn.team-b.example.com"
          />
        </Field>
        <Field label="Token from the peer's owner (cairn_mt_…)">
          <input
            type="text"
            class="mono"
            required
            maxLength={256}
            autocomplete="off"
            spellcheck={false}
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
            placeholder="cairn_mt_…"
          />
        </Field>
        <fieldset class="checks">
          <legend>Direction</legend>
          <label class="check">
            <input type="radio" name="direction" value="both" checked={direction === "both"} onChange={() => setDirection("both")} />
            Both ways: also let the peer pull from here (its token needs “handshake”)
          </label>
          <label class="check">
            <input type="radio" name="direction" value="pull" checked={direction === "pull"} onChange={() => setDirection("pull")} />
            Pull only: this server reads the peer, the peer reads nothing here
          </label>
        </fieldset>
        <fieldset class="checks mapping">
          <legend>Projects (the peer's → here)</legend>
          {rows.length === 0 && <p class="muted small">Every project the token grants, each into the project of the same id here (it must exist).</p>}
          {rows.map((row, index) => (
            <div class="mapping-row" key={row.key}>
              <Field label={`Peer's project ${index + 1}`}>
                <input type="text" required value={row.remote} onInput={(event) => changeRow(row.key, { remote: event.currentTarget.value })} placeholder="its project id" />
              </Field>
              <span class="mapping-arrow" aria-hidden="true">
                →
              </span>
              <Field label={`Lands in ${index + 1}`}>
                <select value={row.local} onChange={(event) => changeRow(row.key, { local: event.currentTarget.value })}>
                  <option value="">the same id here</option>
                  {projects.map((project) => (
                    <option key={project.id} value={project.id}>
                      {project.name === project.id ? project.id : `${project.name} (${project.id})`}
                    </option>
                  ))}
                </select>
              </Field>
              <button type="button" class="icon-button" aria-label={`Remove project ${index + 1}`} onClick={() => removeRow(row.key)}>
                ×
              </button>
            </div>
          ))}
          <div>
            <button type="button" class="link-button" onClick={addRow}>
              {rows.length === 0 ? "Choose projects instead" : "Add a project"}
            </button>
          </div>
        </fieldset>
        <div class="form-grid">
          <Field label="Sync every (seconds, 30 to 86400)">
            <input type="number" required min={30} max={86400} step={1} value={intervalSeconds} onInput={(event) => setIntervalSeconds(event.currentTarget.value)} />
          </Field>
          <Field label="Copies' confidence cap (0 to 1)">
            <input type="number" required min={0} max={1} step={0.05} value={confidence} onInput={(event) => setConfidence(event.currentTarget.value)} />
          </Field>
          <Field label="Label (optional)">
            <input type="text" maxLength={100} value={label} onInput={(event) => setLabel(event.currentTarget.value)} />
          </Field>
        </div>
        {error !== undefined && <LinkError error={error} onShow={onShow} />}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? "Checking the token with the peer…" : "Link"}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The server's answer as it is, and what to do about it. */
function LinkError({ error, onShow }: { error: unknown; onShow: (id: string) => void }) {
  if (!(error instanceof ApiError)) return <ErrorNote error={error} />;
  if (error.status === 409 && typeof error.body.id === "string") {
    const existing = error.body.id;
    return (
      <div class="error-note" role="alert" data-status="409">
        <span class="error-text">Already linked: this server has a link to that peer.</span>
        <button type="button" class="link-button" onClick={() => onShow(existing)}>
          Show the link
        </button>
      </div>
    );
  }
  const advice =
    error.status === 502
      ? "The peer did not answer at this address. Check the URL — this server calls it, not your browser, so it must be reachable from here — and that the peer is running."
      : error.detail === "peer rejected the token"
        ? "The peer answered, but refused this token: it is mistyped, revoked or expired, or was minted on another server. Ask the peer's owner for a new one."
        : error.detail.startsWith("peer refused the handshake")
          ? "Nothing was kept. Ask for a token with “handshake”, or choose “Pull only”."
          : error.detail.startsWith("url not allowed")
            ? "Cairn calls only the addresses its operator allows (MESH_ALLOW_PRIVATE for private ones)."
            : error.detail.includes("no such project here")
              ? "Create the project here first (Projects tab), or map the peer's project to one that exists."
              : undefined;
  return (
    <div class="error-note link-error-note" role="alert" data-status={String(error.status)}>
      <span class="error-text">{error.detail}</span>
      {advice && <span class="error-advice">{advice}</span>}
    </div>
  );
}
