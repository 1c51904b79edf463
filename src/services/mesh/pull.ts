import { OutboundFailure, OutboundRefusal } from "../../net/errors.js";
import type { OutboundFetcher } from "../../net/fetch.js";
import { safeUrl } from "../../net/safe-url.js";

/** Where a link pulls from, and with what. */
export interface PullTarget {
  /** The peer's base URL, without a trailing slash. */
  url: string;
  token: string;
}

/** The peer refused the token (401/403): the link is `unauthorized` until it is accepted again. */
export class PeerUnauthorized extends Error {
  constructor(url: string, status: number) {
    super(`${safeUrl(url)} refused the link's token (${status})`);
    this.name = "PeerUnauthorized";
  }
}

/** The peer could not be reached, refused by the outbound rules, or answered something unusable. Never quotes a body. */
export class PeerFailure extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PeerFailure";
  }
}

/** A JSON answer and the bytes it took on the wire (what a sync reports). */
export interface Pulled {
  /** Null for a 404 (a project the token no longer reaches). */
  body: unknown;
  bytes: number;
}

/** The page size a sync pulls: the outbound feed's largest. */
export const PULL_PAGE = 500;
/** Ids per by-id request (the feed's cap on `ids`). */
export const IDS_PER_REQUEST = 200;

/**
 * A link's reads of its peer (CONTRACT §16): the change feed, entries by id, the merkle summary.
 * Every call goes through the one outbound fetcher under the `mesh` policy, with the link's token
 * as a bearer (never in the URL), and a body capped at MAX_BODY_BYTES.
 */
export class PullClient {
  constructor(
    private readonly outbound: OutboundFetcher,
    private readonly maxBodyBytes: number,
  ) {}

  changes(target: PullTarget, sinceSeq: number, limit = PULL_PAGE): Promise<Pulled> {
    const query = new URLSearchParams({ order: "changes", since_seq: String(sinceSeq), include_deleted: "true", limit: String(limit) });
    return this.get(target, `/memory/feed.json?${query.toString()}`);
  }

  byIds(target: PullTarget, ids: readonly string[]): Promise<Pulled> {
    const query = new URLSearchParams({ ids: ids.join(","), include_deleted: "true", order: "changes", limit: String(ids.length) });
    return this.get(target, `/memory/feed.json?${query.toString()}`);
  }

  merkle(target: PullTarget, project: string | null, bucket?: string): Promise<Pulled> {
    const query = new URLSearchParams({ project: project ?? "" });
    if (bucket !== undefined) query.set("bucket", bucket);
    return this.get(target, `/memory/merkle?${query.toString()}`);
  }

  private async get(target: PullTarget, path: string): Promise<Pulled> {
    const url = `${target.url}${path}`;
    let response;
    try {
      response = await this.outbound.request(url, {
        policy: "mesh",
        maxBodyBytes: this.maxBodyBytes,
        headers: { authorization: `Bearer ${target.token}`, accept: "application/feed+json, application/json" },
      });
    } catch (error) {
      if (error instanceof OutboundRefusal || error instanceof OutboundFailure) throw new PeerFailure(error.message, { cause: error });
      throw error;
    }
    const bytes = response.body.length;
    if (response.status === 401 || response.status === 403) throw new PeerUnauthorized(target.url, response.status);
    if (response.status === 404) return { body: null, bytes };
    if (response.status !== 200) throw new PeerFailure(`${safeUrl(url)} answered ${response.status}`);
    try {
      return { body: JSON.parse(response.body.toString("utf8")) as unknown, bytes };
    } catch {
      throw new PeerFailure(`${safeUrl(url)} answered with a body that is not JSON`);
    }
  }
}
