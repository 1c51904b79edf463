import { AppError } from "../core/errors.js";
import type { AddressKind } from "./address-ranges.js";
import { safeUrl } from "./safe-url.js";

/**
 * Where the fetcher stopped a call before sending it. `redirect` is any refusal of a redirect's
 * target; which of its checks failed is the refusal's `rule`.
 */
export type RefusalStep = "url" | "scheme" | "userinfo" | "address" | "dns" | "redirect";
/** The rule a URL broke; `limit` is one redirect too many. */
export type RefusalRule = Exclude<RefusalStep, "redirect"> | "limit";

interface RefusalDetails {
  step: RefusalStep;
  rule: RefusalRule;
  reason: string;
  /** The URL the caller asked for. */
  url: string | URL;
  /** At the redirect step: where the redirect pointed. */
  target?: string | URL;
  /** The address that decided it, for the address and dns rules. */
  address?: string;
  kind?: AddressKind;
}

/**
 * A call the rules do not allow (CONTRACT §11): nothing was sent to the URL it names. Its message
 * names the URL by `safeUrl`; `reason` says which rule and what would relax it.
 */
export class OutboundRefusal extends Error {
  readonly step: RefusalStep;
  readonly rule: RefusalRule;
  readonly reason: string;
  /** The URL the caller asked for, without userinfo or query. */
  readonly url: string;
  /** At the redirect step, the redirect's target, without userinfo or query. */
  readonly target: string | undefined;
  readonly address: string | undefined;
  readonly kind: AddressKind | undefined;

  constructor(details: RefusalDetails) {
    const url = safeUrl(details.url);
    const target = details.target === undefined ? undefined : safeUrl(details.target);
    super(`outbound call to ${url} refused at the ${details.step} step: ${target === undefined ? "" : `it redirects to ${target}; `}${details.reason}`);
    this.name = "OutboundRefusal";
    this.step = details.step;
    this.rule = details.rule;
    this.reason = details.reason;
    this.url = url;
    this.target = target;
    this.address = details.address;
    this.kind = details.kind;
  }
}

/**
 * `timeout`: the whole call (redirects and body included) took longer than allowed.
 * `too-large`: the body passed the call's cap (or its Content-Length said it would).
 * `resolve`: the name has no address. `connection`: refused, reset or broken off. `aborted`: the
 * caller's signal.
 */
export type FailureKind = "timeout" | "too-large" | "resolve" | "connection" | "aborted";

/**
 * An allowed call that did not bring back a response, or a whole body. A status code is not a
 * failure: the caller reads it. The message never holds the response body.
 */
export class OutboundFailure extends Error {
  readonly kind: FailureKind;
  /** The URL that failed (the last redirect's target), without userinfo or query. */
  readonly url: string;

  constructor(kind: FailureKind, url: string | URL, what: string, options: { cause?: unknown } = {}) {
    const safe = safeUrl(url);
    super(`outbound call to ${safe} failed: ${what}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "OutboundFailure";
    this.kind = kind;
    this.url = safe;
  }
}

/** 502 for a request that waited on a remote which failed; the detail is the failure's message (a safe URL and what happened). */
export const upstreamError = (failure: OutboundFailure): AppError => new AppError("UPSTREAM_ERROR", failure.message, { cause: failure });
