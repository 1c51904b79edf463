// The addresses under which Cairn publishes memory as a feed (CONTRACT §15 "Outbound feeds"), for
// the selection a view shows. They are built, never fetched: the page has no key to put in them.

import { query, type QueryValue } from "./api.js";

export type OutboundFormat = "atom" | "json";

/** What the outbound routes filter by, as the API spells it; undefined leaves a filter out. */
export interface OutboundSelection {
  project?: string | null | undefined;
  tag?: string | undefined;
  type?: string | undefined;
  agent?: string | undefined;
  source_kind?: string | undefined;
}

/** Stand-ins for a reader agent's credentials, in upper case so that nobody mistakes them for real ones. */
export const AGENT_PLACEHOLDER = "AGENT_ID";
export const KEY_PLACEHOLDER = "API_KEY";

const PATHS: Record<OutboundFormat, string> = { atom: "/memory/feed.atom", json: "/memory/feed.json" };

/** The feed's address on `origin`, filtered as `selection` says. */
export function outboundFeedUrl(origin: string, format: OutboundFormat, selection: OutboundSelection): string {
  const params: Record<string, QueryValue> = { ...selection };
  return `${origin}${PATHS[format]}${query(params)}`;
}

/** The same address with the credentials in the query, as placeholders, for a reader that takes only a URL. */
export function outboundFeedUrlWithCredentials(origin: string, format: OutboundFormat, selection: OutboundSelection): string {
  const plain = outboundFeedUrl(origin, format, selection);
  return `${plain}${plain.includes("?") ? "&" : "?"}agent_id=${AGENT_PLACEHOLDER}&api_key=${KEY_PLACEHOLDER}`;
}
