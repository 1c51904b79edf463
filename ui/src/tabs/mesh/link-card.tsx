// One link to a peer: whom it pulls from, whether its syncs work (a failing link shows its last
// error and stands out), how far it got, what it brought, and the owner's actions. Sync now says
// what the sync did right there on the card, or the peer's failure.

import { useState } from "preact/hooks";
import { ApiError, api, encode, errorText } from "../../api.js";
import { ActionButton } from "../../components/action-button.js";
import { MeshIcon } from "../../components/mesh-icon.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { percent, plural } from "../../format.js";
import { useNow } from "../../hooks.js";
import type { MeshLink, MeshLinkStatusName, MeshSyncResult } from "../../../../src/wire/mesh.js";

interface LinkCardProps {
  link: MeshLink;
  /** The card the address pointed at (`#/mesh/<id>`), outlined. */
  targeted: boolean;
  onChanged: (link: MeshLink) => void;
  /** After a sync, whatever its outcome: the link's counts and status changed. */
  onSynced: () => void;
  onEdit: (link: MeshLink) => void;
  onUnlink: (link: MeshLink) => void;
}

type SyncOutcome = { kind: "done"; result: MeshSyncResult } | { kind: "failed"; status: number; text: string };

const STATUS_TITLES: Record<MeshLinkStatusName, string> = {
  active: "Its last sync worked",
  failing: "Its last three syncs or more failed; it is still retried, less often (at least once an hour)",
  unauthorized: "The peer refused the token: it was revoked or expired there. Link again with a new token",
  paused: "Not synced until resumed",
};

export function LinkCard({ link, targeted, onChanged, onSynced, onEdit, onUnlink }: LinkCardProps) {
  const headingId = `link-${link.id}`;
  const classes = ["link-card", `is-${link.status}`, targeted ? "is-target" : ""].filter(Boolean).join(" ");
  return (
    <article class={classes} aria-labelledby={headingId} data-link-id={link.id} data-status={link.status} tabIndex={targeted ? -1 : undefined}>
      <header class="link-header">
        <h3 class="link-name" id={headingId}>
          <MeshIcon />
          <span>{link.peer_name}</span>
        </h3>
        <Pill tone={`mesh-${link.status}`} title={STATUS_TITLES[link.status]}>
          {link.status}
        </Pill>
        <span class="muted small link-direction">{link.direction === "both" ? "linked both ways" : "pull only"}</span>
        {link.label && <span class="muted small link-label">“{link.label}”</span>}
      </header>
      <p class="link-url small">
        <span class="visually-hidden">Address: </span>
        {/^https?:\/\//i.test(link.url) ? (
          <a href={link.url} target="_blank" rel="noopener noreferrer" class="mono">
            {link.url}
          </a>
        ) : (
          <span class="mono">{link.url}</span>
        )}
        <span class="muted"> · token </span>
        <span class="mono link-token" title="Enough of the peer's token to recognise it, never to use it">
          {link.token_hint}
        </span>
      </p>
      {link.last_error !== null && (
        <p class="link-error" role="note">
          <strong>Last error{link.status === "failing" || link.status === "unauthorized" ? ` (${link.status})` : ""}:</strong> <span class="link-error-text">{link.last_error}</span>
        </p>
      )}
      <LinkFacts link={link} />
      <footer class="link-footer">
        <ul class="link-projects" aria-label="Projects it pulls">
          {link.projects.map((pair) => (
            <li key={pair.remote} class="tag">
              {pair.remote === pair.local ? pair.remote : `${pair.remote} → ${pair.local}`}
            </li>
          ))}
        </ul>
        <span class="spacer" />
        <LinkActions link={link} onChanged={onChanged} onSynced={onSynced} onEdit={onEdit} onUnlink={onUnlink} />
      </footer>
    </article>
  );
}

