// The server's one way out to the network (CONTRACT §11 "Outbound calls", DESIGN §4a). Feeds,
// mesh sync and downloads the operator configured call it; a unit test fails when any other
// module of `cairn serve` opens a connection of its own.
import { lookup as systemLookup } from "node:dns/promises";
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Transform, type Readable } from "node:stream";
import { packageVersion } from "../core/paths.js";
import { Deadline } from "./deadline.js";
import type { AddressKind } from "./address-ranges.js";
import { OutboundFailure, OutboundRefusal, type RefusalRule } from "./errors.js";
import { parseHost } from "./host-literal.js";
import { addressRules, defaultOutboundSettings, judgeAddress, refusalReason, type AddressRules, type OutboundPolicy, type OutboundSettings } from "./policy.js";

/** One answer of a resolver, as `dns.lookup(name, {all: true})` gives them. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has. Injectable, so tests can play a hostile DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

/** The contract's bounds: a call may ask for less, never more. */
export const MAX_REDIRECTS = 3;
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface OutboundCall {
  policy: OutboundPolicy;
  /** The largest body accepted; the call fails the moment it is passed (feeds: 5 MiB). */
  maxBodyBytes: number;
  method?: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** The whole call: resolving, connecting, redirects and the body. Default 10 s. */
  timeoutMs?: number;
  /** At most 3, the default. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface OutboundHead {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that answered, after redirects: show it through `safeUrl`. */
  url: string;
  redirects: number;
}

export interface OutboundResponse extends OutboundHead {
  body: Buffer;
}

export interface OutboundStream extends OutboundHead {
  /** Fails with an OutboundFailure when the cap or the call's time is passed. */
  body: Readable;
}

export interface FetcherOptions {
  settings?: OutboundSettings;
  resolve?: Resolver;
}

/** Where a checked URL is connected to: an address, or a name pinned to its checked addresses. */
interface Target {
  url: URL;
  host: string;
  pinned: ResolvedAddress[] | null;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin they were meant for, as browsers do. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];
const USER_AGENT = `cairn/${packageVersion}`;

/**
 * Every connection goes to the address that was checked. Node calls this instead of resolving
 * again (it skips it for literals, which are checked before); a rebinding DNS answering
 * differently the second time is never asked a second time.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const first = addresses[0] as ResolvedAddress;
    if (options.all) callback(null, addresses.map(({ address, family }) => ({ address, family })));
    else callback(null, first.address, first.family);
  };
}

/** `body`: the response had begun, so whatever broke, broke it off. */
function connectionFailure(url: URL, error: unknown, phase: "request" | "body"): OutboundFailure {
  if (error instanceof OutboundFailure) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const what =
    phase === "body"
      ? "the connection closed before the body ended"
      : code === "ECONNREFUSED"
        ? "connection refused"
        : code === "ECONNRESET"
          ? "connection reset"
          : "the connection failed";
  return new OutboundFailure("connection", url, code ? `${what} (${code})` : what, { cause: error });
}

const tooLarge = (url: URL, limit: number): OutboundFailure => new OutboundFailure("too-large", url, `the body exceeds ${limit} bytes`);

/** A body the response announces past the cap: refused before a byte of it is read. (A HEAD's Content-Length announces none.) */
const announcedTooLarge = (response: IncomingMessage, call: OutboundCall): boolean =>
  call.method !== "HEAD" && Number(response.headers["content-length"]) > call.maxBodyBytes;

export class OutboundFetcher {
  private readonly settings: OutboundSettings;
  private readonly resolve: Resolver;

  constructor(options: FetcherOptions = {}) {
    this.settings = options.settings ?? defaultOutboundSettings;
    this.resolve = options.resolve ?? systemResolver;
  }

