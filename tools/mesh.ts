import { z } from "zod";
import { createdMeshToken, meshCapability, meshGossip, meshHandshakeResult, meshLink, meshToken } from "../src/wire/mesh.js";
import { defineOperation, reply } from "./operation.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";
import { timestampInput } from "../src/wire/timestamp.js";

// The mesh's administration (CONTRACT §16) is the owner's, over REST and the UI only, never MCP;
// the handshake and gossip are for peers, which present one of our mesh tokens.

const tokenId = z.uuid().describe("the token's id");
const linkId = z.uuid().describe("the link's id");
const label = z.string().trim().min(1).max(100);
const tokenProjects = z.array(projectId).max(100).describe("the projects whose shared entries it reads (up to 100)");
const capabilities = z
  .array(meshCapability)
  .min(1)
  .max(4)
  .describe('"pull" (always granted) plus any of "handshake" (may link back), "feed" (the feeds only), "gossip" (whom we know)');
const expiresAt = timestampInput.nullable().describe("when it stops working; null: never");
/** A token as a peer minted it: its prefix, then base64url, and nothing a header could be split with. */
const peerToken = z
  .string()
  .max(256)
  .regex(/^cairn_mt_[A-Za-z0-9_-]{16,}$/, "must be a mesh token (cairn_mt_…)")
  .describe("a mesh token the peer's owner minted (cairn_mt_…); kept encrypted");
const peerUrl = z.string().min(1).max(2048).describe("the peer's base URL, http(s), without query or user name");
const mapping = z
  .array(z.union([projectId, z.strictObject({ remote: projectId.describe("the peer's project"), local: projectId.describe("the project here") })]))
  .max(100)
  .describe("the peer's projects to pull and where they land: {remote, local} pairs, or an id for both; default every project its token grants");
const interval = z.number().int().min(30).max(86400).describe("seconds between syncs, 30 to 86400 (default 300)");
const maxConfidence = z.number().min(0).max(1).describe("the highest confidence a copy keeps here, 0 to 1 (default 0.8)");
const linkOptions = {
  projects: mapping.optional(),
  direction: z.enum(["pull", "both"]).optional().describe('"both" (default): also mint a pull token for the peer and ask it to link back'),
  interval_seconds: interval.optional(),
  max_confidence: maxConfidence.optional(),
  label: label.optional(),
};

const meshTokenCreate = defineOperation({
  name: "mesh_token_create",
  title: "Create a mesh token",
  description:
    "Mint a token a peer links with: it reads the shared memory, doc and skill entries of these projects (and the global ones with " +
    "include_global) on the feed, merkle and gossip routes, and nothing else. The token is shown this once. Owner only.",
  kind: "create",
  restOnly: true,
  roles: ["owner"],
  http: { method: "POST", path: "/mesh/tokens" },
  input: z.strictObject({
    label,
    projects: tokenProjects,
    include_global: z.boolean().optional().describe("also the global entries (default false)"),
    capabilities: capabilities.optional().describe('default ["pull"]'),
    expires_at: expiresAt.optional(),
  }),
  output: createdMeshToken,
  errors: ["FORBIDDEN", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.meshTokens.create(caller, { ...input, capabilities: input.capabilities ?? ["pull"] });
  },
});

const meshTokenList = defineOperation({
  name: "mesh_token_list",
  title: "List mesh tokens",
  description: "Tokens minted for peers, oldest first, revoked ones included; a prefix of each, never the token. Owner only.",
  kind: "list",
  restOnly: true,
  roles: ["owner"],
  http: { method: "GET", path: "/mesh/tokens" },
  input: z.strictObject({ limit: limitParam(200, 50), cursor: cursorParam }),
  output: meshToken,
  errors: ["FORBIDDEN"],
  handle({ services }, input) {
    return services.meshTokens.list(input.cursor, input.limit);
  },
});

