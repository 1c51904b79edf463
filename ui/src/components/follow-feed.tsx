// "Follow this memory": the outbound feed addresses of what a view shows, to paste into a feed
// reader. The owner's key never goes into an address on screen; a reader gets one of its own.

import { useState } from "preact/hooks";
import { AGENT_PLACEHOLDER, KEY_PLACEHOLDER, outboundFeedUrl, outboundFeedUrlWithCredentials, type OutboundFormat, type OutboundSelection } from "../outbound-feeds.js";
import { CopyButton } from "./copy-button.js";
import { Field } from "./fields.js";

const FORMATS: { id: OutboundFormat; label: string }[] = [
  { id: "atom", label: "Atom" },
  { id: "json", label: "JSON Feed" },
];

interface FollowFeedProps {
  selection: OutboundSelection;
  /** What the selection holds, in words: "the entries of checkout". */
  what: string;
}

/** The addresses, a format switch, and how a reader signs in. */
export function FollowFeed({ selection, what }: FollowFeedProps) {
  const [format, setFormat] = useState<OutboundFormat>("atom");
  const origin = location.origin;
  const plain = outboundFeedUrl(origin, format, selection);
  const withCredentials = outboundFeedUrlWithCredentials(origin, format, selection);
  return (
    <div class="follow-feed stack">
      <p>
        Cairn publishes {what} as a feed, newest change first, for a feed reader or another tool to follow.
      </p>
      <div class="segmented" role="group" aria-label="Format">
        {FORMATS.map((candidate) => (
          <button key={candidate.id} type="button" aria-pressed={candidate.id === format} onClick={() => setFormat(candidate.id)}>
            {candidate.label}
          </button>
        ))}
      </div>
      <div class="follow-row">
        <Field label="Feed address" className="grow">
          <input type="text" readOnly value={plain} class="mono follow-url" data-format={format} />
        </Field>
        <CopyButton text={plain} label="Copy address" />
      </div>
      <p class="small">
        A reader needs an agent's credentials: the <code>X-Agent-ID</code> and <code>X-API-Key</code> headers, or, for a reader that takes only an address, <code>agent_id</code> and{" "}
        <code>api_key</code> in its query. Replace <code>{AGENT_PLACEHOLDER}</code> and <code>{KEY_PLACEHOLDER}</code> below with them.
      </p>
      <div class="follow-row">
        <Field label="Address with credentials in the query" className="grow">
          <input type="text" readOnly value={withCredentials} class="mono follow-url" />
        </Field>
        <CopyButton text={withCredentials} label="Copy address with placeholders" />
      </div>
      <p class="hint follow-hint">
        Best give the reader an agent of its own with the viewer role, which can read but never write, and whose key you can rotate without disturbing anyone:{" "}
        <code>npx cairn agent add feed-reader --role viewer</code> on the server prints its key once. Anyone holding the address with a real key reads what that agent reads.
      </p>
    </div>
  );
}
