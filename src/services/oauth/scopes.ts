import { OAUTH_SCOPES, type OAuthScope } from "../../wire/oauth.js";
import { isLoopbackHost } from "./redirect-uris.js";

// Scopes and the resource a token is for (CONTRACT §19; RFC 8707 for `resource`).

/** The protected resource this server is: what its metadata, codes and tokens name. */
export const resourceOf = (publicUrl: string): string => `${publicUrl}/mcp`;

/**
 * Whether a `resource` a client sent names this server: `<PUBLIC_URL>/mcp` as the metadata says
 * it, or PUBLIC_URL itself (both with or without a trailing slash); on a loopback PUBLIC_URL any of
 * the three loopback names. No query, no fragment.
 */
export function isOwnResource(candidate: string, publicUrl: string): boolean {
  let url: URL;
  let own: URL;
  try {
    url = new URL(candidate);
    own = new URL(publicUrl);
  } catch {
    return false;
  }
  if (candidate.includes("#") || url.search !== "" || url.username !== "" || url.password !== "") return false;
  const sameHost = url.hostname === own.hostname || (isLoopbackHost(url.hostname) && isLoopbackHost(own.hostname));
  if (url.protocol !== own.protocol || url.port !== own.port || !sameHost) return false;
  const base = own.pathname.replace(/\/+$/, "");
  return [`${base}/mcp`, `${base}/mcp/`, base === "" ? "/" : base, `${base}/`].includes(url.pathname);
}

/**
 * The scopes a request asks for, in Cairn's order: unknown ones are left out (clients send their
 * own, such as `openid`); none of Cairn's asked for means both, and so does `cairn:write` alone.
 */
export function requestedScopes(raw: string | undefined): OAuthScope[] {
  const asked = new Set((raw ?? "").split(/\s+/).filter(Boolean));
  // Writing implies reading: `cairn:write` alone is both.
  return asked.has("cairn:write") || !asked.has("cairn:read") ? [...OAUTH_SCOPES] : ["cairn:read"];
}

/** A stored scope string as the scopes it holds. */
export const scopesOf = (scope: string): OAuthScope[] => OAUTH_SCOPES.filter((known) => scope.split(" ").includes(known));

/** `cairn:write` implies reading: a token with it may do everything its agent may. */
export const canWrite = (scopes: readonly string[]): boolean => scopes.includes("cairn:write");

export const scopeString = (scopes: readonly OAuthScope[]): string => OAUTH_SCOPES.filter((scope) => scopes.includes(scope)).join(" ");
