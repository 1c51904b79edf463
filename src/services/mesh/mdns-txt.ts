import { INSTANCE_NAME_PATTERN } from "../../core/config.js";

/** A Cairn as its `_cairn._tcp` TXT record names it (CONTRACT §16): keys `id`, `name`, `url`. */
export interface AdvertisedPeer {
  instance_id: string;
  name: string;
  url: string;
}

/** A TXT string holds 255 bytes, `url=` included. */
const MAX_ADVERTISED_URL = 251;

// Lower case only: the id is compared as text with /health's, with links' and with our own.
const INSTANCE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Printable ASCII only: the URL parser silently drops tabs and line breaks, so "exa\nmple" would pass as another host.
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * `text` as an http(s) URL with no user name, password, query or fragment, in one spelling (no
 * trailing slash); null for anything else.
 */
export function plainHttpUrl(text: string): string | null {
  if (text.length > MAX_ADVERTISED_URL || !PRINTABLE.test(text) || /[?#]/.test(text) || !URL.canParse(text)) return null;
  const url = new URL(text);
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== "") return null;
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The TXT record this instance advertises itself with; null when its URL cannot be carried in one. */
export function txtOf(self: AdvertisedPeer): Record<string, string> | null {
  if (plainHttpUrl(self.url) === null) return null;
  return { id: self.instance_id, name: self.name, url: self.url };
}

/**
 * The peer a TXT record from the network names, or null when any of its values is missing or
 * malformed. Anyone on the link can send one: it only ever becomes a suggestion, but it is stored
 * and shown, so every value is checked and bounded here.
 */
export function peerOfTxt(txt: unknown): AdvertisedPeer | null {
  if (typeof txt !== "object" || txt === null) return null;
  const { id, name, url } = txt as Record<string, unknown>;
  if (typeof id !== "string" || !INSTANCE_ID.test(id)) return null;
  if (typeof name !== "string" || !INSTANCE_NAME_PATTERN.test(name)) return null;
  const plain = typeof url === "string" ? plainHttpUrl(url) : null;
  return plain === null ? null : { instance_id: id, name, url: plain };
}
