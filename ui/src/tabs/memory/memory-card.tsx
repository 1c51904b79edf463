// One memory entry as a card. Directives look different on purpose (SEED-SPEC "UI behaviour for
// directives"): a directive pill with a lock, an accent border, and no confidence meter, since
// their confidence is fixed at 1.

import { LockIcon, TypePill } from "../../components/pills.js";
import { Time } from "../../components/time.js";
import { useApp } from "../../context.js";
import { fixed, percent, shortId } from "../../format.js";
import type { MemoryEntry, SearchHit } from "../../../../src/wire/memory.js";
import { Markdown, showsMarkdown } from "../../components/markdown.js";
import { CompiledSource, StaleNote, StalePill } from "./code-marks.js";
import { FeedMark } from "./feed-mark.js";
import { MeshMark } from "./mesh-mark.js";

interface MemoryCardProps {
  entry: MemoryEntry | SearchHit;
  onOpen: (id: string) => void;
  /** Without these, the card offers no change (e.g. the archivist's synthesis docs). */
  onEdit?: ((entry: MemoryEntry) => void) | undefined;
  onDelete?: ((entry: MemoryEntry) => void) | undefined;
  /** Hides a peer's copy here (the owner's, for copies only). */
  onSuppress?: ((entry: MemoryEntry) => void) | undefined;
  /** The name of the feed the entry came from, once known (see useFeedNames). */
  feedName?: string | undefined;
}

const isHit = (entry: MemoryEntry | SearchHit): entry is SearchHit => "score" in entry;

/**
 * Whether the signed-in agent may change the entry: a directive only by its author (CONTRACT §3),
 * a peer's copy by nobody here (§16: only its origin changes it).
 */
function canChange(entry: MemoryEntry, agentId: string, role: string): boolean {
  if (role === "viewer" || entry.source?.kind === "mesh") return false;
  if (entry.type === "directive") return entry.agent_id === agentId;
  return entry.agent_id === agentId || role === "owner";
}

export function MemoryCard({ entry, onOpen, onEdit, onDelete, onSuppress, feedName }: MemoryCardProps) {
  const { me } = useApp();
  const directive = entry.type === "directive";
  const headingId = `entry-${entry.id}`;
  const changeable = canChange(entry, me.agent_id, me.role);
  const suppressible = entry.source?.kind === "mesh" && me.role === "owner";
  return (
    <article class={["memory-card", directive ? "is-directive" : "", entry.stale_since !== null ? "is-stale" : "", entry.source?.kind === "mesh" ? "is-copy" : ""].filter(Boolean).join(" ")} aria-labelledby={headingId} data-entry-id={entry.id} data-type={entry.type} data-source={entry.source?.kind}>
      <header class="card-header">
        <h3 class="card-heading" id={headingId}>
          {directive && (
            <span class="directive-lock" data-lock="" role="img" aria-label="Locked: a standing directive" title="A standing directive: only its author can change it">
              <LockIcon />
            </span>
          )}
          <TypePill type={entry.type} />
          <StalePill entry={entry} />
          <span class="visually-hidden">{entry.headline ?? entry.content.slice(0, 80)}</span>
        </h3>
        <span class="card-meta">
          <span title="author">{entry.agent_id}</span>
          <span>{entry.project ?? "global"}</span>
          {entry.scope === "agent" && <span class="pill pill-neutral">private</span>}
          <span>
            v{entry.version} · <Time iso={entry.updated_at} />
          </span>
        </span>
      </header>
      {isHit(entry) && (
        <p class="scores">
          <span>
            score <strong>{fixed(entry.score, 4)}</strong>
          </span>
          <span>similarity {entry.similarity === null ? "—" : fixed(entry.similarity)}</span>
          <span>match {entry.match}</span>
        </p>
      )}
      <StaleNote entry={entry} />
      <CompiledSource entry={entry} />
      <FeedMark entry={entry} feedName={feedName} />
      <MeshMark entry={entry} />
      {entry.headline && <p class="card-headline">{entry.headline}</p>}
      {showsMarkdown(entry) ? <Markdown class="card-content markdown" text={entry.content} /> : <div class="card-content">{entry.content}</div>}
      <footer class="card-footer">
        {entry.tags.length > 0 && (
          <ul class="tags" aria-label="Tags">
            {entry.tags.map((tag) => (
              <li key={tag} class="tag">
                {tag}
              </li>
            ))}
          </ul>
        )}
        {!directive && (
          <label class="confidence">
            <span>confidence</span>
            <meter min={0} max={1} low={0.3} high={0.7} optimum={1} value={entry.confidence} />
            <span>{percent(entry.confidence)}</span>
          </label>
        )}
        {entry.superseded_by && <span class="muted small">superseded by {shortId(entry.superseded_by)}</span>}
        <span class="spacer" />
        <span class="card-actions">
          <button type="button" class="link-button" onClick={() => onOpen(entry.id)}>
            Details
          </button>
          {/* A compiled entry changes only when compile finds its code changed (CONTRACT §18). */}
          {changeable && onEdit && entry.type !== "compiled" && (
            <button type="button" class="link-button" onClick={() => onEdit(entry)}>
              Edit
            </button>
          )}
          {changeable && onDelete && (
            <button type="button" class="link-button danger-text" onClick={() => onDelete(entry)}>
              Delete
            </button>
          )}
          {suppressible && onSuppress && (
            <button type="button" class="link-button danger-text" onClick={() => onSuppress(entry)}>
              Suppress here
            </button>
          )}
          {!changeable && directive && onEdit && <span class="muted small">only {entry.agent_id} can change it</span>}
        </span>
      </footer>
    </article>
  );
}
