import { z } from "zod";
import { timestamp } from "./timestamp.js";

// OAuth 2.1 for MCP clients (CONTRACT §19): the scopes a token carries and the grants a human made.

/** `cairn:read` alone acts with a viewer's rights; `cairn:write` adds changes (and implies reading). */
export const OAUTH_SCOPES = ["cairn:read", "cairn:write"] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];
/** What every challenge names and what a request without `scope` is given. */
export const ALL_SCOPES = OAUTH_SCOPES.join(" ");

export const oauthGrant = z
  .object({
    id: z.uuid(),
    client_id: z.string().describe("the registered client's id, or the URL of its client metadata document"),
    client_name: z.string().describe("as the client named itself (unverified)"),
    client_host: z.string().describe("where its codes were sent: the redirect URI's host, or the metadata document's"),
    agent_id: z.string().describe("the agent the client acts as"),
    scopes: z.array(z.enum(OAUTH_SCOPES)),
    resource: z.string().describe("the protected resource its tokens are for (<PUBLIC_URL>/mcp)"),
    created_by: z.string().describe("who consented"),
    created_at: timestamp,
    last_used_at: timestamp.nullable().describe("its last token issue (code redeemed or refresh)"),
  })
  .meta({ id: "OAuthGrant" });
export type OAuthGrant = z.output<typeof oauthGrant>;