const meshTokenUpdate = defineOperation({
  name: "mesh_token_update",
  title: "Change a mesh token",
  description: "Relabel a token or change what it grants, from its next use; a scope of no project and no global entries is refused. Owner only.",
  kind: "update",
  restOnly: true,
  roles: ["owner"],
  http: { method: "PATCH", path: "/mesh/tokens/:token_id" },
  input: z.strictObject({
    token_id: tokenId,
    label: label.optional(),
    projects: tokenProjects.optional(),
    include_global: z.boolean().optional(),
    capabilities: capabilities.optional(),
    expires_at: expiresAt.optional(),
  }),
  output: meshToken,
  errors: ["FORBIDDEN", "NOT_FOUND", "CONFLICT"],
  handle({ services, caller }, { token_id, ...changes }) {
    return services.meshTokens.update(caller, token_id, changes);
  },
});

const meshTokenRevoke = defineOperation({
  name: "mesh_token_revoke",
  title: "Revoke a mesh token",
  description: "Revoke a token at once: the next request with it is refused, and the peer's link to us turns unauthorized. Owner only.",
  kind: "delete",
  restOnly: true,
  roles: ["owner"],
  http: { method: "DELETE", path: "/mesh/tokens/:token_id" },
  input: z.strictObject({ token_id: tokenId }),
  output: undefined,
  errors: ["FORBIDDEN", "NOT_FOUND"],
  async handle({ services, caller }, input) {
    await services.meshTokens.revoke(caller, input.token_id);
  },
});

const meshPeerLink = defineOperation({
  name: "mesh_peer_link",
  title: "Link a peer",
  description:
    "Link another Cairn with a token its owner minted: the token is checked against the peer's gossip, kept encrypted, and this " +
    "instance then pulls the peer's shared entries of the mapped projects. With direction both (the default) a pull token is minted " +
    "for the peer and its handshake asked to link back; when it refuses, nothing is kept. Owner only.",
  kind: "create",
  restOnly: true,
  roles: ["owner"],
  http: { method: "POST", path: "/mesh/peers" },
  input: z.strictObject({ url: peerUrl, token: peerToken, ...linkOptions }),
  output: meshLink,
  errors: ["FORBIDDEN", "CONFLICT", "UPSTREAM_ERROR"],
  handle({ services, caller }, input) {
    return services.meshLinks.link(caller, input);
  },
});

const meshPeerList = defineOperation({
  name: "mesh_peer_list",
  title: "List linked peers",
  description: "Links to peers, oldest first, with their status, last sync, cursor, counts and last error; never their tokens. Owner only.",
  kind: "list",
  restOnly: true,
  roles: ["owner"],
  http: { method: "GET", path: "/mesh/peers" },
  input: z.strictObject({ limit: limitParam(200, 50), cursor: cursorParam }),
  output: meshLink,
  errors: ["FORBIDDEN"],
  handle({ services }, input) {
    return services.meshLinks.list(input.cursor, input.limit);
  },
});

const meshPeerUpdate = defineOperation({
  name: "mesh_peer_update",
  title: "Change a link",
  description: "Pause or resume a link, or change its interval, confidence cap, label or project mapping. Owner only.",
  kind: "update",
  restOnly: true,
  roles: ["owner"],
  http: { method: "PATCH", path: "/mesh/peers/:link_id" },
  input: z.strictObject({
    link_id: linkId,
    paused: z.boolean().optional(),
    interval_seconds: interval.optional(),
    max_confidence: maxConfidence.optional(),
    label: label.nullable().optional().describe("null clears it"),
    projects: mapping.optional(),
  }),
  output: meshLink,
  errors: ["FORBIDDEN", "NOT_FOUND"],
  handle({ services, caller }, { link_id, ...changes }) {
    return services.meshLinks.update(caller, link_id, changes);
  },
});