/** "30 s", "5 min", "2 h", "day": the API's seconds as a person says them. */
function every(seconds: number): string {
  if (seconds === 86_400) return "day";
  if (seconds === 3600) return "hour";
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

function LinkFacts({ link }: { link: MeshLink }) {
  const now = useNow();
  const due = Date.parse(link.next_sync_at) <= now;
  return (
    <dl class="link-facts">
      <div>
        <dt>Last sync</dt>
        <dd class="link-last-sync">
          <Time iso={link.last_sync_at} />
        </dd>
      </div>
      <div>
        <dt>Last success</dt>
        <dd class="link-last-success">
          <Time iso={link.last_success_at} />
        </dd>
      </div>
      <div>
        <dt>Next sync</dt>
        <dd class="link-next-sync">{link.status === "paused" ? <span class="muted">paused</span> : due ? "due now" : <Time iso={link.next_sync_at} />}</dd>
      </div>
      <div>
        <dt title="The peer's change sequence applied up to">Cursor</dt>
        <dd class="link-cursor">{link.cursor}</dd>
      </div>
      <div>
        <dt>Applied</dt>
        <dd class="link-applied">{link.applied}</dd>
      </div>
      <div>
        <dt>Rejected</dt>
        <dd class={link.rejected > 0 ? "link-rejected warning-text" : "link-rejected"}>{link.rejected}</dd>
      </div>
      <div>
        <dt title="Items of projects the link does not map">Dropped</dt>
        <dd class="link-dropped">{link.dropped}</dd>
      </div>
      <div>
        <dt>Syncs</dt>
        <dd class="link-settings">
          every {every(link.interval_seconds)}, copies at most {percent(link.max_confidence)} confident
        </dd>
      </div>
    </dl>
  );
}

function LinkActions({ link, onChanged, onSynced, onEdit, onUnlink }: Omit<LinkCardProps, "targeted">) {
  const [syncing, setSyncing] = useState(false);
  const [outcome, setOutcome] = useState<SyncOutcome | undefined>(undefined);
  const paused = link.status === "paused";

  const syncNow = () => {
    setSyncing(true);
    setOutcome(undefined);
    api
      .post<MeshSyncResult>(`/mesh/peers/${encode(link.id)}/sync`)
      .then(
        (response) => setOutcome({ kind: "done", result: response.data }),
        (failure: unknown) => setOutcome({ kind: "failed", status: failure instanceof ApiError ? failure.status : 0, text: errorText(failure) }),
      )
      .finally(() => {
        setSyncing(false);
        onSynced();
      });
  };

  return (
    <div class="link-actions">
      <span class="link-sync-result" role="status" data-outcome={outcome?.kind} data-status={outcome?.kind === "failed" ? String(outcome.status) : undefined}>
        {outcome && <SyncOutcomeText outcome={outcome} />}
      </span>
      <button type="button" onClick={syncNow} disabled={syncing || paused} aria-busy={syncing} title={paused ? "Resume the link to sync it" : undefined}>
        {syncing ? "Syncing…" : "Sync now"}
      </button>
      <ActionButton
        onAction={async () => onChanged((await api.patch<MeshLink>(`/mesh/peers/${encode(link.id)}`, { paused: !paused })).data)}
        success={paused ? `Resumed the link to ${link.peer_name}.` : `Paused the link to ${link.peer_name}.`}
      >
        {paused ? "Resume" : "Pause"}
      </ActionButton>
      <button type="button" onClick={() => onEdit(link)}>
        Settings
      </button>
      <button type="button" class="link-button danger-text" onClick={() => onUnlink(link)}>
        Unlink
      </button>
    </div>
  );
}

/** Bytes as "812 B", "4.2 KiB", "1.3 MiB". */
function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KiB`;
  return `${(count / (1024 * 1024)).toFixed(1)} MiB`;
}

function SyncOutcomeText({ outcome }: { outcome: SyncOutcome }) {
  if (outcome.kind === "failed") return <span class="danger-text">Sync failed: {outcome.text}</span>;
  const { applied, skipped, rejected, tombstones, pages, duration_ms } = outcome.result;
  const cost = `${plural(pages, "page")}, ${bytes(outcome.result.bytes)} in ${duration_ms} ms`;
  if (applied === 0 && rejected === 0 && tombstones === 0) return <span class="muted">nothing new ({cost})</span>;
  const parts = [`${applied} applied`, ...(tombstones > 0 ? [plural(tombstones, "deletion")] : []), ...(skipped > 0 ? [`${skipped} skipped`] : [])];
  return (
    <span>
      <span class="success-text">{parts.join(", ")}</span>
      {rejected > 0 && <span class="warning-text">, {rejected} rejected</span>}
      <span class="muted"> ({cost})</span>
    </span>
  );
}
