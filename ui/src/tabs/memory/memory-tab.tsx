// The Memory tab: the list (newest first, directives then docs then memories when no type is
// chosen) or a hybrid search, best score first, with filters, and writing, editing and deleting
// entries.

import { useEffect, useMemo, useState } from "preact/hooks";
import { api, encode, query } from "../../api.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { Empty, ErrorNote, Loading } from "../../components/feedback.js";
import { Field } from "../../components/fields.js";
import { FollowFeed } from "../../components/follow-feed.js";
import { PagedList } from "../../components/paged-list.js";
import { AgentSelect, ProjectSelect, projectValue } from "../../components/pickers.js";
import { useApp } from "../../context.js";
import { plural } from "../../format.js";
import { useDebounced, useLiveRefresh, useLoad, usePaged, type PageLoader } from "../../hooks.js";
import { liveStream } from "../../live.js";
import type { OutboundSelection } from "../../outbound-feeds.js";
import type { MemoryEntry, MemoryType, SearchHit } from "../../../../src/wire/memory.js";
import { MemoryCard } from "./memory-card.js";
import { MemoryDetailDialog } from "./memory-detail.js";
import { MemoryEditDialog } from "./memory-edit.js";
import { TYPE_ORDER } from "./memory-order.js";
import { MemoryWriteDialog } from "./memory-write.js";
import { feedIdOf, useFeedNames } from "./feed-names.js";

const feedNameOf = (names: ReadonlyMap<string, string>, entry: MemoryEntry): string | undefined => {
  const id = feedIdOf(entry);
  return id === undefined ? undefined : names.get(id);
};

interface Filters {
  /** "": every type but code (what the server lists unless asked); "all": code too. */
  type: "" | "all" | MemoryType;
  project: string;
  tag: string;
  agent: string;
  /** "": any provenance; "feed": only items of subscribed feeds; "mesh": only peers' copies. */
  source: "" | "feed" | "mesh";
}

const NO_FILTERS: Filters = { type: "", project: "", tag: "", agent: "", source: "" };
const SEARCH_STEP = 20;
const SEARCH_MAX = 100;

function filterParams(filters: Filters) {
  return {
    type: filters.type === "all" ? undefined : filters.type || undefined,
    include_code: filters.type === "all" ? true : undefined,
    project: projectValue(filters.project),
    tag: filters.tag.trim() || undefined,
    agent: filters.agent || undefined,
    source_kind: filters.source || undefined,
  };
}

/** The filters as the outbound feed routes take them (they know no include_code). */
function outboundSelection(filters: Filters): OutboundSelection {
  const { type, project, tag, agent, source_kind } = filterParams(filters);
  return { type, project, tag, agent, source_kind };
}