const meshPeerUnlink = defineOperation({
  name: "mesh_peer_unlink",
  title: "Unlink a peer",
  description: "Stop pulling from a peer and revoke the token minted for it; the copies already here stay. Owner only.",
  kind: "delete",
  restOnly: true,
  roles: ["owner"],
  http: { method: "DELETE", path: "/mesh/peers/:link_id" },
  input: z.strictObject({ link_id: linkId }),
  output: undefined,
  errors: ["FORBIDDEN", "NOT_FOUND"],
  async handle({ services, caller }, input) {
    await services.meshLinks.unlink(caller, input.link_id);
  },
});

const meshHandshake = defineOperation({
  name: "mesh_handshake",
  title: "Accept a peer's handshake",
  description:
    "Called by a peer that linked here with one of our tokens holding the handshake capability: it gives its URL and a token of its own, " +
    "is called back at that URL to prove who it is, and gets a pull link back limited to the projects the presenting token grants " +
    "(those of `projects` within it). Only with a bearer mesh token; agents' credentials are refused.",
  kind: "create",
  restOnly: true,
  mesh: ["handshake"],
  http: { method: "POST", path: "/mesh/handshake", otherStatuses: [{ status: 200, description: "a link to the caller existed: its token and url were replaced" }] },
  input: z.strictObject({
    instance_id: z.string().min(1).max(100).describe("the caller's instance id, checked by calling it back"),
    name: z.string().min(1).max(100).describe("the caller's instance name (the name its gossip gives is kept)"),
    url: peerUrl,
    token: peerToken.describe("a pull token the caller minted for us"),
    projects: mapping.optional().describe("{remote: the caller's project, local: ours}, or an id for both; kept only within the presenting token"),
  }),
  output: meshHandshakeResult,
  errors: ["FORBIDDEN", "UPSTREAM_ERROR"],
  async handle({ services, caller }, input) {
    const result = await services.meshHandshakes.accept(caller, input);
    return result.created ? result : reply(result, { status: 200 });
  },
});

const meshGossipGet = defineOperation({
  name: "mesh_gossip",
  title: "Who this instance is and whom it knows",
  description:
    "For peers (a mesh token with pull or gossip) and the owner: this instance's id, name, URL and version, the linked peers that " +
    "share a project with the token, and what the token grants. Never a token. Credentials may be given in the query (`mesh_token`).",
  kind: "read",
  restOnly: true,
  roles: ["owner"],
  mesh: ["gossip", "pull"],
  http: { method: "GET", path: "/mesh/gossip", queryCredentials: true },
  input: z.strictObject({}),
  output: meshGossip,
  errors: ["FORBIDDEN"],
  handle({ services, caller }) {
    return services.meshGossip.answer(caller);
  },
});

const meshLinkDiscovered = defineOperation({
  name: "mesh_link_discovered",
  title: "Link a discovered peer",
  description:
    "Link a peer heard of by mDNS or gossip, at the URL it was heard at: the same as POST /mesh/peers, and a token from its owner is " +
    "still required. Owner only.",
  kind: "create",
  restOnly: true,
  roles: ["owner"],
  http: { method: "POST", path: "/mesh/link-discovered" },
  input: z.strictObject({ instance_id: z.string().min(1).max(100).describe("as GET /mesh/discovered lists it"), token: peerToken, ...linkOptions }),
  output: meshLink,
  errors: ["FORBIDDEN", "NOT_FOUND", "CONFLICT", "UPSTREAM_ERROR"],
  handle({ services, caller }, { instance_id, ...input }) {
    return services.meshLinks.linkDiscovered(caller, instance_id, input);
  },
});

export const meshOperations = [
  meshTokenCreate,
  meshTokenList,
  meshTokenUpdate,
  meshTokenRevoke,
  meshPeerLink,
  meshPeerList,
  meshPeerUpdate,
  meshPeerUnlink,
  meshHandshake,
  meshGossipGet,
  meshLinkDiscovered,
];
