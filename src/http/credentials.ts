import type { Request } from "express";
import type { Credentials } from "../../tools/gateway.js";
import { refuseCrossSite, type HostPolicy } from "./hosts.js";

export const SESSION_COOKIE = "cairn_ui_session";

/** The session cookie's value; a value that does not decode is no cookie at all. */
export function cookieSession(request: Request): string | undefined {
  for (const part of (request.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const BEARER = /^Bearer\s+\S+$/i;

/**
 * What a request presents, in the order the gateway tries it. When the only credential is the
 * UI cookie, a change must come from this server's own pages (403 otherwise).
 */
export function credentialsOf(request: Request, hosts: HostPolicy): Credentials {
  const credentials: Credentials = {
    agentId: request.get("x-agent-id"),
    apiKey: request.get("x-api-key"),
    authorization: request.get("authorization"),
    uiSession: request.get("x-ui-session"),
    address: request.socket.remoteAddress,
  };
  const other = credentials.agentId || credentials.apiKey || BEARER.test(credentials.authorization ?? "") || credentials.uiSession;
  if (!other) {
    const cookie = cookieSession(request);
    if (cookie !== undefined) {
      refuseCrossSite(request, hosts);
      credentials.uiSession = cookie;
    }
  }
  return credentials;
}
