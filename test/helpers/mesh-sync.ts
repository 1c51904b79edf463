import { expect } from "vitest";
import type { Credentials, Response, TestServer } from "./server.js";
import { eventually } from "./wait.js";

// Two or three real servers linked by the mesh routes, as an owner links them (CONTRACT §16).

export interface Peer {
  url: string;
  owner: Credentials;
  dataDir: string;
  request: TestServer["request"];
}

export interface SyncResult {
  pages: number;
  applied: number;
  skipped: number;
  rejected: number;
  tombstones: number;
  duration_ms: number;
  cursor: number;
  bytes: number;
}

export interface Link {
  id: string;
  peer_instance_id: string;
  peer_name: string;
  status: string;
  cursor: number;
  last_error: string | null;
  last_sync_at: string | null;
}

export interface Entry {
  id: string;
  type: string;
  agent_id: string;
  project: string | null;
  scope: string;
  content: string;
  confidence: number;
  version: number;
  tags: string[];
  source: { kind: string; origin?: string; origin_name?: string; link_id?: string } | null;
}

const ok = <T>(response: Response<T>, status: number, what: string): T => {
  expect(response.status, `${what}: ${response.text}`).toBe(status);
  return response.body;
};

/** A project on each server (the same id both sides). */
export async function createProject(peer: Peer, name: string): Promise<void> {
  const created = await peer.request("/projects", { as: peer.owner, body: { name } });
  expect([201, 409], created.text).toContain(created.status);
}

/** A pull token minted on `peer` for `projects`. */
export async function mintToken(peer: Peer, projects: string[], capabilities: string[] = ["pull", "gossip", "handshake"], includeGlobal = false): Promise<string> {
  const body = ok(
    await peer.request<{ token: string }>("/mesh/tokens", { as: peer.owner, body: { label: "test", projects, capabilities, include_global: includeGlobal } }),
    201,
    "mint a token",
  );
  return body.token;
}

/** `from` links to `to` with a token `to` minted; returns `from`'s link. */
export async function link(from: Peer, to: Peer, projects: string[], direction: "pull" | "both" = "pull", token?: string, intervalSeconds?: number): Promise<Link> {
  const secret = token ?? (await mintToken(to, projects));
  const body = { url: to.url, token: secret, projects, direction, interval_seconds: intervalSeconds };
  return ok(await from.request<Link>("/mesh/peers", { as: from.owner, body }), 201, "link");
}

/**
 * A pull link only the test syncs: a new link is due at once, so the scheduler's first sync of it
 * is waited out, and the next is a day away. A test counting what its own sync applied needs this,
 * or the scheduler may have applied it first (or hold the link: 409).
 */
export async function quietLink(from: Peer, to: Peer, projects: string[], token?: string): Promise<Link> {
  return firstSynced(from, (await link(from, to, projects, "pull", token, 86_400)).id);
}

/** The link once the scheduler's first sync of it has ended. */
export async function firstSynced(peer: Pick<Peer, "owner" | "request">, linkId: string): Promise<Link> {
  let shown: Link | undefined;
  const synced = await eventually(async () => {
    shown = (await links(peer)).find((item) => item.id === linkId);
    return typeof shown?.last_sync_at === "string";
  }, 30_000);
  expect(synced, `the scheduler's first sync of ${JSON.stringify(shown)}`).toBe(true);
  return shown as Link;
}

export async function syncNow(peer: Peer, linkId: string, antiEntropy = false): Promise<SyncResult> {
  const query = antiEntropy ? "?anti_entropy=true" : "";
  return ok(await peer.request<SyncResult>(`/mesh/peers/${linkId}/sync${query}`, { as: peer.owner, method: "POST" }), 200, "sync");
}

export async function links(peer: Pick<Peer, "owner" | "request">): Promise<Link[]> {
  return ok(await peer.request<Link[]>("/mesh/peers", { as: peer.owner }), 200, "list links");
}

export async function write(peer: Peer, as: Credentials, body: Record<string, unknown>): Promise<Entry> {
  return ok(await peer.request<Entry>("/memory", { as, body }), 201, "write");
}

/** Every entry of a project the owner sees (one page of up to 500). */
export async function entries(peer: Peer, project: string, query = ""): Promise<Entry[]> {
  return ok(await peer.request<Entry[]>(`/memory?project=${project}&limit=500${query}`, { as: peer.owner }), 200, "list");
}

export async function merkleRoot(peer: Peer, project: string): Promise<string> {
  return ok(await peer.request<{ root: string }>(`/memory/merkle?project=${project}`, { as: peer.owner }), 200, "merkle").root;
}

export async function instanceId(peer: Peer): Promise<string> {
  return ok(await peer.request<{ instance_id: string }>("/health"), 200, "health").instance_id;
}
