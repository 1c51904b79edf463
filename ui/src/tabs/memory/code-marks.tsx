// What compile (CONTRACT §18) says about an entry: a `stale` mark when the code it is about changed
// since it was written (which symbol, from which sha to which, since when), and, for a `compiled`
// entry, the code it describes.

import { Time } from "../../components/time.js";
import type { MemoryEntry } from "../../../../src/wire/memory.js";

type Marked = Pick<MemoryEntry, "stale_since" | "stale_reason" | "source">;

const shortSha = (sha: string): string => sha.slice(0, 8);

/** `path::symbol`, or the path alone for a module or file. */
export const anchorName = (path: string, symbol: string): string => (symbol ? `${path}::${symbol}` : path);

export function StalePill({ entry }: { entry: Marked }) {
  if (entry.stale_since === null) return null;
  return (
    <span class="pill pill-stale" data-stale="" title="The code this entry is about changed since it was written">
      stale
    </span>
  );
}

/** The line under a stale entry's header: which code changed, how, and since when. */
export function StaleNote({ entry }: { entry: Marked }) {
  if (entry.stale_since === null) return null;
  const reason = entry.stale_reason;
  return (
    <p class="stale-mark" role="note">
      <svg class="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
        <path d="M8 1.5a1 1 0 0 1 .87.5l6.5 11.25A1 1 0 0 1 14.5 14.75h-13a1 1 0 0 1-.87-1.5L7.13 2A1 1 0 0 1 8 1.5Zm-.75 4.25v4h1.5v-4h-1.5Zm0 5.25v1.5h1.5V11h-1.5Z" />
      </svg>
      <span>
        <strong>Stale</strong>
        {reason ? (
          <>
            {": "}
            <code class="stale-anchor">{anchorName(reason.path, reason.symbol)}</code> changed{" "}
            <span class="stale-shas mono" title={`${reason.old_sha} → ${reason.new_sha}`}>
              ({shortSha(reason.old_sha)} → {shortSha(reason.new_sha)})
            </span>
          </>
        ) : (
          ": the code it is about changed"
        )}{" "}
        <span class="stale-since">
          <Time iso={entry.stale_since} />
        </span>
        . Check it against the code, then update it.
      </span>
    </p>
  );
}

/** The code a `compiled` entry describes: `path::symbol` at a sha (and commit). */
export function CompiledSource({ entry }: { entry: Marked }) {
  const source = entry.source;
  if (source?.kind !== "compile") return null;
  return (
    <p class="compiled-source small">
      <span class="muted">compiled from </span>
      <code class="compiled-anchor">{anchorName(source.path, source.symbol)}</code>
      <span class="muted"> at </span>
      <span class="mono" title={source.sha}>
        {shortSha(source.sha)}
      </span>
      {source.commit && (
        <>
          <span class="muted">, commit </span>
          <span class="mono" title={source.commit}>
            {source.commit.slice(0, 10)}
          </span>
        </>
      )}
    </p>
  );
}
