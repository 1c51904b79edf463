// Editing an entry under optimistic concurrency: the PATCH carries If-Match with the version the
// form was opened on. When someone changed the entry since (412), the current version is shown
// beside the draft, and the user either saves the draft over it or takes the current one.

import { useState } from "preact/hooks";
import { ApiError, api, encode } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { Field, FormFooter } from "../../components/fields.js";
import { GLOBAL, ProjectSelect, projectValue } from "../../components/pickers.js";
import { Time } from "../../components/time.js";
import { isoToLocalInput, localInputToIso, splitList } from "../../format.js";
import type { GraphNode } from "../../../../src/wire/graph.js";
import type { MemoryEntry, MemoryType, Scope } from "../../../../src/wire/memory.js";
import type { Draft as WriteDraft } from "./memory-write.js";

interface Draft extends WriteDraft {
  confidence: string;
}

const draftOf = (entry: MemoryEntry): Draft => ({
  content: entry.content,
  type: entry.type,
  scope: entry.scope,
  project: entry.project ?? GLOBAL,
  tags: entry.tags.join(", "),
  expiresAt: isoToLocalInput(entry.expires_at),
  confidence: String(Math.round(entry.confidence * 100)),
});

/** The fields of the draft that differ from `base`, as a PATCH body. */
function changes(draft: Draft, base: MemoryEntry): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const original = draftOf(base);
  if (draft.content !== base.content) body.content = draft.content;
  if (draft.type !== base.type) body.type = draft.type;
  if (draft.scope !== base.scope) body.scope = draft.scope;
  if (draft.project !== original.project) body.project = projectValue(draft.project) ?? null;
  const tags = splitList(draft.tags);
  if (tags.join("\n") !== base.tags.join("\n")) body.tags = tags;
  if (draft.expiresAt !== original.expiresAt) body.expires_at = localInputToIso(draft.expiresAt);
  if (base.type !== "directive" && draft.confidence !== original.confidence) body.confidence = Math.min(100, Math.max(0, Number(draft.confidence))) / 100;
  return body;
}

interface EditProps {
  entry: MemoryEntry;
  onClose: () => void;
  onSaved: (entry: MemoryEntry) => void;
}

export function MemoryEditDialog({ entry, onClose, onSaved }: EditProps) {
  const [base, setBase] = useState(entry);
  const [draft, setDraft] = useState(() => draftOf(entry));
  const [conflict, setConflict] = useState<MemoryEntry | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const set = (change: Partial<Draft>) => setDraft((current) => ({ ...current, ...change }));
  const directive = base.type === "directive";

  /** PATCHes the fields the draft changed relative to `from`, if `target` is still the current version. */
  const save = (from: MemoryEntry, target: MemoryEntry) => {
    const body = changes(draft, from);
    if (Object.keys(body).length === 0) {
      onClose();
      return;
    }
    if (typeof body.content === "string" && !body.content.trim()) {
      setError(new Error("The content cannot be empty."));
      return;
    }
    setBusy(true);
    setError(undefined);
    api
      .patch<MemoryEntry>(`/memory/${encode(target.id)}`, body, { headers: { "if-match": `"${target.version}"` } })
      .then((response) => {
        onSaved(response.data);
        onClose();
      })
      .catch(async (failure: unknown) => {
        if (failure instanceof ApiError && failure.status === 412) {
          try {
            setConflict((await api.get<GraphNode>(`/graph/${encode(target.id)}`)).data.node);
          } catch (reload: unknown) {
            setError(reload);
          }
        } else setError(failure);
      })
      .finally(() => setBusy(false));
  };

  // Only the fields this user changed go onto the newer version; what the other writer changed
  // elsewhere stays.
  const applyMine = () => {
    if (!conflict) return;
    const current = conflict;
    setConflict(undefined);
    save(base, current);
  };
  const takeCurrent = () => {
    if (!conflict) return;
    setBase(conflict);
    setDraft(draftOf(conflict));
    setConflict(undefined);
  };

  return (
    <Dialog title={`Edit ${directive ? "directive" : "entry"} ${entry.id.slice(0, 8)}`} onClose={onClose} wide>
      {conflict && (
        <div class="conflict" role="alert">
          <p>
            <strong>This entry changed while you were editing.</strong> You started from version {base.version}; it is now version {conflict.version} (changed{" "}
            <Time iso={conflict.updated_at} />
            ). Nothing of yours was saved.
          </p>
          <div class="conflict-current">
            <span class="field-label">Current content (version {conflict.version})</span>
            <div class="card-content">{conflict.content}</div>
            {conflict.tags.length > 0 && <p class="muted small">tags: {conflict.tags.join(", ")}</p>}
          </div>
          <p class="small">Saving again applies only the fields you changed to version {conflict.version}: {Object.keys(changes(draft, base)).join(", ") || "none"}.</p>
          <div class="form-actions">
            <button type="button" class="primary" onClick={applyMine} disabled={busy}>
              Apply my changes to version {conflict.version}
            </button>
            <button type="button" onClick={takeCurrent}>
              Discard mine and edit the current version
            </button>
          </div>
        </div>
      )}
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          save(base, base);
        }}
      >
        <Field label="Content">
          <textarea rows={8} value={draft.content} onInput={(event) => set({ content: event.currentTarget.value })} />
        </Field>
        <div class="form-grid">
          <Field label="Type">
            {directive ? (
              <input type="text" value="directive" readOnly aria-describedby="type-fixed" />
            ) : (
              <select value={draft.type} onChange={(event) => set({ type: event.currentTarget.value as MemoryType })}>
                {(["memory", "doc", "skill"] as const).map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
                {base.type === "compiled" && <option value="compiled">compiled</option>}
              </select>
            )}
          </Field>
          <Field label="Scope">
            <select value={draft.scope} onChange={(event) => set({ scope: event.currentTarget.value as Scope })}>
              <option value="project">project</option>
              <option value="agent">agent (private to its author)</option>
            </select>
          </Field>
          <ProjectSelect label="Project" value={draft.project} onChange={(project) => set({ project })} />
          <Field label="Tags (comma-separated)">
            <input type="text" value={draft.tags} onInput={(event) => set({ tags: event.currentTarget.value })} />
          </Field>
          <Field label="Expires at">
            <input type="datetime-local" value={draft.expiresAt} onInput={(event) => set({ expiresAt: event.currentTarget.value })} />
          </Field>
          {!directive && (
            <Field label="Confidence (%)">
              <input type="number" min={0} max={100} step={1} value={draft.confidence} onInput={(event) => set({ confidence: event.currentTarget.value })} />
            </Field>
          )}
        </div>
        {directive && (
          <p class="hint" id="type-fixed">
            A directive stays a directive, and its confidence is fixed at 100%.
          </p>
        )}
        <FormFooter error={error} busy={busy} label={`Save (version ${base.version})`} busyLabel="Saving…" onCancel={onClose} disabled={conflict !== undefined} />
      </form>
    </Dialog>
  );
}
