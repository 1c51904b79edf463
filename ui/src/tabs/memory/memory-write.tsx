// Writing a memory entry, and what the server made of it: a new entry (with the similar ones it
// found) or a duplicate of an existing entry, which was reinforced instead.

import { useState } from "preact/hooks";
import { api } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { Field, FormFooter } from "../../components/fields.js";
import { ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import { fixed, localInputToIso, shortId, splitList } from "../../format.js";
import type { MemoryType, MemoryWriteResult, Scope } from "../../../../src/wire/memory.js";

interface WriteProps {
  onClose: () => void;
  onOpen: (id: string) => void;
}

/** The write form's fields as typed (tags comma-separated, expiry as a local date-time). */
export interface Draft {
  content: string;
  type: MemoryType;
  scope: Scope;
  project: string;
  tags: string;
  expiresAt: string;
}

const EMPTY: Draft = { content: "", type: "memory", scope: "project", project: "", tags: "", expiresAt: "" };

export function MemoryWriteDialog({ onClose, onOpen }: WriteProps) {
  const { me } = useApp();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [result, setResult] = useState<{ entry: MemoryWriteResult; status: number } | undefined>(undefined);
  const types: MemoryType[] = me.can_write_directives ? ["memory", "doc", "skill", "directive"] : ["memory", "doc", "skill"];
  const set = (change: Partial<Draft>) => setDraft((current) => ({ ...current, ...change }));

  const save = (allowDuplicate: boolean) => {
    if (!draft.content.trim()) {
      setError(new Error("Write some content first."));
      return;
    }
    const body: Record<string, unknown> = { content: draft.content, type: draft.type, scope: draft.scope, tags: splitList(draft.tags) };
    const project = projectValue(draft.project);
    if (project !== undefined) body.project = project;
    const expiresAt = localInputToIso(draft.expiresAt);
    if (expiresAt) body.expires_at = expiresAt;
    if (allowDuplicate) body.allow_duplicate = true;
    setBusy(true);
    setError(undefined);
    api
      .post<MemoryWriteResult>("/memory", body)
      .then((response) => {
        setResult({ entry: response.data, status: response.status });
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => setBusy(false));
  };

  const currentProject = me.current_project ?? "global";
  return (
    <Dialog title="New memory entry" onClose={onClose} wide>
      {result ? (
        <Verdict
          result={result}
          onOpen={onOpen}
          onAnother={() => {
            setResult(undefined);
            setDraft(EMPTY);
          }}
          onForce={result.status === 200 ? () => {
            setResult(undefined);
            save(true);
          } : undefined}
          onClose={onClose}
        />
      ) : (
        <form
          class="stack"
          onSubmit={(event) => {
            event.preventDefault();
            save(false);
          }}
        >
          <Field label="Content">
            <textarea rows={6} required value={draft.content} onInput={(event) => set({ content: event.currentTarget.value })} />
          </Field>
          <div class="form-grid">
            <Field label="Type">
              <select value={draft.type} onChange={(event) => set({ type: event.currentTarget.value as MemoryType })}>
                {types.map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Scope">
              <select value={draft.scope} onChange={(event) => set({ scope: event.currentTarget.value as Scope })}>
                <option value="project">project (shared)</option>
                <option value="agent">agent (private to me)</option>
              </select>
            </Field>
            <ProjectSelect label="Project" value={draft.project} onChange={(project) => set({ project })} emptyLabel={`my current project (${currentProject})`} />
            <Field label="Tags (comma-separated)">
              <input type="text" value={draft.tags} onInput={(event) => set({ tags: event.currentTarget.value })} />
            </Field>
            <Field label="Expires at (optional)">
              <input type="datetime-local" value={draft.expiresAt} onInput={(event) => set({ expiresAt: event.currentTarget.value })} />
            </Field>
          </div>
          {draft.type === "directive" && <p class="hint">A directive is a standing instruction every agent in its scope must follow. Its confidence is fixed at 100%.</p>}
          <FormFooter error={error} busy={busy} label="Save" busyLabel="Saving…" onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}

interface VerdictProps {
  result: { entry: MemoryWriteResult; status: number };
  onOpen: (id: string) => void;
  onAnother: () => void;
  onForce: (() => void) | undefined;
  onClose: () => void;
}

function Verdict({ result, onOpen, onAnother, onForce, onClose }: VerdictProps) {
  const { entry, status } = result;
  const duplicate = status === 200 && entry.duplicate_of !== undefined;
  const similar = entry.similar ?? [];
  return (
    <div class="stack verdict" role="status" data-verdict={duplicate ? "duplicate" : "new"}>
      {duplicate ? (
        <p class="verdict-line verdict-duplicate">
          <strong>Duplicate.</strong> Nothing new was written: this is the same as entry{" "}
          <button type="button" class="link-button" onClick={() => onOpen(entry.id)}>
            {shortId(entry.id)}
          </button>
          {entry.similarity !== undefined && <> (similarity {fixed(entry.similarity)})</>}, which was reinforced instead.
        </p>
      ) : (
        <p class="verdict-line verdict-new">
          <strong>Saved</strong> as a new entry{" "}
          <button type="button" class="link-button" onClick={() => onOpen(entry.id)}>
            {shortId(entry.id)}
          </button>
          .
        </p>
      )}
      {entry.redactions !== undefined && (
        <p class="verdict-line verdict-redacted" data-redactions={entry.redactions}>
          {entry.redactions === 1 ? "One secret" : `${entry.redactions} secrets`} (a key, a token or a password) {entry.redactions === 1 ? "was" : "were"} replaced by{" "}
          <code>[REDACTED:…]</code> before {duplicate ? "the text was compared" : "it was stored"}: shared memory is read by the whole team.
        </p>
      )}
      {!duplicate &&
        (similar.length > 0 ? (
          <div>
            <p>Similar entries the team already has (reconcile them while you have the context):</p>
            <ul class="similar-list">
              {similar.map((item) => (
                <li key={item.id}>
                  <button type="button" class="link-button" onClick={() => onOpen(item.id)}>
                    {shortId(item.id)}
                  </button>{" "}
                  by {item.agent_id}, similarity {fixed(item.similarity)}
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <p class="muted">No similar entry was found.</p>
        ))}
      <div class="form-actions">
        <button type="button" class="primary" onClick={onAnother}>
          Write another
        </button>
        {onForce && (
          <button type="button" onClick={onForce}>
            Save it as a new entry anyway
          </button>
        )}
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </div>
  );
}
