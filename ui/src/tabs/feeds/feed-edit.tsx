// Changing a subscription: only the fields the user changed are sent, so that an edit never undoes
// what someone else changed meanwhile in another field.

import { useState } from "preact/hooks";
import { api, encode } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { FormFooter } from "../../components/fields.js";
import type { Feed } from "../../../../src/wire/feeds.js";
import { SettingsFields, settingsBody, settingsOf, settingsProblem, type SettingsDraft } from "./feed-settings.js";

interface EditProps {
  feed: Feed;
  onClose: () => void;
  onSaved: (feed: Feed) => void;
}

export function FeedEditDialog({ feed, onClose, onSaved }: EditProps) {
  const [draft, setDraft] = useState<SettingsDraft>(() => settingsOf(feed));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    const problem = settingsProblem(draft);
    if (problem) {
      setError(new Error(problem));
      return;
    }
    if (!draft.name.trim()) {
      setError(new Error("Give the subscription a name."));
      return;
    }
    const before = settingsBody(settingsOf(feed));
    const after = settingsBody(draft);
    const changes = Object.fromEntries(Object.entries(after).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key])));
    if (Object.keys(changes).length === 0) {
      onClose();
      return;
    }
    setBusy(true);
    setError(undefined);
    api
      .patch<Feed>(`/feeds/${encode(feed.id)}`, changes)
      .then((response) => {
        onSaved(response.data);
        onClose();
      })
      .catch((failure: unknown) => {
        setError(failure);
        setBusy(false);
      });
  };

  return (
    <Dialog title={`Edit “${feed.name}”`} onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <p class="muted small mono wrap-anywhere">{feed.url}</p>
        <SettingsFields draft={draft} onChange={(change) => setDraft((current) => ({ ...current, ...change }))} nameLabel="Name" />
        <p class="muted small">A new interval counts from the last poll. Entries already written keep their tags and confidence.</p>
        <FormFooter error={error} busy={busy} label="Save" busyLabel="Saving…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
