import { z } from "zod";
import { timestamp } from "./timestamp.js";

// The mesh (CONTRACT §16): tokens granted to peers, links to peers, and what peers say to each other.

const meshCapabilities = ["pull", "handshake", "feed", "gossip"] as const;
export const meshCapability = z.enum(meshCapabilities);
export type MeshCapability = z.output<typeof meshCapability>;

/** A token as the owner lists it: never the secret, only its first characters. */
export const meshToken = z
  .object({
    id: z.uuid(),
    label: z.string(),
    prefix: z.string().describe("the token's first characters, to tell tokens apart"),
    projects: z.array(z.string()),
    include_global: z.boolean(),
    capabilities: z.array(meshCapability),
    expires_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
    link_id: z.string().nullable().describe("the link it was minted for (a link made both ways), revoked when that link is removed"),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    last_used_at: timestamp.nullable(),
  })
  .meta({ id: "MeshToken" });
export type MeshToken = z.output<typeof meshToken>;

/** The answer to creating a token: the one time its secret is shown. */
export const createdMeshToken = meshToken
  .extend({ token: z.string().describe("the secret (cairn_mt_…), shown this once: give it to the peer") })
  .meta({ id: "CreatedMeshToken" });

const meshLinkStatus = z.enum(["active", "failing", "unauthorized", "paused"]);
export type MeshLinkStatusName = z.output<typeof meshLinkStatus>;

export const projectMapping = z.object({ remote: z.string(), local: z.string() });
export type ProjectMapping = z.output<typeof projectMapping>;

/** A link to a peer whose shared memory this instance pulls. */
export const meshLink = z
  .object({
    id: z.uuid(),
    peer_instance_id: z.string(),
    peer_name: z.string(),
    url: z.string(),
    label: z.string().nullable(),
    projects: z.array(projectMapping).describe("which of the peer's projects land in which local one"),
    direction: z.enum(["pull", "both"]),
    interval_seconds: z.number().int(),
    max_confidence: z.number(),
    status: meshLinkStatus,
    last_sync_at: timestamp.nullable(),
    last_success_at: timestamp.nullable(),
    last_error: z.string().nullable(),
    cursor: z.number().int().describe("the peer's change_seq applied up to"),
    token_hint: z.string().describe("enough of the peer's token to recognise it"),
    applied: z.number().int().describe("copies applied since the link was made"),
    rejected: z.number().int(),
    dropped: z.number().int().describe("items of projects the link does not map"),
    next_sync_at: timestamp,
    created_by: z.string(),
    created_at: timestamp,
  })
  .meta({ id: "MeshLink" });
export type MeshLink = z.output<typeof meshLink>;

/** What one sync did. */
export const meshSyncResult = z
  .object({
    pages: z.number().int(),
    applied: z.number().int().describe("copies inserted or replaced"),
    skipped: z.number().int().describe("items already held at that version or newer, or this instance's own"),
    rejected: z.number().int().describe("items refused (each with a mesh.rejected event)"),
    tombstones: z.number().int().describe("deletions applied"),
    duration_ms: z.number().int(),
    cursor: z.number().int(),
    bytes: z.number().int().describe("bytes of the peer's answers this sync read"),
  })
  .meta({ id: "MeshSyncResult" });
export type MeshSyncResult = z.output<typeof meshSyncResult>;

/** A peer as another peer names it. */
const meshPeerRef = z.object({ instance_id: z.string(), name: z.string(), url: z.string() });

export const meshGossip = z
  .object({
    instance_id: z.string(),
    name: z.string(),
    url: z.string(),
    version: z.string(),
    peers: z.array(meshPeerRef).describe("linked peers that share a project with the token"),
    grant: z
      .object({ projects: z.array(z.string()), include_global: z.boolean() })
      .nullable()
      .describe("what the presenting mesh token grants (a new link's default projects); null for the owner"),
  })
  .meta({ id: "MeshGossip" });
export type MeshGossip = z.output<typeof meshGossip>;

/** What the answering side of a handshake made: never a secret, and nothing of its own state beyond the link's scope. */
export const meshHandshakeResult = z
  .object({
    instance_id: z.string().describe("the answering instance"),
    name: z.string(),
    link_id: z.uuid().describe("its link back to the caller"),
    projects: z.array(projectMapping).describe("the caller's projects (remote) it pulls, and where they land (local)"),
    created: z.boolean().describe("false: a link to the caller existed; its token and url were replaced"),
  })
  .meta({ id: "MeshHandshakeResult" });
export type MeshHandshakeResult = z.output<typeof meshHandshakeResult>;

export const meshDiscovered = z
  .object({
    instance_id: z.string(),
    name: z.string(),
    url: z.string(),
    via: z.string().describe('"mdns" or "gossip:<instance id>"'),
    last_seen_at: timestamp,
    linked: z.boolean(),
  })
  .meta({ id: "MeshDiscovered" });
export type MeshDiscovered = z.output<typeof meshDiscovered>;
