// The Feeds tab: the RSS, Atom and JSON Feed subscriptions whose items become memory, with their
// health and actions, a form to subscribe, and the addresses under which Cairn's own memory can be
// followed as a feed. `#/feeds/<id>` points at one subscription (a memory card's feed mark links there).

import { useEffect, useState } from "preact/hooks";
import { api, encode, query } from "../../api.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { FollowFeed } from "../../components/follow-feed.js";
import { PagedList } from "../../components/paged-list.js";
import { GLOBAL, ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import { plural } from "../../format.js";
import { useLiveRefresh, usePaged } from "../../hooks.js";
import type { Feed } from "../../../../src/wire/feeds.js";
import { FeedCard } from "./feed-card.js";
import { FeedEditDialog } from "./feed-edit.js";
import { FeedSubscribeDialog } from "./feed-subscribe.js";

/** The subscription `#/feeds/<id>` points at, if any. */
const targetFromHash = (): string | undefined => /^#\/?feeds\/([0-9a-f-]{36})/i.exec(location.hash)?.[1];

export function FeedsTab() {
  const { notify, projects } = useApp();
  const [project, setProject] = useState("");
  const [subscribing, setSubscribing] = useState(false);
  const [editing, setEditing] = useState<Feed | undefined>(undefined);
  const [deleting, setDeleting] = useState<Feed | undefined>(undefined);
  const [target, setTarget] = useState(targetFromHash);

  const paged = usePaged<Feed>((cursor, limit) => api.get<Feed[]>("/feeds" + query({ project: projectValue(project), limit, cursor })), [project], 50);
  useLiveRefresh(["feed.*"], paged.refresh);

  useEffect(() => {
    const follow = () => setTarget(targetFromHash());
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  const targetShown = target !== undefined && paged.items.some((feed) => feed.id === target);
  useEffect(() => {
    if (!targetShown) return;
    const card = document.querySelector<HTMLElement>(`.feed-card[data-feed-id="${target}"]`);
    card?.scrollIntoView({ block: "center" });
    card?.focus({ preventScroll: true });
  }, [target, targetShown]);

  const show = (id: string) => {
    // The subscription may be in a project the filter hides.
    setProject("");
    location.hash = `#/feeds/${id}`;
  };
  const changed = (feed: Feed) => paged.replace((candidate) => candidate.id === feed.id, feed);

  const projectName = projects.find((candidate) => candidate.id === project)?.name ?? project;
  const followed = project === "" ? "the entries of every project the reader may see" : project === GLOBAL ? "the global entries (those in no project)" : `the entries of ${projectName}`;

  return (
    <div class="feeds-tab">
      <div class="toolbar">
        <fieldset class="filters">
          <legend class="visually-hidden">Filters</legend>
          <ProjectSelect label="Project" value={project} onChange={setProject} emptyLabel="any project" />
        </fieldset>
        <button type="button" class="primary new-button" onClick={() => setSubscribing(true)}>
          Subscribe to a feed
        </button>
      </div>
      <section aria-label="Subscriptions" class="feed-list-section">
        <PagedList
          paged={paged}
          empty={
            project !== "" ? (
              "No subscription in this project."
            ) : (
              <>
                No feed subscriptions yet. Subscribe to the RSS, Atom or JSON Feed of something your agents should keep up with — a dependency's release notes, a changelog, a
                status page — and each new item becomes a memory entry in the project, tagged <span class="tag">feed-item</span> and <span class="tag">unprocessed</span>, for
                agents to find when they search.
              </>
            )
          }
        >
          {(items) => (
            <ol class="feed-list">
              {items.map((feed) => (
                <li key={feed.id}>
                  <FeedCard feed={feed} targeted={feed.id === target} onChanged={changed} onEdit={setEditing} onDelete={setDeleting} />
                </li>
              ))}
            </ol>
          )}
        </PagedList>
      </section>
      <section class="panel follow-panel" aria-labelledby="follow-memory-heading">
        <h2 id="follow-memory-heading">Follow this memory</h2>
        <FollowFeed selection={{ project: projectValue(project) }} what={followed} />
      </section>

      {subscribing && (
        <FeedSubscribeDialog
          project={project}
          onClose={() => setSubscribing(false)}
          onShow={(id) => {
            setSubscribing(false);
            show(id);
          }}
          onSubscribed={(feed, verified) => {
            paged.refresh();
            notify(
              "success",
              verified ? `Subscribed to “${feed.name}”: ${plural(feed.items_ingested, "item")} ingested.` : `Subscribed to “${feed.name}”; its first poll runs within a minute.`,
            );
          }}
        />
      )}
      {editing && (
        <FeedEditDialog
          feed={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(feed) => {
            changed(feed);
            notify("success", `Saved “${feed.name}”.`);
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Unsubscribe from “${deleting.name}”?`}
          confirmLabel="Unsubscribe"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.delete(`/feeds/${encode(deleting.id)}`);
            paged.replace((candidate) => candidate.id === deleting.id, undefined);
            notify("success", `Unsubscribed from “${deleting.name}”.`);
          }}
        >
          <p>Cairn stops polling this feed:</p>
          <p class="mono small wrap-anywhere">{deleting.url}</p>
          <p>
            {deleting.items_ingested === 0 ? (
              "It brought no entries yet."
            ) : (
              <>
                The {plural(deleting.items_ingested, "entry", "entries")} it brought {deleting.items_ingested === 1 ? "stays" : "stay"} in memory (tagged <span class="tag">feed-item</span>);
                delete them in the Memory tab if you no longer want them.
              </>
            )}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