  /** A call whose body is read whole into memory, up to `maxBodyBytes`. */
  async request(url: string | URL, call: OutboundCall): Promise<OutboundResponse> {
    const { response, head, deadline } = await this.open(url, call);
    try {
      if (announcedTooLarge(response, call)) throw tooLarge(deadline.url, call.maxBodyBytes);
      const chunks: Buffer[] = [];
      let size = 0;
      // Leaving the loop (the cap, the clock) destroys the response, and with it the socket.
      for await (const chunk of response as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > call.maxBodyBytes) throw tooLarge(deadline.url, call.maxBodyBytes);
        chunks.push(chunk);
      }
      return { ...head, body: Buffer.concat(chunks, size) };
    } catch (error) {
      throw deadline.reason ?? connectionFailure(deadline.url, error, "body");
    } finally {
      response.destroy();
      deadline.clear();
    }
  }

  /**
   * A call whose body is handed over as a stream (a model archive): the cap and the clock hold
   * until the body has been read, and either ends the stream with an OutboundFailure.
   */
  async stream(url: string | URL, call: OutboundCall): Promise<OutboundStream> {
    const { response, head, deadline } = await this.open(url, call);
    if (announcedTooLarge(response, call)) {
      response.destroy();
      deadline.clear();
      throw tooLarge(deadline.url, call.maxBodyBytes);
    }
    let size = 0;
    const body = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(size > call.maxBodyBytes ? tooLarge(deadline.url, call.maxBodyBytes) : null, chunk);
      },
    });
    response.on("error", (error) => body.destroy(deadline.reason ?? connectionFailure(deadline.url, error, "body")));
    response.on("close", () => {
      if (!response.complete) body.destroy(deadline.reason ?? connectionFailure(deadline.url, new Error("aborted"), "body"));
    });
    body.on("close", () => {
      response.destroy();
      deadline.clear();
    });
    deadline.guard(body);
    response.pipe(body);
    return { ...head, body };
  }

  /**
   * The checks a call to `url` would pass before sending (scheme, userinfo, its address or every
   * address its name resolves to), without connecting: what a subscription is held to when it is
   * made. Throws OutboundRefusal, or OutboundFailure when the name does not resolve.
   */
  async vet(url: string | URL, policy: OutboundPolicy, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> {
    const first = parseUrl(url);
    const deadline = new Deadline(first, timeoutMs);
    try {
      await this.check(first, addressRules(policy, this.settings), deadline, null);
    } finally {
      deadline.clear();
    }
  }

  /** Checks, sends and follows redirects; resolves with the first response that is not one. */
  private async open(raw: string | URL, call: OutboundCall): Promise<{ response: IncomingMessage; head: OutboundHead; deadline: Deadline }> {
    const rules = addressRules(call.policy, this.settings);
    const maxRedirects = Math.min(call.maxRedirects ?? MAX_REDIRECTS, MAX_REDIRECTS);
    const first = parseUrl(raw);
    const deadline = new Deadline(first, call.timeoutMs ?? DEFAULT_TIMEOUT_MS, call.signal);
    try {
      let target = await this.check(first, rules, deadline, null);
      let method = call.method ?? "GET";
      let body = call.body;
      const headers: OutgoingHttpHeaders = { "user-agent": USER_AGENT };
      for (const [name, value] of Object.entries(call.headers ?? {})) headers[name.toLowerCase()] = value;
      for (let redirects = 0; ; redirects++) {
        deadline.url = target.url;
        const response = await send(target, method, headers, body, deadline);
        const location = response.headers.location;
        if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || location === undefined) {
          return { response, head: { status: response.statusCode ?? 0, headers: response.headers, url: target.url.href, redirects }, deadline };
        }
        response.destroy();
        const next = parseLocation(location, target.url, first);
        if (redirects >= maxRedirects) {
          throw new OutboundRefusal({ step: "redirect", rule: "limit", reason: `more than ${maxRedirects} redirects`, url: first, target: next });
        }
        const nextTarget = await this.check(next, rules, deadline, first);
        // As fetch does: 303 turns any method but HEAD into GET, 301 and 302 turn POST into GET.
        const status = response.statusCode ?? 0;
        if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
          delete headers["content-type"];
          delete headers["content-length"];
        }
        if (nextTarget.url.origin !== target.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
        target = nextTarget;
      }
    } catch (error) {
      deadline.clear();
      throw error;
    }
  }

  /**
   * The scheme, userinfo and address checks of one URL: the caller's, or (`first` given) the
   * target of a redirect of the call to `first`.
   */
  private async check(url: URL, rules: AddressRules, deadline: Deadline, first: URL | null): Promise<Target> {
    const refuse = (rule: Exclude<RefusalRule, "limit">, reason: string, found?: { address: string; kind: AddressKind }): OutboundRefusal =>
      new OutboundRefusal({
        step: first ? "redirect" : rule,
        rule,
        reason,
        ...(first ? { url: first, target: url } : { url }),
        ...(found ? { address: found.address, kind: found.kind } : {}),
      });
    if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("scheme", `${url.protocol} is not http: or https:`);
    if (url.username !== "" || url.password !== "") throw refuse("userinfo", "the URL carries a user name or password");
    const host = parseHost(url.hostname);
    if (host.type === "invalid") throw refuse("url", host.reason);
    if (host.type === "address") {
      const verdict = judgeAddress(host.address, rules);
      if (!verdict.allowed) throw refuse("address", refusalReason(verdict, "the host is"), verdict);
      return { url, host: verdict.address, pinned: null };
    }
    // A name Node would take for an address would be connected to without the pinned lookup.
    if (isIP(url.hostname) !== 0) throw refuse("url", `${url.hostname} is an address spelling the fetcher does not read`);
    let answers: ResolvedAddress[];
    try {
      answers = await deadline.race(this.resolve(url.hostname));
    } catch (error) {
      if (error instanceof OutboundFailure) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new OutboundFailure("resolve", url, `${url.hostname} does not resolve${code ? ` (${code})` : ""}`, { cause: error });
    }
    if (answers.length === 0) throw new OutboundFailure("resolve", url, `${url.hostname} does not resolve`);
    // Every answer is judged and one refused answer refuses the name (docs/decisions.md): a name
    // that points at a private address beside a public one is not trusted with either.
    const pinned: ResolvedAddress[] = [];
    for (const answer of answers) {
      const parsed = parseHost(answer.address);
      if (parsed.type !== "address") throw refuse("dns", `${host.name} resolves to ${answer.address}, which is not an address`);
      const verdict = judgeAddress(parsed.address, rules, host.name);
      if (!verdict.allowed) throw refuse("dns", refusalReason(verdict, `${host.name} resolves to`), verdict);
      pinned.push({ address: verdict.address, family: parsed.address.kind() === "ipv4" ? 4 : 6 });
    }
    return { url, host: url.hostname, pinned };
  }
}

