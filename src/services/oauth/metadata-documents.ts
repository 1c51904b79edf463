import { OutboundFailure, OutboundRefusal } from "../../net/errors.js";
import type { OutboundFetcher } from "../../net/fetch.js";
import { redirectUriRefusal } from "./redirect-uris.js";

// Client ID metadata documents (CIMD, CONTRACT §19): a client whose id is an https URL publishes its
// metadata there. Fetched through the one outbound fetcher, small and quick, and cached as the
// document's Cache-Control says, within bounds.

const CIMD_TIMEOUT_MS = 5_000;
const CIMD_MAX_BYTES = 64 * 1024;
/** The longest a document is cached, whatever its Cache-Control says. */
const CIMD_MAX_AGE_S = 24 * 3600;
/** How long a document that says nothing of caching is kept. */
const CIMD_DEFAULT_AGE_S = 300;
/** Documents cached at once; the oldest goes first. */
const CIMD_CACHE_ENTRIES = 500;
/** Documents one address may have fetched (cache misses) in a minute: anyone can name any URL. */
export const CIMD_FETCHES_PER_MINUTE = 60;
const MAX_URL_LENGTH = 2000;
const MAX_NAME_LENGTH = 200;
const MAX_REDIRECT_URIS = 10;

export interface MetadataDocument {
  clientId: string;
  clientName: string;
  /** The document's host: what the consent page shows. */
  host: string;
  redirectUris: string[];
}

/** A client id that names a metadata document: an https URL with a path, no fragment, query or user. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (clientId.length > MAX_URL_LENGTH || !clientId.startsWith("https://")) return false;
  try {
    const url = new URL(clientId);
    // The id must be the URL exactly as written: no dot segments, default port or case to normalise away.
    return url.href === clientId && url.pathname !== "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

/** Why a document cannot be used: said to the human on the consent page, or to the client as `invalid_client`. */
export class MetadataDocumentError extends Error {}

/** Seconds the response may be cached: its max-age within bounds, none for no-store or no-cache. */
function cacheSeconds(header: string | string[] | undefined): number {
  const value = (Array.isArray(header) ? header.join(",") : (header ?? "")).toLowerCase();
  if (/\b(no-store|no-cache)\b/.test(value)) return 0;
  const maxAge = /\bmax-age\s*=\s*"?(\d+)/.exec(value)?.[1];
  return Math.min(CIMD_MAX_AGE_S, maxAge === undefined ? CIMD_DEFAULT_AGE_S : Number(maxAge));
}

function parseDocument(clientId: string, body: Buffer): MetadataDocument {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new MetadataDocumentError("the client metadata document is not JSON");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new MetadataDocumentError("the client metadata document is not a JSON object");
  const doc = json as Record<string, unknown>;
  if (doc.client_id !== clientId) throw new MetadataDocumentError("the client metadata document's client_id is not its own URL");
  const method = doc.token_endpoint_auth_method ?? "none";
  if (method !== "none") throw new MetadataDocumentError('a client metadata document\'s client must use token_endpoint_auth_method "none"');
  const uris = Array.isArray(doc.redirect_uris) ? doc.redirect_uris.slice(0, MAX_REDIRECT_URIS) : [];
  const redirectUris = uris.filter((uri): uri is string => typeof uri === "string" && redirectUriRefusal(uri) === null);
  if (redirectUris.length === 0) throw new MetadataDocumentError("the client metadata document names no acceptable redirect_uris");
  const host = new URL(clientId).host;
  const name = typeof doc.client_name === "string" && doc.client_name.trim() !== "" ? doc.client_name.trim().slice(0, MAX_NAME_LENGTH) : host;
  return { clientId, clientName: name, host, redirectUris };
}

/** Fetches and caches client metadata documents; concurrent asks for one URL share one fetch. */
export class MetadataDocuments {
  private readonly cache = new Map<string, { document: MetadataDocument; until: number }>();
  private readonly pending = new Map<string, Promise<MetadataDocument>>();

  constructor(
    private readonly outbound: OutboundFetcher,
    /** Counts a fetch against the address that caused it; throws when it has had its share. */
    private readonly charge: (address: string | undefined) => Promise<void>,
  ) {}

  get size(): number {
    return this.cache.size;
  }

  /** The document, from the cache or fetched now; `address`: who asked (fetches are limited per address). */
  async get(clientId: string, address: string | undefined, nowMs = Date.now()): Promise<MetadataDocument> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > nowMs) return cached.document;
    if (cached) this.cache.delete(clientId);
    let fetching = this.pending.get(clientId);
    if (!fetching) {
      try {
        await this.charge(address);
      } catch {
        throw new MetadataDocumentError("too many client metadata documents fetched for this address; try again in a minute");
      }
      fetching = this.fetch(clientId).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, fetching);
    }
    return fetching;
  }

  private async fetch(clientId: string): Promise<MetadataDocument> {
    let response;
    try {
      response = await this.outbound.request(clientId, {
        policy: "clients",
        maxBodyBytes: CIMD_MAX_BYTES,
        timeoutMs: CIMD_TIMEOUT_MS,
        headers: { accept: "application/json" },
      });
    } catch (error) {
      if (error instanceof OutboundRefusal) throw new MetadataDocumentError(`the client metadata document may not be fetched: ${error.reason}`);
      if (error instanceof OutboundFailure) throw new MetadataDocumentError(`the client metadata document could not be fetched: ${error.message}`);
      throw error;
    }
    if (response.status !== 200) throw new MetadataDocumentError(`the client metadata document answered ${response.status}`);
    const document = parseDocument(clientId, response.body);
    const seconds = cacheSeconds(response.headers["cache-control"]);
    if (seconds > 0) {
      while (this.cache.size >= CIMD_CACHE_ENTRIES) {
        const oldest = this.cache.keys().next().value;
        if (oldest === undefined) break;
        this.cache.delete(oldest);
      }
      this.cache.set(clientId, { document, until: Date.now() + seconds * 1000 });
    }
    return document;
  }
}
