// One subscription: what it follows, whether its polls work (a failing feed shows its last error),
// what it brought in, when it was polled and will be next, and the actions its subscriber or an
// owner may take. Polling now says what the poll did right there on the card.

import { useState } from "preact/hooks";
import { api, encode, errorText } from "../../api.js";
import { ActionButton } from "../../components/action-button.js";
import { Pill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { percent, plural } from "../../format.js";
import { useNow } from "../../hooks.js";
import type { Feed, FeedPollResult } from "../../../../src/wire/feeds.js";
import { FeedIcon } from "../../components/feed-icon.js";

interface FeedCardProps {
  feed: Feed;
  /** The card the address pointed at (`#/feeds/<id>`), outlined. */
  targeted: boolean;
  onChanged: (feed: Feed) => void;
  onEdit: (feed: Feed) => void;
  onDelete: (feed: Feed) => void;
}

type PollOutcome = { kind: "done"; result: FeedPollResult } | { kind: "failed"; text: string };

const STATUS_TITLES: Record<Feed["status"], string> = {
  ok: "Its last polls worked",
  failing: "Its last three polls or more failed; it is still polled, less often",
  paused: "Not polled until resumed (Poll now still works)",
};

export function FeedCard({ feed, targeted, onChanged, onEdit, onDelete }: FeedCardProps) {
  const { me } = useApp();
  const headingId = `feed-${feed.id}`;
  // The subscriber or an owner (CONTRACT §15); anyone else sees it, but may not change it.
  const manageable = feed.agent_id === me.agent_id || me.role === "owner";
  const classes = ["feed-card", `is-${feed.status}`, targeted ? "is-target" : ""].filter(Boolean).join(" ");
  return (
    <article class={classes} aria-labelledby={headingId} data-feed-id={feed.id} data-status={feed.status} tabIndex={targeted ? -1 : undefined}>
      <header class="feed-header">
        <h2 class="feed-name" id={headingId}>
          <FeedIcon />
          <span>{feed.name}</span>
        </h2>
        <Pill tone={`feed-${feed.status}`} title={STATUS_TITLES[feed.status]}>
          {feed.status}
        </Pill>
        <span class="feed-project muted small">{feed.project ?? "global"}</span>
      </header>
      <p class="feed-url small">
        <span class="visually-hidden">Address: </span>
        {/^https?:\/\//i.test(feed.url) ? (
          <a href={feed.url} target="_blank" rel="noopener noreferrer" class="mono">
            {feed.url}
          </a>
        ) : (
          <span class="mono">{feed.url}</span>
        )}
      </p>
      {feed.last_error !== null && (
        <p class="feed-error" role="note">
          <strong>Last error{feed.status === "failing" ? " (failing)" : ""}:</strong> <span class="feed-error-text">{feed.last_error}</span>
        </p>
      )}
      <FeedFacts feed={feed} />
      <footer class="feed-footer">
        {feed.tags.length > 0 && (
          <ul class="tags" aria-label="Tags for its entries">
            {feed.tags.map((tag) => (
              <li key={tag} class="tag">
                {tag}
              </li>
            ))}
          </ul>
        )}
        <span class="spacer" />
        {manageable ? (
          <FeedActions feed={feed} onChanged={onChanged} onEdit={onEdit} onDelete={onDelete} />
        ) : (
          <span class="muted small">Only {feed.agent_id} or an owner can change it.</span>
        )}
      </footer>
    </article>
  );
}

/** "15 min", "hour", "6 h", "day": the API's minutes as a person says them. */
function interval(minutes: number): string {
  if (minutes === 1440) return "day";
  if (minutes === 60) return "hour";
  if (minutes % 60 === 0) return `${minutes / 60} h`;
  return `${minutes} min`;
}

function FeedFacts({ feed }: { feed: Feed }) {
  const now = useNow();
  const due = Date.parse(feed.next_poll_at) <= now;
  return (
    <dl class="feed-facts">
      <div>
        <dt>Items ingested</dt>
        <dd class="feed-ingested">{feed.items_ingested}</dd>
      </div>
      <div>
        <dt>Last polled</dt>
        <dd class="feed-last-polled">
          <Time iso={feed.last_polled_at} />
        </dd>
      </div>
      {feed.last_error !== null && (
        <div>
          <dt>Last success</dt>
          <dd>
            <Time iso={feed.last_success_at} />
          </dd>
        </div>
      )}
      <div>
        <dt>Next poll</dt>
        <dd class="feed-next-poll">{feed.paused ? <span class="muted">paused</span> : due ? "due now" : <Time iso={feed.next_poll_at} />}</dd>
      </div>
      <div>
        <dt>Polls</dt>
        <dd class="feed-settings">
          every {interval(feed.interval_minutes)}, up to {plural(feed.max_items_per_poll, "item")}
        </dd>
      </div>
      <div>
        <dt>Entries written</dt>
        <dd class="feed-entries">
          by {feed.agent_id}, {percent(feed.confidence)} confidence
        </dd>
      </div>
    </dl>
  );
}

function FeedActions({ feed, onChanged, onEdit, onDelete }: Omit<FeedCardProps, "targeted">) {
  const [polling, setPolling] = useState(false);
  const [outcome, setOutcome] = useState<PollOutcome | undefined>(undefined);
  const reread = async () => onChanged((await api.get<Feed>(`/feeds/${encode(feed.id)}`)).data);

  const pollNow = () => {
    setPolling(true);
    setOutcome(undefined);
    api
      .post<FeedPollResult>(`/feeds/${encode(feed.id)}/poll`)
      .then(
        (response) => setOutcome({ kind: "done", result: response.data }),
        (failure: unknown) => setOutcome({ kind: "failed", text: errorText(failure) }),
      )
      // Either way the record changed (its counts, its last error): show it as it is now.
      .then(reread)
      // A failed re-read changes nothing shown: the list re-reads on the poll's feed.polled event anyway.
      .catch(() => undefined)
      .finally(() => setPolling(false));
  };

  return (
    <div class="feed-actions">
      <span class="feed-poll-result" role="status">
        {outcome && <PollOutcomeText outcome={outcome} />}
      </span>
      <button type="button" onClick={pollNow} disabled={polling} aria-busy={polling}>
        {polling ? "Polling…" : "Poll now"}
      </button>
      <ActionButton
        onAction={async () => onChanged((await api.patch<Feed>(`/feeds/${encode(feed.id)}`, { paused: !feed.paused })).data)}
        success={feed.paused ? `Resumed “${feed.name}”.` : `Paused “${feed.name}”.`}
      >
        {feed.paused ? "Resume" : "Pause"}
      </ActionButton>
      <button type="button" onClick={() => onEdit(feed)}>
        Edit
      </button>
      <button type="button" class="link-button danger-text" onClick={() => onDelete(feed)}>
        Delete
      </button>
    </div>
  );
}

function PollOutcomeText({ outcome }: { outcome: PollOutcome }) {
  if (outcome.kind === "failed") return <span class="danger-text">Poll failed: {outcome.text}</span>;
  const { ingested, not_modified } = outcome.result;
  if (ingested > 0) return <span class="success-text">{plural(ingested, "new item")}</span>;
  return <span class="muted">{not_modified ? "nothing new (the feed says it has not changed)" : "nothing new"}</span>;
}
