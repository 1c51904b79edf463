import { OutboundFailure, OutboundRefusal } from "../../net/errors.js";
import type { OutboundFetcher } from "../../net/fetch.js";
import { FeedFetchError, type FeedFetcher } from "./fetcher.js";

/** The largest feed document fetched (CONTRACT §11): a longer body fails the poll the moment it passes this. */
const FEED_MAX_BODY_BYTES = 5 * 1024 * 1024;

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** Feeds' way out: the one outbound fetcher, under the `feeds` policy and the feed body cap. */
export function guardedFeedFetcher(outbound: OutboundFetcher): FeedFetcher {
  return {
    async refusal(url) {
      try {
        await outbound.vet(url, "feeds");
        return null;
      } catch (error) {
        if (error instanceof OutboundRefusal) return error.reason;
        // A name that does not resolve is not a rule broken: the test fetch (or the first poll) says so.
        if (error instanceof OutboundFailure) return null;
        throw error;
      }
    },
    async get(url, headers) {
      try {
        const response = await outbound.request(url, { policy: "feeds", maxBodyBytes: FEED_MAX_BODY_BYTES, headers });
        return { status: response.status, header: (name) => first(response.headers[name]), body: response.body };
      } catch (error) {
        if (error instanceof OutboundRefusal) throw new FeedFetchError(error.target === undefined ? error.reason : `it redirects to ${error.target}; ${error.reason}`, true);
        if (error instanceof OutboundFailure) throw new FeedFetchError(error.message, false);
        throw error;
      }
    },
  };
}
