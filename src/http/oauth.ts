import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { AppError } from "../core/errors.js";
import { OAuthError } from "../core/oauth-error.js";
import { OAUTH_SCOPES } from "../wire/oauth.js";
import type { ClientInfo, OperationGateway } from "../../tools/gateway.js";
import { bearerChallenge } from "./challenges.js";
import type { HostPolicy } from "./hosts.js";
import { authorizeRoutes } from "./oauth-authorize.js";


/** The largest registration request read (RFC 7591 metadata is small: ten redirect URIs and a few names). */
const REGISTRATION_BODY_BYTES = 16 * 1024;

const oauthError = (response: Response, status: number, error: string, description: string): void => {
  response.status(status).set("Cache-Control", "no-store").json({ error, error_description: description });
};

/** Raised for a request OAuth calls invalid; the route answers it as `invalid_request`. */
class InvalidRequest extends Error {}

interface ClientCredentials {
  id: string | undefined;
  secret: string | undefined;
}

/**
 * Client credentials from HTTP Basic (`client_secret_basic`, each half form-encoded) or the body
 * (`client_secret_post`, or a public client's `client_id` alone). Both at once is a malformed request.
 */
function clientCredentials(request: Request, body: Record<string, unknown>): ClientCredentials {
  const basic = /^Basic\s+(\S+)$/i.exec(request.get("authorization") ?? "")?.[1];
  const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
  if (basic === undefined) return { id: text(body.client_id), secret: text(body.client_secret) };
  if (body.client_secret !== undefined) throw new InvalidRequest("client credentials in both the Authorization header and the body");
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
  const id = formDecode(decoded.slice(0, colon));
  if (typeof body.client_id === "string" && body.client_id !== id) throw new InvalidRequest("client_id differs from the Authorization header's");
  return { id, secret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * A body of at most `limit` bytes: a form or JSON (`json` only: JSON alone). Whatever the parsers
 * refuse (malformed JSON, an unknown charset or content encoding) is OAuth's `invalid_request`,
 * and an oversize body 413; nothing of the body reaches a log.
 */
function oauthBody(limit: number, forms = true) {
  const form = express.urlencoded({ extended: false, limit, parameterLimit: 20 });
  const json = express.json({ limit, strict: true });
  return (request: Request, response: Response, next: NextFunction): void => {
    const refused = (error: unknown): void => {
      if ((error as { type?: string }).type === "entity.too.large") oauthError(response, 413, "invalid_request", `request body exceeds ${limit} bytes`);
      else oauthError(response, 400, "invalid_request", "the request body could not be read");
    };
    const parseJson = (): void =>
      json(request, response, (jsonError?: unknown) => {
        if (jsonError) refused(jsonError);
        else next();
      });
    if (!forms) {
      parseJson();
      return;
    }
    form(request, response, (error?: unknown) => {
      if (error) refused(error);
      else parseJson();
    });
  };
}

const bodyOf = (request: Request): Record<string, unknown> =>
  (typeof request.body === "object" && request.body !== null && !Array.isArray(request.body) ? request.body : {}) as Record<string, unknown>;

/** A single text parameter of a token or revocation request; absent when empty. */
function parameter(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw new InvalidRequest(`${name} must be one string`);
  return value;
}

/** Answers an error the OAuth routes raise in OAuth's shape; anything else goes on to the error handler. */
function answerOAuthError(response: Response, error: unknown, publicUrl: string): boolean {
  if (error instanceof InvalidRequest) {
    oauthError(response, 400, "invalid_request", error.message);
    return true;
  }
  if (error instanceof OAuthError) {
    if (error.status === 401 && error.error === "invalid_client") response.set("WWW-Authenticate", 'Basic realm="cairn"');
    if (error.status === 401 && error.error === "invalid_token") response.set("WWW-Authenticate", bearerChallenge(publicUrl, { error: "invalid_token", description: error.description }));
    oauthError(response, error.status, error.error, error.description);
    return true;
  }
  if (error instanceof AppError && error.code === "UNAUTHENTICATED") {
    response.set("WWW-Authenticate", 'Basic realm="cairn"');
    oauthError(response, 401, "invalid_client", "unknown client or wrong secret");
    return true;
  }
  if (error instanceof AppError && error.code === "RATE_LIMITED") {
    response.set("Retry-After", String(error.retryAfter ?? 60));
    oauthError(response, 429, "temporarily_unavailable", error.detail);
    return true;
  }
  return false;
}

/**
 * OAuth 2.1 for MCP clients (CONTRACT §19): the token endpoint (client credentials, authorization
 * code, refresh token), registration, revocation, the authorization endpoint and the two metadata
 * documents. These routes answer in OAuth's error shape, not Cairn's.
 */
export function oauthRouter(gateway: OperationGateway, publicUrl: () => string, hosts: HostPolicy): Router {
  const router = express.Router();
  const oauth = gateway.oauth;
  // Any page can send a form here, and every local client shares 127.0.0.1: a page of another site
  // could spend a local agent's allowance of failed secrets and lock it out. Browsers always name
  // the page's origin on such a request, so it is refused before anything is read or counted.
  const sameSiteOnly = (request: Request, response: Response, next: NextFunction): void => {
    const origin = request.get("origin");
    if (origin !== undefined && !hosts.allowsOrigin(origin)) oauthError(response, 403, "invalid_request", "cross-site request refused");
    else next();
  };
  const handled =
    (handler: (request: Request, response: Response) => Promise<void>) =>
    async (request: Request, response: Response): Promise<void> => {
      try {
        await handler(request, response);
      } catch (error) {
        if (!answerOAuthError(response, error, publicUrl())) throw error;
      }
    };
  /** The client a code, refresh or revocation request comes from, authenticated by its registered method. */
  const clientOf = (request: Request, credentials: ClientCredentials): Promise<ClientInfo> => {
    if (credentials.id === undefined) throw new InvalidRequest("client_id is required");
    return oauth.authenticateClient(credentials.id, credentials.secret, request.socket.remoteAddress);
  };

  router.post(
    "/oauth/token",
    sameSiteOnly,
    oauthBody(gateway.config.MAX_BODY_BYTES),
    handled(async (request, response) => {
      const body = bodyOf(request);
      const grantType = parameter(body, "grant_type");
      if (grantType === undefined) throw new InvalidRequest("grant_type is required");
      const resource = parameter(body, "resource");
      const credentials = clientCredentials(request, body);
      let issued;
      if (grantType === "client_credentials") {
        if (credentials.id === undefined || credentials.secret === undefined) throw new InvalidRequest("client_id and client_secret are required");
        issued = await oauth.issue(credentials.id, credentials.secret, request.socket.remoteAddress, resource);
      } else if (grantType === "authorization_code") {
        const code = parameter(body, "code");
        if (code === undefined) throw new InvalidRequest("code is required");
        const client = await clientOf(request, credentials);
        issued = await oauth.exchangeCode(client, { code, redirectUri: parameter(body, "redirect_uri"), codeVerifier: parameter(body, "code_verifier"), resource });
      } else if (grantType === "refresh_token") {
        const refreshToken = parameter(body, "refresh_token");
        if (refreshToken === undefined) throw new InvalidRequest("refresh_token is required");
        const client = await clientOf(request, credentials);
        issued = await oauth.refresh(client, { refreshToken, scope: parameter(body, "scope"), resource });
      } else {
        oauthError(response, 400, "unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials");
        return;
      }
      response.set("Cache-Control", "no-store").set("Pragma", "no-cache").json(issued);
    }),
  );

  // RFC 7009: the answer is 200 whether or not the token was known, valid or the client's.
  router.post(
    "/oauth/revoke",
    sameSiteOnly,
    oauthBody(gateway.config.MAX_BODY_BYTES),
    handled(async (request, response) => {
      const body = bodyOf(request);
      const token = parameter(body, "token");
      if (token === undefined) throw new InvalidRequest("token is required");
      const credentials = clientCredentials(request, body);
      const client = credentials.id === undefined ? null : await clientOf(request, credentials);
      await oauth.revoke(token, client);
      response.set("Cache-Control", "no-store").status(200).end();
    }),
  );

  router.post(
    "/oauth/register",
    sameSiteOnly,
    oauthBody(REGISTRATION_BODY_BYTES, false),
    handled(async (request, response) => {
      const key = /^Bearer\s+(\S+)$/i.exec(request.get("authorization") ?? "")?.[1] ?? request.get("x-registration-key");
      const registered = await oauth.register(request.body, key, request.socket.remoteAddress);
      response.status(201).set("Cache-Control", "no-store").json(registered);
    }),
  );

  router.use(authorizeRoutes(gateway, hosts));

  router.get("/.well-known/oauth-authorization-server", (_request, response) => {
    const base = publicUrl();
    response.json({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      // Where clients can register: not advertised when registration is off.
      ...(gateway.config.OAUTH_REGISTRATION === "off" ? {} : { registration_endpoint: `${base}/oauth/register` }),
      revocation_endpoint: `${base}/oauth/revoke`,
      scopes_supported: [...OAUTH_SCOPES],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${base}/docs`,
    });
  });
  const resourceMetadata = (_request: Request, response: Response): void => {
    const base = publicUrl();
    response.json({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: [...OAUTH_SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "Cairn",
      resource_documentation: `${base}/docs`,
    });
  };
  router.get("/.well-known/oauth-protected-resource", resourceMetadata);
  router.get("/.well-known/oauth-protected-resource/mcp", resourceMetadata);
  return router;
}
