// Subscribing to a feed: its URL, where its items go and how it is polled. The server's refusals
// each say what to do next: a URL it will not fetch or that is no feed (422), a feed already
// followed in the project (409, with the subscription to show), a feed that did not answer (502).

import { useState } from "preact/hooks";
import { ApiError, api } from "../../api.js";
import { Dialog } from "../../components/dialog.js";
import { ErrorNote } from "../../components/feedback.js";
import { Field } from "../../components/fields.js";
import { ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import type { Feed } from "../../../../src/wire/feeds.js";
import { DEFAULT_SETTINGS, SettingsFields, settingsBody, settingsProblem, type SettingsDraft } from "./feed-settings.js";

interface SubscribeProps {
  /** The project the tab is filtered to, to start from. */
  project: string;
  onClose: () => void;
  onSubscribed: (feed: Feed, verified: boolean) => void;
  /** Shows a subscription that already exists (the answer to a 409). */
  onShow: (id: string) => void;
}

export function FeedSubscribeDialog({ project: initialProject, onClose, onSubscribed, onShow }: SubscribeProps) {
  const { me } = useApp();
  const [url, setUrl] = useState("");
  const [project, setProject] = useState(initialProject);
  const [settings, setSettings] = useState<SettingsDraft>(DEFAULT_SETTINGS);
  const [verify, setVerify] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    const problem = settingsProblem(settings);
    if (problem) {
      setError(new Error(problem));
      return;
    }
    const body: Record<string, unknown> = { url: url.trim(), ...settingsBody(settings) };
    const projectId = projectValue(project);
    if (projectId !== undefined) body.project = projectId;
    setBusy(true);
    setError(undefined);
    api
      .post<Feed>(verify ? "/feeds" : "/feeds?verify=false", body)
      .then((response) => {
        onSubscribed(response.data, verify);
        onClose();
      })
      .catch((failure: unknown) => {
        setError(failure);
        setBusy(false);
      });
  };

  return (
    <Dialog title="Subscribe to a feed" onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <p class="muted small">
          An RSS, Atom or JSON Feed address: release notes, a changelog, a status page. Each new item becomes a memory entry in the project, tagged <span class="tag">feed-item</span> and{" "}
          <span class="tag">unprocessed</span>, written by you.
        </p>
        <Field label="Feed URL">
          <input type="url" required maxLength={2048} value={url} onInput={(event) => setUrl(event.currentTarget.value)} placeholder="e.g. https://example.com/releases.atom" />
        </Field>
        <ProjectSelect label="Project" value={project} onChange={setProject} emptyLabel={`my current project (${me.current_project ?? "global"})`} />
        <SettingsFields draft={settings} onChange={(change) => setSettings((current) => ({ ...current, ...change }))} nameLabel="Name (optional: the feed's own title)" />
        <label class="check">
          <input type="checkbox" checked={verify} onChange={(event) => setVerify(event.currentTarget.checked)} />
          Check the feed now (fetch it once and take its newest items)
        </label>
        {!verify && <p class="muted small">The subscription is saved without fetching the feed; the first poll runs within a minute and the list shows how it went.</p>}
        {error !== undefined && <SubscribeError error={error} verify={verify} onShow={onShow} />}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? (verify ? "Checking the feed…" : "Subscribing…") : "Subscribe"}
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
function SubscribeError({ error, verify, onShow }: { error: unknown; verify: boolean; onShow: (id: string) => void }) {
  if (!(error instanceof ApiError)) return <ErrorNote error={error} />;
  if (error.status === 409) {
    const existing = typeof error.body.id === "string" ? error.body.id : undefined;
    return (
      <div class="error-note" role="alert" data-status="409">
        <span class="error-text">Already subscribed: this URL is followed in that project.</span>
        {existing && (
          <button type="button" class="link-button" onClick={() => onShow(existing)}>
            Show the subscription
          </button>
        )}
      </div>
    );
  }
  const advice =
    error.status === 502
      ? verify
        ? "The feed did not answer as it should. Check the URL, or untick “Check the feed now” to subscribe anyway: the poller keeps trying and the list shows its last error."
        : undefined
      : error.detail.startsWith("not a feed")
        ? "The address answered, but not with RSS, Atom or JSON Feed. A page often names its feed in a <link rel=\"alternate\"> tag; use that address."
        : error.detail.startsWith("url not allowed")
          ? "Cairn fetches only public http(s) addresses, unless the server's operator allows private ones (FEEDS_ALLOW_PRIVATE)."
          : undefined;
  return (
    <div class="error-note subscribe-error" role="alert" data-status={String(error.status)}>
      <span class="error-text">{error.detail}</span>
      {advice && <span class="error-advice">{advice}</span>}
    </div>
  );
}
