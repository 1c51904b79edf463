import type { MemoryRow } from "./memory.js";
import { rowColumns } from "./row-columns.js";
import type { Reader, Tx } from "./store.js";

/** A token this instance granted a peer (CONTRACT §16). The secret itself is never stored, only its SHA-256. */
export interface MeshTokenRow {
  pk: number;
  id: string;
  label: string;
  /** Hex SHA-256 of the token. */
  token_hash: string;
  /** The token's first characters, to tell tokens apart in a list. */
  prefix: string;
  /** JSON array of project ids. */
  projects: string;
  include_global: number;
  /** JSON array: "pull" plus any of "handshake", "feed", "gossip". */
  capabilities: string;
  expires_at: string | null;
  revoked_at: string | null;
  /** The link it was minted for (`direction: "both"`), revoked with it. */
  link_id: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

export const MESH_TOKEN_ROW_COLUMNS = rowColumns<MeshTokenRow>("mesh_tokens", {
  pk: true, id: true, label: true, token_hash: true, prefix: true, projects: true, include_global: true, capabilities: true, expires_at: true,
  revoked_at: true, link_id: true, created_by: true, created_at: true, updated_at: true, last_used_at: true,
});

export type NewMeshTokenRow = Omit<MeshTokenRow, "pk" | "revoked_at" | "last_used_at">;
export type MeshTokenPatch = { [K in "label" | "projects" | "include_global" | "capabilities" | "expires_at" | "updated_at"]?: MeshTokenRow[K] | undefined };

type MeshLinkStatus = "active" | "failing" | "unauthorized";

/** A link to a peer whose feed this instance pulls. The peer's token is kept sealed (AES-256-GCM). */
export interface MeshLinkRow {
  pk: number;
  id: string;
  peer_instance_id: string;
  peer_name: string;
  url: string;
  label: string | null;
  /** JSON array of `{remote, local}`: which of the peer's projects land in which local one. */
  projects: string;
  direction: "pull" | "both";
  interval_seconds: number;
  max_confidence: number;
  paused: number;
  /** Without the pause: what the last syncs came to. */
  status: MeshLinkStatus;
  /** Syncs failed in a row. */
  failures: number;
  last_sync_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  /** The peer's change_seq every change up to which has been applied. */
  cursor: number;
  token_sealed: string;
  /** The token's prefix and last characters, enough to recognise it, never to use it. */
  token_hint: string;
  /** The token minted for the peer when the link was made both ways. */
  minted_token_id: string | null;
  applied_total: number;
  rejected_total: number;
  /** Items of projects the link does not map. */
  dropped_total: number;
  next_sync_at: string;
  anti_entropy_at: string;
  lease_until: string | null;
  lease_holder: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export const MESH_LINK_ROW_COLUMNS = rowColumns<MeshLinkRow>("mesh_links", {
  pk: true, id: true, peer_instance_id: true, peer_name: true, url: true, label: true, projects: true, direction: true, interval_seconds: true,
  max_confidence: true, paused: true, status: true, failures: true, last_sync_at: true, last_success_at: true, last_error: true, cursor: true,
  token_sealed: true, token_hint: true, minted_token_id: true, applied_total: true, rejected_total: true, dropped_total: true, next_sync_at: true,
  anti_entropy_at: true, lease_until: true, lease_holder: true, created_by: true, created_at: true, updated_at: true,
});

export type NewMeshLinkRow = Omit<MeshLinkRow, "pk" | "lease_until" | "lease_holder">;
type LinkPatchable =
  | "peer_name" | "url" | "label" | "projects" | "interval_seconds" | "max_confidence" | "paused" | "status" | "failures" | "last_sync_at"
  | "last_success_at" | "last_error" | "cursor" | "token_sealed" | "token_hint" | "minted_token_id" | "next_sync_at" | "anti_entropy_at" | "updated_at";
export type MeshLinkPatch = { [K in LinkPatchable]?: MeshLinkRow[K] | undefined };

/** What a sync adds to a link's running counts. */
export interface MeshLinkCounts {
  applied: number;
  rejected: number;
  dropped: number;
}

export interface MeshDiscoveredRow {
  instance_id: string;
  name: string;
  url: string;
  /** "mdns" or "gossip:<instance id>". */
  via: string;
  last_seen_at: string;
}

export const MESH_DISCOVERED_ROW_COLUMNS = rowColumns<MeshDiscoveredRow>("mesh_discovered", {
  instance_id: true, name: true, url: true, via: true, last_seen_at: true,
});

export interface MeshSuppressionRow {
  memory_id: string;
  origin: string;
  version: number;
  suppressed_by: string;
  suppressed_at: string;
}

export const MESH_SUPPRESSION_ROW_COLUMNS = rowColumns<MeshSuppressionRow>("mesh_suppressions", {
  memory_id: true, origin: true, version: true, suppressed_by: true, suppressed_at: true,
});

/** An entry as a sync compares an incoming copy with it (deleted ones included). */
export type HeldEntry = MemoryRow & { origin: string | null };

/** Mesh tokens, links (with their sync schedule and claims), discovered peers and suppressions. */
export interface MeshStore {
  insertToken(tx: Tx, row: NewMeshTokenRow): Promise<number>;
  tokenById(r: Reader, id: string): Promise<MeshTokenRow | undefined>;
  tokenByHash(r: Reader, hash: string): Promise<MeshTokenRow | undefined>;
  /** Tokens by creation, after row key `afterPk` (revoked ones included: they say when). */
  listTokens(r: Reader, afterPk: number, limit: number): Promise<MeshTokenRow[]>;
  patchToken(tx: Tx, pk: number, patch: MeshTokenPatch): Promise<void>;
  /** Revokes the token now (once: false when it already was). */
  revokeToken(tx: Tx, pk: number, at: string): Promise<boolean>;
  /** Notes a use, at most once per `interval` of `at` (a read stays a read most of the time). */
  touchToken(tx: Tx, pk: number, at: string, notBefore: string): Promise<void>;
  countLiveTokens(r: Reader): Promise<number>;

