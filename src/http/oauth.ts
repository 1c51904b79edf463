import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { AppError } from "../core/errors.js";
import type { OperationGateway } from "../../tools/gateway.js";
import type { HostPolicy } from "./hosts.js";

/** What a 401 from /mcp says: the key headers, or a bearer token described by the metadata document. */
export const mcpChallenge = (publicUrl: string): string =>
  `ApiKey realm="cairn", header="X-API-Key", Bearer realm="cairn", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`;

const oauthError = (response: Response, status: number, error: string, description: string): void => {
  response.status(status).set("Cache-Control", "no-store").json({ error, error_description: description });
};

/** Raised for a request OAuth calls invalid; the route answers it as `invalid_request`. */
class InvalidRequest extends Error {}

/** Client credentials from HTTP Basic (`client_secret_basic`, each half form-encoded) or the body. */
function clientCredentials(request: Request, body: Record<string, unknown>): { id: unknown; secret: unknown } {
  const basic = /^Basic\s+(\S+)$/i.exec(request.get("authorization") ?? "")?.[1];
  if (basic === undefined) return { id: body.client_id, secret: body.client_secret };
  const decoded = Buffer.from(basic, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw new InvalidRequest("malformed basic credentials");
  const formDecode = (part: string): string => {
    try {
      return decodeURIComponent(part.replace(/\+/g, " "));
    } catch {
      throw new InvalidRequest("malformed basic credentials");
    }
  };
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * The token route's body: a form or JSON of at most `limit` bytes. Whatever the parsers refuse
 * (malformed JSON, an unknown charset or content encoding) is OAuth's `invalid_request`, and an
 * oversize body 413; nothing of the body reaches a log.
 */
function tokenBody(limit: number) {
  const form = express.urlencoded({ extended: false, limit, parameterLimit: 20 });
  const json = express.json({ limit, strict: true });
  return (request: Request, response: Response, next: NextFunction): void => {
    const refused = (error: unknown): void => {
      if ((error as { type?: string }).type === "entity.too.large") oauthError(response, 413, "invalid_request", `request body exceeds ${limit} bytes`);
      else oauthError(response, 400, "invalid_request", "the request body could not be read");
    };
    form(request, response, (error?: unknown) => {
      if (error) {
        refused(error);
        return;
      }
      json(request, response, (jsonError?: unknown) => {
        if (jsonError) refused(jsonError);
        else next();
      });
    });
  };
}

/**
 * OAuth 2.1 for MCP clients: the client-credentials token endpoint and the two metadata documents
 * that point clients at it. The token route answers in OAuth's error shape, not Cairn's.
 */
export function oauthRouter(gateway: OperationGateway, publicUrl: () => string, hosts: HostPolicy): Router {
  const router = express.Router();
  // Any page can send a form here, and every local client shares 127.0.0.1: a page of another site
  // could spend a local agent's allowance of failed secrets and lock it out. Browsers always name
  // the page's origin on such a request, so it is refused before anything is read or counted.
  const sameSiteOnly = (request: Request, response: Response, next: NextFunction): void => {
    const origin = request.get("origin");
    if (origin !== undefined && !hosts.allowsOrigin(origin)) oauthError(response, 403, "invalid_request", "cross-site request refused");
    else next();
  };
  router.post("/oauth/token", sameSiteOnly, tokenBody(gateway.config.MAX_BODY_BYTES), async (request, response) => {
    const body = (typeof request.body === "object" && request.body !== null && !Array.isArray(request.body) ? request.body : {}) as Record<string, unknown>;
    if (typeof body.grant_type !== "string") {
      oauthError(response, 400, "invalid_request", "grant_type is required");
      return;
    }
    if (body.grant_type !== "client_credentials") {
      oauthError(response, 400, "unsupported_grant_type", "only client_credentials is supported");
      return;
    }
    try {
      const { id, secret } = clientCredentials(request, body);
      if (typeof id !== "string" || typeof secret !== "string" || id === "" || secret === "") {
        oauthError(response, 400, "invalid_request", "client_id and client_secret are required");
        return;
      }
      response.set("Cache-Control", "no-store").json(await gateway.oauth.issue(id, secret, request.socket.remoteAddress));
    } catch (error) {
      if (error instanceof InvalidRequest) {
        oauthError(response, 400, "invalid_request", error.message);
        return;
      }
      if (error instanceof AppError && error.code === "UNAUTHENTICATED") {
        response.set("WWW-Authenticate", 'Basic realm="cairn"');
        oauthError(response, 401, "invalid_client", "unknown client or wrong secret");
        return;
      }
      if (error instanceof AppError && error.code === "RATE_LIMITED") {
        response.set("Retry-After", String(error.retryAfter ?? 60));
        oauthError(response, 429, "temporarily_unavailable", error.detail);
        return;
      }
      throw error;
    }
  });
  router.get("/.well-known/oauth-authorization-server", (_request, response) => {
    const base = publicUrl();
    response.json({
      issuer: base,
      token_endpoint: `${base}/oauth/token`,
      grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
      response_types_supported: [],
    });
  });
  const resourceMetadata = (_request: Request, response: Response): void => {
    const base = publicUrl();
    response.json({ resource: `${base}/mcp`, authorization_servers: [base], bearer_methods_supported: ["header"], resource_name: "Cairn" });
  };
  router.get("/.well-known/oauth-protected-resource", resourceMetadata);
  router.get("/.well-known/oauth-protected-resource/mcp", resourceMetadata);
  return router;
}