export function MemoryTab() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [searchText, setSearchText] = useState("");
  const [searchQuery, setSearchQuery] = useState("");
  const [writing, setWriting] = useState(false);
  const [editing, setEditing] = useState<MemoryEntry | undefined>(undefined);
  const [deleting, setDeleting] = useState<MemoryEntry | undefined>(undefined);
  const [suppressing, setSuppressing] = useState<MemoryEntry | undefined>(undefined);
  const [detail, setDetail] = useState<string | undefined>(undefined);
  const [edited, setEdited] = useState<ReadonlyMap<string, MemoryEntry>>(new Map());
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(new Set());
  const { notify } = useApp();
  const tag = useDebounced(filters.tag, 400);
  const settled = { ...filters, tag };
  const filterKey = JSON.stringify(settled);
  const set = (change: Partial<Filters>) => setFilters((current) => ({ ...current, ...change }));

  const runSearch = (event: Event) => {
    event.preventDefault();
    setSearchQuery(searchText.trim());
  };
  const clearSearch = () => {
    setSearchText("");
    setSearchQuery("");
  };

  const actions = {
    onOpen: setDetail,
    onEdit: setEditing,
    onDelete: setDeleting,
    onSuppress: setSuppressing,
  };
  const searching = searchQuery !== "";
  const hasFilter = filters.type !== "" || filters.project !== "" || filters.tag.trim() !== "" || filters.agent !== "" || filters.source !== "";

  return (
    <div class="memory-tab">
      <div class="toolbar">
        <form class="search-form" role="search" onSubmit={runSearch}>
          <Field label="Search memory (meaning and keywords)" className="grow">
            <input type="search" value={searchText} onInput={(event) => setSearchText(event.currentTarget.value)} placeholder="e.g. how is the build cached" />
          </Field>
          <button type="submit" class="primary">
            Search
          </button>
          {searching && (
            <button type="button" onClick={clearSearch}>
              Back to the list
            </button>
          )}
        </form>
        <button type="button" class="primary new-button" onClick={() => setWriting(true)}>
          New entry
        </button>
      </div>
      <fieldset class="filters">
        <legend class="visually-hidden">Filters</legend>
        <Field label="Type">
          <select value={filters.type} onChange={(event) => set({ type: event.currentTarget.value as Filters["type"] })}>
            <option value="">all but code</option>
            <option value="all">all with code</option>
            {TYPE_ORDER.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </Field>
        <ProjectSelect label="Project" value={filters.project} onChange={(project) => set({ project })} emptyLabel="any project" />
        <Field label="Tag">
          <input type="text" value={filters.tag} onInput={(event) => set({ tag: event.currentTarget.value })} />
        </Field>
        <AgentSelect label="Agent" value={filters.agent} onChange={(agent) => set({ agent })} emptyLabel="any agent" />
        <Field label="Source">
          <select value={filters.source} onChange={(event) => set({ source: event.currentTarget.value as Filters["source"] })}>
            <option value="">any source</option>
            <option value="feed">from feeds</option>
            <option value="mesh">from peers (mesh)</option>
          </select>
        </Field>
        {hasFilter && (
          <button type="button" class="link-button clear-filters" onClick={() => setFilters(NO_FILTERS)}>
            Clear filters
          </button>
        )}
      </fieldset>
      <details class="follow-details">
        <summary>Follow these entries as a feed</summary>
        <FollowFeed selection={outboundSelection(settled)} what={hasFilter ? "the entries these filters select" : "every entry the reader may see"} />
      </details>

      {searching ? (
        <SearchResults key={searchQuery + filterKey} q={searchQuery} filters={settled} actions={actions} edited={edited} deleted={deleted} />
      ) : (
        <EntryList key={filterKey} filters={settled} actions={actions} />
      )}

      {writing && (
<MemoryWriteDialog onClose={() => setWriting(false)} onOpen={setDetail} />
      )}
      {editing && (
        <MemoryEditDialog
          entry={editing}
          onClose={() => setEditing(undefined)}
          onSaved={(entry) => {
            setEdited((current) => new Map([...current, [entry.id, entry]]));
            notify("success", "Entry saved.");
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this entry?"
          confirmLabel="Delete"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await api.delete(`/memory/${encode(deleting.id)}`);
            setDeleted((current) => new Set([...current, deleting.id]));
            notify("success", "Entry deleted.");
          }}
        >
          <p>It disappears for every agent. The server keeps a soft-deleted copy, but no API call brings it back.</p>
          <blockquote class="card-content">{deleting.content.length > 300 ? `${deleting.content.slice(0, 300)}…` : deleting.content}</blockquote>
        </ConfirmDialog>
      )}
      {suppressing?.source?.kind === "mesh" && (
        <ConfirmDialog
          title={`Suppress this copy from ${suppressing.source.origin_name}?`}
          confirmLabel="Suppress here"
          onClose={() => setSuppressing(undefined)}
          onConfirm={async () => {
            await api.post(`/memory/${encode(suppressing.id)}/suppress`);
            setDeleted((current) => new Set([...current, suppressing.id]));
            notify("success", "Copy suppressed here.");
          }}
        >
          <p>
            It disappears here for every agent, is not synced again at this version, and is not passed on to other peers. It stays on {suppressing.source.origin_name}; if
            it is changed there, the newer version comes back.
          </p>
          <blockquote class="card-content">{suppressing.content.length > 300 ? `${suppressing.content.slice(0, 300)}…` : suppressing.content}</blockquote>
        </ConfirmDialog>
      )}
      {detail && <MemoryDetailDialog id={detail} onClose={() => setDetail(undefined)} />}
    </div>
  );
}

interface CardActions {
  onOpen: (id: string) => void;
  onEdit: (entry: MemoryEntry) => void;
  onDelete: (entry: MemoryEntry) => void;
  onSuppress: (entry: MemoryEntry) => void;
}

