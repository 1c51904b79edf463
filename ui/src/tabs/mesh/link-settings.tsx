// Changing a link's label, interval and confidence cap: only the fields the user changed are sent.

import { useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { Field, FormFooter } from "../../components/fields.js";
import type { MeshLink } from "../../../../src/wire/mesh.js";

interface LinkSettingsProps {
  link: MeshLink;
  onClose: () => void;
  onSaved: (link: MeshLink) => void;
}

export function LinkSettingsDialog({ link, onClose, onSaved }: LinkSettingsProps) {
  const [label, setLabel] = useState(link.label ?? "");
  const [intervalSeconds, setIntervalSeconds] = useState(String(link.interval_seconds));
  const [confidence, setConfidence] = useState(String(link.max_confidence));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    const changes: Record<string, unknown> = {};
    const newLabel = label.trim() === "" ? null : label.trim();
    if (newLabel !== link.label) changes.label = newLabel;
    if (Number(intervalSeconds) !== link.interval_seconds) changes.interval_seconds = Number(intervalSeconds);
    if (Number(confidence) !== link.max_confidence) changes.max_confidence = Number(confidence);
    if (Object.keys(changes).length === 0) {
      onClose();
      return;
    }
    setBusy(true);
    setError(undefined);
    api.patch<MeshLink>(`/mesh/peers/${encode(link.id)}`, changes).then(
      (response) => {
        onSaved(response.data);
        onClose();
      },
      (failure: unknown) => {
        setError(failure);
        setBusy(false);
      },
    );
  };

  return (
    <Dialog title={`Link to ${link.peer_name}`} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <p class="muted small mono wrap-anywhere">{link.url}</p>
        <Field label="Label (optional)">
          <input type="text" maxLength={100} value={label} onInput={(event) => setLabel(event.currentTarget.value)} />
        </Field>
        <Field label="Sync every (seconds, 30 to 86400)">
          <input type="number" required min={30} max={86400} step={1} value={intervalSeconds} onInput={(event) => setIntervalSeconds(event.currentTarget.value)} />
        </Field>
        <Field label="Copies' confidence cap (0 to 1)">
          <input type="number" required min={0} max={1} step={0.05} value={confidence} onInput={(event) => setConfidence(event.currentTarget.value)} />
        </Field>
        <p class="muted small">The interval takes effect after the next sync; the confidence cap applies to copies as they arrive.</p>
        <FormFooter error={error} busy={busy} label="Save" busyLabel="Saving…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
