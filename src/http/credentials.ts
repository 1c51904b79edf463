import type { Request } from "express";
import type { Credentials } from "../../tools/gateway.js";
import { QUERY_CREDENTIALS } from "../../tools/operation.js";
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

const queryValue = (request: Request, name: string): string | undefined => {
  const value = request.query[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * What a request presents, in the order the gateway tries it (CONTRACT §2.2): headers, a bearer
 * token, a UI session, and, on routes that take them (`fromQuery`), `agent_id` and `api_key` (or a
 * peer's `mesh_token`) in the query string. When the only credential is the UI cookie, a change must come from this server's
 * own pages (403 otherwise).
 */
export function credentialsOf(request: Request, hosts: HostPolicy, fromQuery = false): Credentials {
  const credentials: Credentials = {
    agentId: request.get("x-agent-id"),
    apiKey: request.get("x-api-key"),
    authorization: request.get("authorization"),
    uiSession: request.get("x-ui-session"),
    address: request.socket.remoteAddress,
  };
  const other = credentials.agentId || credentials.apiKey || BEARER.test(credentials.authorization ?? "") || credentials.uiSession;
  if (!other && fromQuery) {
    credentials.agentId = queryValue(request, QUERY_CREDENTIALS.agentId);
    credentials.apiKey = queryValue(request, QUERY_CREDENTIALS.apiKey);
    credentials.meshToken = queryValue(request, QUERY_CREDENTIALS.meshToken);
    if (credentials.agentId || credentials.apiKey || credentials.meshToken) return credentials;
  }
  if (!other) {
    const cookie = cookieSession(request);
    if (cookie !== undefined) {
      refuseCrossSite(request, hosts);
      credentials.uiSession = cookie;
    }
  }
  return credentials;
}
