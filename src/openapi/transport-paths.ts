type Json = Record<string, unknown>;

const json = (schema: Json): Json => ({ "application/json": { schema } });
const oauthError = json({
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" }, error_description: { type: "string" } },
});
const mcpMessage = json({ type: "object", description: "a JSON-RPC 2.0 message (MCP)" });

/**
 * Routes that are not catalogue operations but belong in the document all the same: the MCP
 * endpoint (whose tools are the operations above) and OAuth for MCP clients.
 */
export function transportPaths(): Record<string, Json> {
  const mcpSecurity = [{ agentId: [], apiKey: [] }, { bearer: [] }];
  return {
    "/mcp": {
      post: {
        operationId: "mcp_post",
        summary: "MCP over Streamable HTTP",
        description:
          "Model Context Protocol endpoint: every agent operation of this API is a tool under its operationId " +
          "(`GET /events/wait` is `wait_for`). Authenticate as for REST, or with a bearer token from /oauth/token. " +
          "An `initialize` request opens a session (`Mcp-Session-Id`), which only its agent may use.",
        tags: ["mcp"],
        security: mcpSecurity,
        requestBody: { required: true, content: mcpMessage },
        responses: {
          "200": { description: "the JSON-RPC response", content: mcpMessage },
          "401": { description: "no valid credentials; WWW-Authenticate points at the protected-resource metadata" },
          "403": { description: "a Host or Origin that is not this server's" },
          "404": { description: "unknown session, or another agent's" },
        },
      },
      get: {
        operationId: "mcp_get",
        summary: "MCP session stream",
        description: "The session's server-to-client stream (server-sent events).",
        tags: ["mcp"],
        security: mcpSecurity,
        responses: { "200": { description: "an SSE stream", content: { "text/event-stream": { schema: { type: "string" } } } } },
      },
      delete: {
        operationId: "mcp_delete",
        summary: "End an MCP session",
        tags: ["mcp"],
        security: mcpSecurity,
        responses: { "200": { description: "the session is closed" } },
      },
    },
    "/oauth/token": {
      post: {
        operationId: "oauth_token",
        summary: "Bearer tokens (authorization code, refresh token, client credentials)",
        description:
          "OAuth 2.1 token endpoint. `authorization_code` (with `code_verifier`, the same `redirect_uri`, the client authenticated " +
          "by its registered method) and `refresh_token` (rotated on every use; `scope` may only narrow) answer an access token " +
          "(an hour) and a refresh token (30 days, sliding); a code or refresh token used twice revokes its grant. " +
          "`client_credentials`: `client_id` is the agent id and `client_secret` its key (in the body or HTTP Basic); the token " +
          "lasts an hour and dies when the key is rotated or the agent deleted. Errors use OAuth's shape.",
        tags: ["oauth"],
        security: [],
        requestBody: {
          required: true,
          content: {
            "application/x-www-form-urlencoded": {
              schema: {
                type: "object",
                required: ["grant_type"],
                properties: {
                  grant_type: { enum: ["authorization_code", "refresh_token", "client_credentials"] },
                  client_id: { type: "string" },
                  client_secret: { type: "string" },
                  code: { type: "string" },
                  code_verifier: { type: "string" },
                  redirect_uri: { type: "string" },
                  refresh_token: { type: "string" },
                  scope: { type: "string" },
                  resource: { type: "string" },
                },
              },
            },
          },
        },
        responses: {
          "200": {
            description: "the token",
            content: json({
              type: "object",
              required: ["access_token", "token_type", "expires_in"],
              properties: {
                access_token: { type: "string" },
                token_type: { const: "bearer" },
                expires_in: { type: "integer" },
                refresh_token: { type: "string" },
                scope: { type: "string" },
              },
            }),
          },
          "400": { description: "invalid_request, invalid_grant, invalid_scope, invalid_target or unsupported_grant_type", content: oauthError },
          "401": { description: "invalid_client: an unknown or expired client (register again) or wrong credentials", content: oauthError },
        },
      },
    },
    "/oauth/register": {
      post: {
        operationId: "oauth_register",
        summary: "Register an OAuth client (RFC 7591)",
        description:
          "Dynamic client registration, per OAUTH_REGISTRATION (`open`, `key`: `Authorization: Bearer <REGISTRATION_KEY>`, `off`). " +
          "Each redirect URI is judged on its own (https, http on loopback, a private-use scheme); those refused are left out. " +
          "`token_endpoint_auth_method` `none` makes a public client; the others get a secret, shown once. Registering grants nothing " +
          "until a human consents. Rate limited per address; unused clients expire.",
        tags: ["oauth"],
        security: [],
        requestBody: { required: true, content: json({ type: "object", required: ["redirect_uris"] }) },
        responses: {
          "201": { description: "the client as registered", content: json({ type: "object", required: ["client_id", "redirect_uris"] }) },
          "400": { description: "invalid_redirect_uri or invalid_client_metadata", content: oauthError },
          "401": { description: "a registration key is required (OAUTH_REGISTRATION=key)", content: oauthError },
          "403": { description: "registration is off", content: oauthError },
          "429": { description: "too many registrations from this address", content: oauthError },
        },
      },
    },
    "/oauth/authorize": {
      get: {
        operationId: "oauth_authorize",
        summary: "Authorization endpoint (a page for a human)",
        description:
          "OAuth 2.1 authorization code with PKCE (S256 only). A bad client or redirect URI is shown as a page; any other refusal " +
          "redirects with `error`, `state` and `iss`. The human signs in, sees the client and the scopes, chooses the agent the client " +
          "will act as, and allows (a redirect with `code`, `state`, `iss`) or denies (`error=access_denied`).",
        tags: ["oauth"],
        security: [],
        responses: {
          "200": { description: "the sign-in or consent page", content: { "text/html": { schema: { type: "string" } } } },
          "302": { description: "a refusal sent back to the client" },
          "400": { description: "a request that cannot be sent back (unknown client, unregistered redirect URI)", content: { "text/html": { schema: { type: "string" } } } },
        },
      },
      post: {
        operationId: "oauth_authorize_decide",
        summary: "The consent form's answer",
        description: "Sent by the consent page: sign-in, or the decision (with the page's CSRF token and the UI session cookie).",
        tags: ["oauth"],
        security: [],
        responses: {
          "302": { description: "to the client's redirect URI, with a code or an error" },
          "303": { description: "signed in: back to the consent page" },
          "401": { description: "not signed in", content: { "text/html": { schema: { type: "string" } } } },
          "403": { description: "a missing or wrong CSRF token, or a form from another site", content: { "text/html": { schema: { type: "string" } } } },
        },
      },
    },
    "/oauth/revoke": {
      post: {
        operationId: "oauth_revoke",
        summary: "Revoke a token (RFC 7009)",
        description: "A refresh token revokes its grant with every token of it; an access token, itself. 200 whether or not the token was known.",
        tags: ["oauth"],
        security: [],
        requestBody: {
          required: true,
          content: { "application/x-www-form-urlencoded": { schema: { type: "object", required: ["token"], properties: { token: { type: "string" }, token_type_hint: { type: "string" }, client_id: { type: "string" } } } } },
        },
        responses: { "200": { description: "done (or nothing to do)" }, "401": { description: "invalid_client", content: oauthError } },
      },
    },
    "/metrics": {
      get: {
        operationId: "metrics",
        summary: "Prometheus metrics",
        description:
          "Prometheus text format: requests by operation and status with a latency histogram, open event streams and " +
          "MCP sessions, the embedding model's state and the entries waiting for it, database size, events per type, " +
          "the archivist's lease holder and last pass. For the owner role, or for a scraper that sends " +
          "`Authorization: Bearer <METRICS_TOKEN>` when that setting is set.",
        tags: ["metrics"],
        security: [{ agentId: [], apiKey: [] }, { bearer: [] }],
        responses: {
          "200": { description: "the metrics", content: { "text/plain": { schema: { type: "string" } } } },
          "401": { description: "no valid credentials, or a wrong metrics token" },
          "403": { description: "an agent that is not an owner" },
        },
      },
    },
    "/.well-known/oauth-authorization-server": {
      get: {
        operationId: "oauth_authorization_server_metadata",
        summary: "OAuth authorization server metadata (RFC 8414)",
        tags: ["oauth"],
        security: [],
        responses: { "200": { description: "the metadata", content: json({ type: "object" }) } },
      },
    },
    "/.well-known/oauth-protected-resource": {
      get: {
        operationId: "oauth_protected_resource_metadata",
        summary: "OAuth protected resource metadata (RFC 9728) for /mcp",
        tags: ["oauth"],
        security: [],
        responses: { "200": { description: "the metadata", content: json({ type: "object" }) } },
      },
    },
  };
}