function EntryList({ filters, actions }: { filters: Filters; actions: CardActions }) {
  // The parent builds a new filters object on every render: the list reloads only when they change.
  const filterKey = JSON.stringify(filters);
  const loader = useMemo<PageLoader<MemoryEntry>>(() => {
    const params = filterParams(filters);
    // With no type chosen, order=kind lists directives, then docs, then the rest (the seed's rule).
    return (cursor, limit) => api.get<MemoryEntry[]>("/memory" + query({ ...params, order: params.type ? undefined : "kind", limit, cursor }));
  }, [filterKey]);
  const paged = usePaged(loader, [loader], 30);
  useLiveRefresh(["memory.*"], paged.refresh);
  const feedNames = useFeedNames(paged.items);
  return (
    <section aria-label="Entries" class="card-list-section">
      <PagedList paged={paged} empty={
          filters.source === "feed" && !(filters.type || filters.project || filters.tag || filters.agent)
            ? "No entry came from a feed yet. Subscribe to one in the Feeds tab."
            : filters.source === "mesh" && !(filters.type || filters.project || filters.tag || filters.agent)
            ? "No copy of a peer's entry here yet. The owner links peers in the Mesh view."
            : filters.type || filters.project || filters.tag || filters.agent || filters.source
            ? "No entry matches these filters."
            : "No memory yet (compiled code is listed with “all with code”). Write the first entry with “New entry”."
        }>
        {(items) => (
          <div class="card-list">
            {items.map((entry) => (
              <MemoryCard key={entry.id} entry={entry} {...actions} feedName={feedNameOf(feedNames, entry)} />
            ))}
          </div>
        )}
      </PagedList>
    </section>
  );
}

interface SearchProps {
  q: string;
  filters: Filters;
  actions: CardActions;
  /** Entries this user changed or deleted since the search ran, applied to the results. */
  edited: ReadonlyMap<string, MemoryEntry>;
  deleted: ReadonlySet<string>;
}

function SearchResults({ q, filters, actions, edited, deleted }: SearchProps) {
  const { me } = useApp();
  const [limit, setLimit] = useState(SEARCH_STEP);
  const [stale, setStale] = useState(false);
  const [removed, setRemoved] = useState<ReadonlySet<string>>(new Set());
  const results = useLoad(async () => {
    const response = await api.get<SearchHit[]>("/memory/search" + query({ q, ...filterParams(filters), limit, context: "ui" }));
    return { hits: response.data, keywordOnly: response.headers.get("x-search-mode") === "keyword" };
  }, [limit]);

  // Searching again counts as reading every hit, so a change elsewhere does not re-run the search
  // by itself: deleted entries drop out, and the user is offered a fresh search for the rest.
  useEffect(
    () =>
      liveStream.subscribe((signal) => {
        if (signal.kind === "reset") setStale(true);
        else if (signal.event.agent_id === me.agent_id) return;
        else if (signal.event.type === "memory.deleted" && typeof signal.event.payload.memory_id === "string") {
          const id = signal.event.payload.memory_id;
          setRemoved((current) => new Set([...current, id]));
        } else if (signal.event.type.startsWith("memory.") && signal.event.payload.reason !== "decay") setStale(true);
      }),
    [me.agent_id],
  );
  const feedNames = useFeedNames(results.data?.hits ?? []);
  const again = () => {
    setStale(false);
    setRemoved(new Set());
    results.reload();
  };

  if (results.loading && !results.data) return <Loading label="Searching…" />;
  if (results.error !== undefined && !results.data) return <ErrorNote error={results.error} onRetry={again} />;
  const data = results.data;
  if (!data) return null;
  const hits = data.hits.filter((hit) => !removed.has(hit.id) && !deleted.has(hit.id)).map((hit) => {
    const change = edited.get(hit.id);
    return change && change.version > hit.version ? { ...hit, ...change } : hit;
  });
  return (
    <section aria-label="Search results" class="card-list-section">
      <p class="result-summary" role="status">
        {plural(hits.length, "result")} for “{q}”{data.keywordOnly && " (keyword match only: embeddings are unavailable)"}
        {hits.length > 1 && <span class="muted"> · best match first</span>}
      </p>
      {stale && (
        <p class="stale-note" role="status">
          Memory changed since this search.{" "}
          <button type="button" class="link-button" onClick={again}>
            Search again
          </button>
        </p>
      )}
      {results.error !== undefined && <ErrorNote error={results.error} onRetry={again} />}
      {hits.length === 0 ? (
        <Empty>Nothing found. Try other words, or clear the filters.</Empty>
      ) : (
        <div class="card-list">
          {hits.map((hit) => (
            <MemoryCard key={hit.id} entry={hit} {...actions} feedName={feedNameOf(feedNames, hit)} />
          ))}
        </div>
      )}
      {data.hits.length >= limit && limit < SEARCH_MAX && (
        <div class="load-more">
          <button type="button" onClick={() => setLimit(Math.min(SEARCH_MAX, limit + SEARCH_STEP))} disabled={results.loading}>
            {results.loading ? "Loading…" : "Load more"}
          </button>
        </div>
      )}
    </section>
  );
}
