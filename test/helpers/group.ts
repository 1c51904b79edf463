import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { cliEnv, startServe, type ServeProcess } from "./cli.js";
import { databaseUrlFor } from "./database.js";
import { request, tempDir, type Credentials, type RequestOptions, type Response, type TestServer } from "./server.js";

export type Get = <T = unknown>(path: string, options?: RequestOptions) => Promise<Response<T>>;

/**
 * Servers that share one database: one in-process test server (whose PostgreSQL pool overlaps
 * transactions as separate servers would), or several `cairn serve` processes. Race scenarios are
 * written once against this and run on both.
 */
export interface Cluster {
  readonly size: number;
  readonly owner: Credentials;
  /** Requests to server `index` (taken modulo the size, so scenarios spread over whatever there is). */
  on(index: number): Get;
  /** A self-registered agent, through server `index`. */
  agent(id: string, index?: number): Promise<Credentials>;
}

export const clusterOf = (server: TestServer): Cluster => ({
  size: 1,
  owner: server.owner,
  on: () => (path, options) => server.request(path, options),
  agent: (id) => server.agent(id),
});

export interface Group extends Cluster {
  servers: ServeProcess[];
  /** The first server's data directory: `withDatabase` reaches the group's database through it. */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * `count` serve processes on one database. The first bootstraps it and writes credentials.json;
 * the others get a data directory of their own with a copy of it (as docs/operations.md tells an
 * operator to do), and the first one's DATABASE_URL.
 */
export async function startGroup(count: number, env: (index: number) => Record<string, string> = () => ({})): Promise<Group> {
  const first = tempDir();
  const databaseUrl = databaseUrlFor(first) as string;
  const servers = [await startServe(cliEnv(first, env(0)))];
  const credentials = readFileSync(join(first, "credentials.json"), "utf8");
  const secretKey = readFileSync(join(first, "secret.key"));
  servers.push(
    ...(await Promise.all(
      Array.from({ length: count - 1 }, (_, offset) => {
        const dir = tempDir();
        writeFileSync(join(dir, "credentials.json"), credentials, { mode: 0o600 });
        writeFileSync(join(dir, "secret.key"), secretKey, { mode: 0o600 });
        return startServe(cliEnv(dir, { ...env(offset + 1), DATABASE_URL: databaseUrl }));
      }),
    )),
  );
  const human = (JSON.parse(credentials) as { agents: Record<string, { agent_id: string; api_key: string }> }).agents.human;
  const on =
    (index: number): Get =>
    (path, options) =>
      request((servers[index % servers.length] as ServeProcess).url, path, options);
  return {
    size: count,
    servers,
    dataDir: first,
    owner: { agentId: human?.agent_id ?? "", apiKey: human?.api_key ?? "" },
    on,
    async agent(id, index = 0) {
      const response = await on(index)<{ agent_id: string; api_key: string }>("/agents/self-register", { body: { agent_id: id } });
      if (response.status !== 201) throw new Error(`self-register ${id}: ${response.status} ${response.text}`);
      return { agentId: response.body.agent_id, apiKey: response.body.api_key };
    },
    async stop() {
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}

export interface EventRecord {
  seq: number;
  type: string;
  agent_id: string;
  payload: Record<string, unknown>;
}

/** Every event `as` may see after `afterSeq`, read page by page from one server's log. */
export async function eventsAfter(get: Get, as: Credentials, afterSeq: number, type?: string): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  for (let since = afterSeq; ; ) {
    const filter = type === undefined ? "" : `&type=${encodeURIComponent(type)}`;
    const page = await get<EventRecord[]>(`/events?since=seq:${since}&limit=500${filter}`, { as });
    expect(page.status).toBe(200);
    all.push(...page.body);
    const last = page.body.at(-1);
    if (!last || page.body.length < 500) return all;
    since = last.seq;
  }
}
