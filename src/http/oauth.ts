import express, { type Request, type Response, type Router } from "express";
import { AppError } from "../core/errors.js";
import type { Runtime } from "../../tools/runtime.js";

/** What a 401 from /mcp says: the key headers, or a bearer token described by the metadata document. */
export const mcpChallenge = (publicUrl: string): string =>
  `ApiKey realm="cairn", header="X-API-Key", Bearer realm="cairn", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`;

const oauthError = (response: Response, status: number, error: string, description: string): void => {
  response.status(status).set("Cache-Control", "no-store").json({ error, error_description: description });
};

/** Client credentials from the body, or from HTTP Basic (`client_secret_basic`). */
function clientCredentials(request: Request, body: Record<string, unknown>): { id: unknown; secret: unknown } {
  const basic = /^Basic\s+(\S+)$/i.exec(request.get("authorization") ?? "")?.[1];
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
  }
  return { id: body.client_id, secret: body.client_secret };
}

/**
 * OAuth 2.1 for MCP clients: the client-credentials token endpoint and the two metadata documents
 * that point clients at it. The token route answers in OAuth's error shape, not Cairn's.
 */
export function oauthRouter(runtime: Runtime, publicUrl: () => string): Router {
  const router = express.Router();
  const limit = runtime.config.MAX_BODY_BYTES;
  router.post("/oauth/token", express.urlencoded({ extended: false, limit }), express.json({ limit }), (request, response) => {
    const body = (typeof request.body === "object" && request.body !== null ? request.body : {}) as Record<string, unknown>;
    if (body.grant_type !== "client_credentials") {
      oauthError(response, 400, "unsupported_grant_type", "only client_credentials is supported");
      return;
    }
    const { id, secret } = clientCredentials(request, body);
    if (typeof id !== "string" || typeof secret !== "string" || id === "" || secret === "") {
      oauthError(response, 400, "invalid_request", "client_id and client_secret are required");
      return;
    }
    try {
      // Failed attempts count against the client id's rate limit, so keys cannot be guessed quickly.
      runtime.services.rateLimiter.take(`oauth:${id}`);
      response.set("Cache-Control", "no-store").json(runtime.services.oauth.issue(id, secret));
    } catch (error) {
      if (error instanceof AppError && error.code === "UNAUTHENTICATED") {
        response.set("WWW-Authenticate", 'Basic realm="cairn"');
        oauthError(response, 401, "invalid_client", "unknown client or wrong secret");
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