  insertLink(tx: Tx, row: NewMeshLinkRow): Promise<number>;
  linkById(r: Reader, id: string): Promise<MeshLinkRow | undefined>;
  linkByPeer(r: Reader, peerInstanceId: string): Promise<MeshLinkRow | undefined>;
  listLinks(r: Reader, afterPk: number, limit: number): Promise<MeshLinkRow[]>;
  countLinks(r: Reader): Promise<number>;
  patchLink(tx: Tx, pk: number, patch: MeshLinkPatch): Promise<void>;
  deleteLink(tx: Tx, pk: number): Promise<boolean>;
  /** Leases up to `limit` links whose sync is due and that no live lease holds (skipping rows another claim holds). */
  claimDueLinks(tx: Tx, nowIso: string, holder: string, leaseUntil: string, limit: number): Promise<MeshLinkRow[]>;
  /** Leases one link for a sync on request, unless another sync holds it. */
  claimLink(tx: Tx, pk: number, nowIso: string, holder: string, leaseUntil: string): Promise<MeshLinkRow | undefined>;
  /** Moves `holder`'s lease on (a long run keeps its link). False when the lease was lost. */
  extendLease(tx: Tx, pk: number, holder: string, leaseUntil: string): Promise<boolean>;
  /** Records a page applied: the cursor, and the counts; false when `holder` no longer holds the link. */
  advanceCursor(tx: Tx, pk: number, holder: string, cursor: number, counts: MeshLinkCounts): Promise<boolean>;
  /** Ends `holder`'s lease with the run's outcome; false when the lease was lost. */
  finishSync(tx: Tx, pk: number, holder: string, patch: MeshLinkPatch): Promise<boolean>;

  upsertDiscovered(tx: Tx, row: MeshDiscoveredRow): Promise<void>;
  discoveredById(r: Reader, instanceId: string): Promise<MeshDiscoveredRow | undefined>;
  /** Most recently seen first. */
  listDiscovered(r: Reader, limit: number): Promise<MeshDiscoveredRow[]>;
  /** Forgets peers not seen since `before`, and all but the `keep` most recently seen. */
  pruneDiscovered(tx: Tx, before: string, keep: number): Promise<number>;
  /** Those of `peerInstanceIds` a link exists to. */
  linkedPeers(r: Reader, peerInstanceIds: readonly string[]): Promise<Set<string>>;

  /** The suppressions of those of `ids` that have one. */
  suppressions(r: Reader, ids: readonly string[]): Promise<Map<string, MeshSuppressionRow>>;
  suppress(tx: Tx, row: MeshSuppressionRow): Promise<void>;
  unsuppress(tx: Tx, memoryId: string): Promise<void>;

  /** The entries (live or deleted, of any scope) with these ids; in a transaction, locked until it ends where transactions overlap. */
  heldEntries(r: Reader, ids: readonly string[]): Promise<Map<string, HeldEntry>>;
  /** Sets an entry's origin (a copy's: the instance it was written on). */
  setOrigin(tx: Tx, pk: number, origin: string): Promise<void>;
}
