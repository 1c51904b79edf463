// Everything about one entry: its fields, provenance (parents, superseded_by), how often it was
// read and reinforced, and its graph links. Read through GET /graph/{id}, which, unlike
// GET /memory/{id}, does not count as a read of the entry.

import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { ApiError, api, encode } from "../../api.js";
import { CopyButton } from "../../components/copy-button.js";
import { Dialog } from "../../components/dialog.js";
import { ErrorNote, Loading } from "../../components/feedback.js";
import { TypePill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { percent, shortId } from "../../format.js";
import { useLiveRefresh, useLoad } from "../../hooks.js";
import type { GraphEdge, GraphNode } from "../../../../src/wire/graph.js";
import { Markdown, showsMarkdown } from "../../components/markdown.js";
import { anchorName, CompiledSource, StaleNote, StalePill } from "./code-marks.js";
import { FeedMark } from "./feed-mark.js";
import { MeshMark } from "./mesh-mark.js";
import { feedIdOf, useFeedNames } from "./feed-names.js";

export function MemoryDetailDialog({ id: firstId, onClose }: { id: string; onClose: () => void }) {
  const [trail, setTrail] = useState<string[]>([firstId]);
  const id = trail[trail.length - 1] ?? firstId;
  const node = useLoad(async () => {
    try {
      return (await api.get<GraphNode>(`/graph/${encode(id)}`)).data;
    } catch (error) {
      // Gone: GET /memory/{id} says whether it was merged, and into what (a 404 counts no read).
      if (error instanceof ApiError && error.status === 404) await api.get(`/memory/${encode(id)}`);
      throw error;
    }
  }, [id]);
  useLiveRefresh(["memory.updated", "memory.deleted", "graph.linked"], node.reload);
  const open = (next: string) => setTrail((current) => [...current, next]);
  const back = () => setTrail((current) => current.slice(0, -1));
  const gone = node.error instanceof ApiError && node.error.status === 404;
  const mergedInto = gone && node.error instanceof ApiError && typeof node.error.body.superseded_by === "string" ? node.error.body.superseded_by : undefined;

  return (
    <Dialog title={`Entry ${shortId(id)}`} onClose={onClose} wide>
      {trail.length > 1 && (
        <p>
          <button type="button" class="link-button" onClick={back}>
            ← Back to {shortId(trail[trail.length - 2] ?? "")}
          </button>
        </p>
      )}
      {node.loading && !node.data && <Loading />}
      {mergedInto ? (
        <p class="empty" role="status">
          This entry was merged into{" "}
          <button type="button" class="link-button mono" onClick={() => open(mergedInto)}>
            {shortId(mergedInto)}
          </button>
          , which holds what it said.
        </p>
      ) : gone ? (
        <p class="empty" role="status">
          This entry no longer exists for you: it was deleted, expired, or is private to its author.
        </p>
      ) : (
        node.error !== undefined && <ErrorNote error={node.error} onRetry={node.reload} />
      )}
      {node.data && !gone && <EntryFacts data={node.data} onOpen={open} />}
    </Dialog>
  );
}

function EntryFacts({ data, onOpen }: { data: GraphNode; onOpen: (id: string) => void }) {
  const entry = data.node;
  const feedNames = useFeedNames([entry]);
  const feedId = feedIdOf(entry);
  const link = (id: string) => (
    <button type="button" class="link-button mono" onClick={() => onOpen(id)}>
      {shortId(id)}
    </button>
  );
  return (
    <div class={["detail", entry.type === "directive" ? "is-directive" : "", entry.stale_since !== null ? "is-stale" : ""].filter(Boolean).join(" ")}>
      <div class="row-line">
        <TypePill type={entry.type} />
        <StalePill entry={entry} />
        <span class="mono small">{entry.id}</span>
        <CopyButton text={entry.id} label="Copy id" />
      </div>
      <StaleNote entry={entry} />
      <CompiledSource entry={entry} />
      <FeedMark entry={entry} feedName={feedId === undefined ? undefined : feedNames.get(feedId)} />
      <MeshMark entry={entry} />
      {entry.headline && <p class="card-headline">{entry.headline}</p>}
      {showsMarkdown(entry) ? <Markdown class="card-content markdown" text={entry.content} /> : <div class="card-content">{entry.content}</div>}
      <dl class="facts facts-columns">
        <dt>Author</dt>
        <dd>{entry.agent_id}</dd>
        <dt>Project</dt>
        <dd>{entry.project ?? "global"}</dd>
        <dt>Scope</dt>
        <dd>{entry.scope === "agent" ? "agent (private to its author)" : "project"}</dd>
        <dt>Version</dt>
        <dd>{entry.version}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={entry.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time iso={entry.updated_at} />
        </dd>
        {entry.type !== "directive" && (
          <>
            <dt>Confidence</dt>
            <dd>{percent(entry.confidence)}</dd>
          </>
        )}
        <dt>Reads</dt>
        <dd>
          {entry.read_count} by {entry.distinct_readers} distinct {entry.distinct_readers === 1 ? "reader" : "readers"}
        </dd>
        <dt>Reinforced</dt>
        <dd>
          {entry.reinforcement_count} {entry.reinforcement_count === 1 ? "time" : "times"}
          {entry.last_reinforced_at && (
            <>
              , last <Time iso={entry.last_reinforced_at} />
            </>
          )}
        </dd>
        <dt>Expires</dt>
        <dd>{entry.expires_at ? <Time iso={entry.expires_at} /> : "never"}</dd>
        <dt>Tags</dt>
        <dd>{entry.tags.length ? entry.tags.join(", ") : <span class="muted">none</span>}</dd>
        <dt>Parents</dt>
        <dd>
          {entry.parents.length ? (
            <span class="inline-list">
              {entry.parents.map((parent) => (
                <span key={parent}>{link(parent)}</span>
              ))}
            </span>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Superseded by</dt>
        <dd>{entry.superseded_by ? link(entry.superseded_by) : <span class="muted">—</span>}</dd>
        <dt>Embedding</dt>
        <dd>{entry.embedding_model ?? <span class="muted">none</span>}</dd>
        {entry.source?.kind === "compile" && (
          <>
            <dt>Code</dt>
            <dd>
              <code>{anchorName(entry.source.path, entry.source.symbol)}</code>
            </dd>
            <dt>Sha</dt>
            <dd class="mono small wrap-anywhere">{entry.source.sha}</dd>
            {entry.source.commit && (
              <>
                <dt>Commit</dt>
                <dd class="mono small wrap-anywhere">{entry.source.commit}</dd>
              </>
            )}
          </>
        )}
        {entry.source?.kind === "mesh" && (
          <>
            <dt>Origin</dt>
            <dd>
              {entry.source.origin_name} <span class="muted small mono">{entry.source.origin}</span>
            </dd>
          </>
        )}
        {entry.stale_since !== null && (
          <>
            <dt>Stale since</dt>
            <dd>
              <Time iso={entry.stale_since} />
            </dd>
          </>
        )}
        {entry.stale_reason && (
          <>
            <dt>Code that changed</dt>
            <dd>
              <code>{anchorName(entry.stale_reason.path, entry.stale_reason.symbol)}</code>
            </dd>
            <dt>Sha it was written at</dt>
            <dd class="mono small wrap-anywhere">{entry.stale_reason.old_sha}</dd>
            <dt>Sha now</dt>
            <dd class="mono small wrap-anywhere">{entry.stale_reason.new_sha}</dd>
          </>
        )}
      </dl>
      <Edges title="Links from this entry" edges={data.edges.out} other={(edge) => edge.dst} link={link} />
      <Edges title="Links to this entry" edges={data.edges.in} other={(edge) => edge.src} link={link} />
    </div>
  );
}

interface EdgesProps {
  title: string;
  edges: GraphEdge[];
  other: (edge: GraphEdge) => string;
  link: (id: string) => JSX.Element;
}

function Edges({ title, edges, other, link }: EdgesProps) {
  if (edges.length === 0) return null;
  return (
    <section>
      <h3 class="subheading">{title}</h3>
      <ul class="plain-list">
        {edges.map((edge) => (
          <li key={edge.id}>
            <span class="pill pill-neutral">{edge.rel.replace("_", " ")}</span> {link(other(edge))} <span class="muted small">by {edge.agent_id}</span>
            {edge.note && <span class="small"> — {edge.note}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}
