import { ALL_SCOPES } from "../wire/oauth.js";

// WWW-Authenticate (RFC 6750 §3, RFC 9728 §5.1): the Bearer challenge comes first, since MCP clients
// read only the first one, and names the protected-resource metadata and every scope (CONTRACT §19);
// the key headers' challenge follows it for everyone else.

const API_KEY_CHALLENGE = 'ApiKey realm="cairn", header="X-API-Key"';

const resourceMetadataUrl = (publicUrl: string): string => `${publicUrl}/.well-known/oauth-protected-resource`;

/** The Bearer challenge; `error` for a token refused (`invalid_token`) or short of scope (`insufficient_scope`). */
export function bearerChallenge(publicUrl: string, error?: { error: string; description: string }): string {
  const parts = [`Bearer resource_metadata="${resourceMetadataUrl(publicUrl)}"`, `scope="${ALL_SCOPES}"`];
  if (error) parts.push(`error="${error.error}"`, `error_description="${error.description.replace(/["\\]/g, "")}"`);
  return parts.join(", ");
}

/**
 * Whether a refused request presented a bearer token (and no agent key, which is tried first): a
 * token expired or revoked is then `invalid_token` (RFC 6750 §3.1), which tells an OAuth client to
 * refresh or authorize again rather than that it sent nothing.
 */
export function presentedBearer(headers: { agentId?: string | undefined; apiKey?: string | undefined; authorization?: string | undefined }): boolean {
  return headers.agentId === undefined && headers.apiKey === undefined && /^Bearer\s+\S/i.test(headers.authorization ?? "");
}

/** A 401's challenges: a bearer token (described by the metadata), or the agent key headers. */
export const unauthenticatedChallenge = (publicUrl: string, invalidToken = false): string =>
  `${bearerChallenge(publicUrl, invalidToken ? { error: "invalid_token", description: "the access token is invalid, expired or revoked" } : undefined)}, ${API_KEY_CHALLENGE}`;

/** A 403 for a token without the scope a change needs. */
export const insufficientScopeChallenge = (publicUrl: string, description: string): string => bearerChallenge(publicUrl, { error: "insufficient_scope", description });