function parseUrl(raw: string | URL): URL {
  try {
    return new URL(raw);
  } catch {
    throw new OutboundRefusal({ step: "url", rule: "url", reason: "not a URL", url: String(raw) });
  }
}

/** A redirect's `Location`, read against the URL that answered. */
function parseLocation(location: string, current: URL, first: URL): URL {
  try {
    return new URL(location, current);
  } catch {
    throw new OutboundRefusal({ step: "redirect", rule: "url", reason: "the target is not a URL", url: first, target: location });
  }
}

/** One request on a connection of its own to the target's checked address. */
function send(target: Target, method: string, headers: OutgoingHttpHeaders, body: string | Uint8Array | undefined, deadline: Deadline): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (target.url.protocol === "https:" ? httpsRequest : httpRequest)({
      method,
      hostname: target.host,
      port: target.url.port === "" ? undefined : Number(target.url.port),
      path: `${target.url.pathname}${target.url.search}`,
      // The Host header (and for https the name the certificate is checked against) is the URL's,
      // whatever address the connection goes to.
      headers: { ...headers, host: target.url.host },
      // A fresh connection per call: a pooled socket was checked under another call's policy, and
      // perhaps against an older answer of the name.
      agent: false,
      ...(target.pinned ? { lookup: pinnedLookup(target.pinned) } : {}),
    });
    deadline.guard(request);
    request.once("response", (response) => {
      deadline.guard(response);
      resolve(response);
    });
    request.once("error", (error) => reject(deadline.reason ?? connectionFailure(target.url, error, "request")));
    request.end(body);
  });
}
