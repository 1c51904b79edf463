import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { open, readSecretKey, secretKeyPath } from "../../src/core/secret-box.js";
import { cliEnv, startServe, type CliRun, type ServeProcess } from "./cli.js";
import { withDatabase } from "./database.js";
import { request, tempDir, type Credentials, type RequestOptions, type Response } from "./server.js";

/**
 * Real `cairn serve` instances on loopback, each with its own data directory and database (on
 * PostgreSQL a database of its own each), linked to each other the way an owner would: for the
 * mesh's tests (CONTRACT §16).
 */

export interface Peer {
  /** INSTANCE_NAME. */
  name: string;
  url: string;
  instanceId: string;
  dataDir: string;
  owner: Credentials;
  process: ServeProcess;
  request<T = unknown>(path: string, options?: RequestOptions): Promise<Response<T>>;
  /** As the owner. */
  asOwner<T = unknown>(path: string, options?: Omit<RequestOptions, "as">): Promise<Response<T>>;
  /** With a mesh token as bearer. */
  withToken<T = unknown>(token: string, path: string, options?: Omit<RequestOptions, "as">): Promise<Response<T>>;
  /** A self-registered agent. */
  agent(agentId: string): Promise<Credentials>;
  /** What its processes wrote to stdout and stderr so far (its log lines are on stderr). */
  output(): string;
  /** Stops the process (SIGTERM), keeping its data: `start()` brings it back. */
  stop(): Promise<CliRun>;
  /** Starts it again on the same data directory, database and port (so peers' links still reach it). */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  close(): Promise<void>;
}

export interface MeshTokenCreated {
  id: string;
  token: string;
  projects: string[];
  capabilities: string[];
  link_id: string | null;
}

export interface MeshLink {
  id: string;
  peer_instance_id: string;
  peer_name: string;
  url: string;
  projects: { remote: string; local: string }[];
  direction: "pull" | "both";
  status: string;
  token_hint: string;
  created_by: string;
}

async function startPeer(name: string, env: Record<string, string> = {}): Promise<Peer> {
  const dataDir = tempDir("cairn-mesh-");
  let serve = await startServe(cliEnv(dataDir, { INSTANCE_NAME: name, ...env }));
  // Every earlier run's output, so a restarted peer's log still holds what it wrote before.
  let earlier = "";
  const url = serve.url;
  const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as { agents: Record<string, { agent_id: string; api_key: string }> };
  const human = credentials.agents.human;
  if (!human) throw new Error("no owner credentials");
  const owner = { agentId: human.agent_id, apiKey: human.api_key };
  const health = await request<{ instance_id: string }>(url, "/health");
  const peer: Peer = {
    name,
    url,
    instanceId: health.body.instance_id,
    dataDir,
    owner,
    process: serve,
    request: (path, options) => request(url, path, options),
    asOwner: (path, options) => request(url, path, { ...options, as: owner }),
    withToken: (token, path, options) => request(url, path, { ...options, headers: { ...options?.headers, authorization: `Bearer ${token}` } }),
    async agent(agentId) {
      const response = await request<{ agent_id: string; api_key: string }>(url, "/agents/self-register", { body: { agent_id: agentId } });
      if (response.status !== 201) throw new Error(`self-register ${agentId}: ${response.status} ${response.text}`);
      return { agentId: response.body.agent_id, apiKey: response.body.api_key };
    },
    output: () => earlier + serve.output.stdout + serve.output.stderr,
    stop: () => serve.stop(),
    async start() {
      await serve.stop();
      earlier += serve.output.stdout + serve.output.stderr;
      // The same port, so the URL its peers hold still reaches it.
      serve = await startServe(cliEnv(dataDir, { INSTANCE_NAME: name, ...env, PORT: new URL(url).port }));
      peer.process = serve;
    },
    async close() {
      await serve.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return peer;
}

/** `n` instances named peer-a, peer-b, … started side by side. */
export function startPeers(n: number, env: Record<string, string> = {}): Promise<Peer[]> {
  return Promise.all(Array.from({ length: n }, (_, index) => startPeer(`peer-${String.fromCharCode(97 + index)}`, env)));
}

/** Creates the projects on `peer` that it lacks (as its owner). */
export async function ensureProjects(peer: Peer, projects: readonly string[]): Promise<void> {
  for (const name of projects) {
    const created = await peer.asOwner("/projects", { body: { name } });
    if (created.status !== 409) expect(created.status, created.text).toBe(201);
  }
}

/** A token minted on `peer` by its owner (pull, handshake and gossip unless `capabilities` says). */
export async function mintToken(peer: Peer, projects: readonly string[], options: { capabilities?: string[]; include_global?: boolean; label?: string } = {}): Promise<MeshTokenCreated> {
  await ensureProjects(peer, projects);
  const response = await peer.asOwner<MeshTokenCreated>("/mesh/tokens", {
    body: { label: options.label ?? `for tests ${projects.join(",")}`, projects, capabilities: options.capabilities ?? ["pull", "handshake", "gossip"], ...(options.include_global === undefined ? {} : { include_global: options.include_global }) },
  });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

export type Mapping = readonly (string | { remote: string; local: string })[];

export interface Linked {
  /** `a`'s link to `b`. */
  link: MeshLink;
  /** `b`'s link back to `a` (direction both), made by the handshake. */
  back: MeshLink | null;
  /** The token `b` minted for `a`. */
  token: MeshTokenCreated;
}

/**
 * Links `a` to `b` as an owner would: `b`'s owner mints a token for `b`'s side of `projects`, `a`'s
 * owner links with it (projects created on both sides first). `projects`: ids the same on both
 * sides, or `{remote (b's), local (a's)}`.
 */
export async function linkPeers(a: Peer, b: Peer, projects: Mapping, direction: "pull" | "both" = "both"): Promise<Linked> {
  const remote = projects.map((item) => (typeof item === "string" ? item : item.remote));
  const local = projects.map((item) => (typeof item === "string" ? item : item.local));
  await ensureProjects(a, local);
  const token = await mintToken(b, remote);
  const response = await a.asOwner<MeshLink>("/mesh/peers", { body: { url: b.url, token: token.token, projects, direction } });
  expect(response.status, response.text).toBe(201);
  const back = direction === "both" ? ((await linksOf(b)).find((link) => link.peer_instance_id === a.instanceId) ?? null) : null;
  if (direction === "both") expect(back, "the link back").not.toBeNull();
  return { link: response.body, back, token };
}

export async function linksOf(peer: Peer): Promise<MeshLink[]> {
  const response = await peer.asOwner<MeshLink[]>("/mesh/peers?limit=200");
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** Removes every link of every peer (a test's links do not outlive it). */
export async function unlinkAll(peers: readonly Peer[]): Promise<void> {
  for (const peer of peers) {
    for (const link of await linksOf(peer)) expect((await peer.asOwner(`/mesh/peers/${link.id}`, { method: "DELETE" })).status).toBe(204);
  }
}

/** The token `peer` holds for its link `linkId`, opened with its secret key: what the peer sends, seen from outside. */
export async function heldToken(peer: Peer, linkId: string): Promise<string> {
  const row = await withDatabase(peer.dataDir, (db) => db.get<{ token_sealed: string }>("SELECT token_sealed FROM mesh_links WHERE id = ?", linkId));
  if (!row) throw new Error(`no link ${linkId}`);
  const token = open(readSecretKey(secretKeyPath(peer.dataDir)), row.token_sealed);
  if (token === null) throw new Error("the sealed token does not open");
  return token;
}
