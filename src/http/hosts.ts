import type { NextFunction, Request, Response } from "express";
import ipaddr from "ipaddr.js";
import { HOST_NAME, type Config } from "../core/config.js";
import { AppError, forbidden } from "../core/errors.js";

const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/;

/** The host name a `Host` header names (lower-case, no port, no trailing dot), or null when it names none. */
function hostNameOf(header: string | undefined): string | null {
  const match = header === undefined ? null : HOST_HEADER.exec(header.trim());
  if (!match) return null;
  const name = (match[1] as string).toLowerCase().replace(/\.$/, "");
  return HOST_NAME.test(name) ? name : null;
}

function isLoopbackName(name: string): boolean {
  if (name === "localhost") return true;
  const bare = name.replace(/^\[(.*)\]$/, "$1");
  const literal = bare !== name ? ipaddr.IPv6.isValid(bare) : ipaddr.IPv4.isValidFourPartDecimal(bare);
  return literal && ipaddr.process(bare).range() === "loopback";
}

/** An address a browser cannot be sent to by name: `0.0.0.0` and `[::]` are binds, not hosts. */
const isUnspecified = (name: string): boolean => name === "0.0.0.0" || name === "[::]";

/**
 * Which `Host` values this server answers (CONTRACT §2.2a): loopback names and addresses on any
 * port, the host of PUBLIC_URL and the names in ALLOWED_HOSTS. A page that rebinds its own name to
 * 127.0.0.1 still sends that name, so it is refused.
 */
export class HostPolicy {
  constructor(
    private readonly config: Config,
    private readonly publicUrl: () => string,
  ) {}

  allows(header: string | undefined): boolean {
    const name = hostNameOf(header);
    if (name === null) return false;
    if (isLoopbackName(name) || this.config.ALLOWED_HOSTS.includes(name)) return true;
    const own = new URL(this.publicUrl()).hostname.replace(/\.$/, "");
    return name === own && !isUnspecified(name);
  }

  /**
   * Whether a page of this origin may call routes that browsers reach without credentials of their
   * own (/mcp, /oauth/token): its host must be one this server answers to. Local tools on another
   * loopback port are allowed; a page of any other site is not.
   */
  allowsOrigin(origin: string): boolean {
    try {
      return this.allows(new URL(origin).host);
    } catch {
      return false;
    }
  }

  /** Origins that are this server: PUBLIC_URL's, and the one the request addressed (its host is allowed). */
  isOwnOrigin(origin: string, request: Request): boolean {
    const normalised = originOf(origin);
    if (normalised === null) return false;
    const host = request.get("host");
    return normalised === originOf(this.publicUrl()) || (host !== undefined && normalised === originOf(`${request.protocol}://${host}`));
  }

  /** The one check every request passes first. */
  readonly middleware = (request: Request, _response: Response, next: NextFunction): void => {
    next(this.allows(request.get("host")) ? undefined : forbidden("host not allowed"));
  };
}

/** `scheme://host[:port]` of a URL, or null for `null`, opaque origins and anything unparsable. */
function originOf(value: string): string | null {
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF (CONTRACT §2.2a): a change made with the UI's cookie must come from a page of this server.
 * Pages on another port of localhost are same-site, so SameSite=Strict alone does not stop them.
 * The Origin header decides; a Referer only when there is no Origin.
 */
export function refuseCrossSite(request: Request, hosts: HostPolicy): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.get("origin") ?? request.get("referer");
  if (origin === undefined || !hosts.isOwnOrigin(origin, request)) throw new AppError("FORBIDDEN", "cross-site request refused");
}
