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
        summary: "Bearer token (client credentials)",
        description:
          "OAuth 2.1 client credentials: `client_id` is the agent id and `client_secret` its key (in the body or HTTP " +
          "Basic). The token lasts an hour and dies when the key is rotated or the agent deleted. Errors use OAuth's shape.",
        tags: ["oauth"],
        security: [],
        requestBody: {
          required: true,
          content: {
            "application/x-www-form-urlencoded": {
              schema: {
                type: "object",
                required: ["grant_type"],
                properties: { grant_type: { const: "client_credentials" }, client_id: { type: "string" }, client_secret: { type: "string" } },
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
              properties: { access_token: { type: "string" }, token_type: { const: "bearer" }, expires_in: { type: "integer" } },
            }),
          },
          "400": { description: "unsupported_grant_type or invalid_request", content: oauthError },
          "401": { description: "invalid_client", content: oauthError },
        },
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
