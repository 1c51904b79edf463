/** A feed document as the server received it. */
export interface FeedResponse {
  status: number;
  /** A response header by lower-case name. */
  header(name: string): string | undefined;
  body: Buffer;
}

/**
 * A failed fetch: `refused` when the outbound rules stopped it (the URL, an address it resolved or
 * redirected to), otherwise the remote failed. The message names the URL without its query.
 */
export class FeedFetchError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
    this.name = "FeedFetchError";
  }
}

/** How feeds reach the network: only through the guarded fetcher, under the `feeds` policy. */
export interface FeedFetcher {
  /** Why the URL may not be fetched (its scheme, userinfo, an address it names or resolves to), or null. */
  refusal(url: string): Promise<string | null>;
  /** A GET of the URL with `headers`; throws FeedFetchError. */
  get(url: string, headers: Record<string, string>): Promise<FeedResponse>;
}
