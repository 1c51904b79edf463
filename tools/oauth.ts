import { z } from "zod";
import { oauthGrant } from "../src/wire/oauth.js";
import { defineOperation } from "./operation.js";
import { cursorParam } from "./schemas.js";
import { limitParam } from "../src/wire/fields.js";

// What humans allowed OAuth clients to do (CONTRACT §19): the owner's, over REST and the web UI,
// never MCP. The OAuth protocol routes themselves (/oauth/token, /oauth/authorize, …) are not
// operations: they speak OAuth's wire format (src/http/oauth.ts).

const oauthGrantList = defineOperation({
  name: "oauth_grant_list",
  title: "List OAuth grants",
  description:
    "The grants humans made on the consent page, oldest first: which client acts as which agent, with which scopes, since when and " +
    "when it last got a token. Never a token or a code. Owner only.",
  kind: "list",
  restOnly: true,
  roles: ["owner"],
  http: { method: "GET", path: "/oauth/grants" },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: oauthGrant,
  errors: ["FORBIDDEN"],
  handle({ services }, input) {
    return services.oauth.grants.list(input.cursor, input.limit);
  },
});

const oauthGrantRevoke = defineOperation({
  name: "oauth_grant_revoke",
  title: "Revoke an OAuth grant",
  description:
    "Revoke a grant at once: its code, refresh tokens and access tokens stop working with the next request, and the client must ask " +
    "a human again. Owner only.",
  kind: "delete",
  restOnly: true,
  roles: ["owner"],
  http: { method: "DELETE", path: "/oauth/grants/:grant_id" },
  input: z.strictObject({ grant_id: z.uuid().describe("the grant's id") }),
  output: undefined,
  errors: ["FORBIDDEN", "NOT_FOUND"],
  async handle({ services, caller }, input) {
    await services.oauth.grants.revokeById(caller, input.grant_id);
  },
});

export const oauthOperations = [oauthGrantList, oauthGrantRevoke];
