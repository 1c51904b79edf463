// How the peers benchmark talks to each system: one MCP client over stdio (the official SDK's
// Client on StdioClientTransport, as an agent host runs it), or Cairn's REST routes. Used by the
// benchmark itself and by each of its concurrent writer processes.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { packageRoot } from "../src/core/paths.js";
import { HttpClient, type Credentials } from "./lib.js";

export const SYSTEMS = ["reference", "keeper", "cairn-mcp", "cairn-rest"] as const;
export type SystemName = (typeof SYSTEMS)[number];

export const SYSTEM_TITLES: Record<SystemName, string> = {
  reference: "reference memory server (@modelcontextprotocol/server-memory)",
  keeper: "mcp-memory-keeper",
  "cairn-mcp": "Cairn over MCP (stdio bridge)",
  "cairn-rest": "Cairn over REST",
};

/** Where a writer or the benchmark finds the system: a peer's data path, or Cairn's URL and an agent. */
export interface Target {
  system: SystemName;
  /** The reference server's JSON Lines file, or memory-keeper's DATA_DIR. */
  dataPath?: string;
  url?: string;
  agent?: Credentials;
}

export interface Connection {
  /** Writes one note; resolves to the key it was acknowledged under (an entity name, an item key, an entry id). */
  write(index: number, content: string): Promise<string>;
  search(query: string, semantic?: boolean): Promise<void>;
  /** The process that answers (the peer server, or Cairn's stdio bridge); null over REST. */
  pid: number | null;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
/** A package's file, resolved from its package.json, so nothing depends on how the package is laid out at the top. */
const packageFile = (name: string, file: string): string => join(dirname(require.resolve(`${name}/package.json`)), file);

/** The command each system's host runs, with only the environment it needs; all data under the benchmark's temp directory. */
function stdioServer(target: Target): { command: string; args: string[]; env: Record<string, string>; cwd?: string } {
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
  switch (target.system) {
    case "reference":
      return { command: process.execPath, args: [packageFile("@modelcontextprotocol/server-memory", "dist/index.js")], env: { ...base, MEMORY_FILE_PATH: target.dataPath ?? "" } };
    case "keeper":
      // The server itself, not its bin wrapper (which only sets DATA_DIR and starts it as a second process).
      // Its git integration looks at the working directory: the data directory has no repository.
      return {
        command: process.execPath,
        args: [packageFile("mcp-memory-keeper", "dist/index.js")],
        env: { ...base, DATA_DIR: target.dataPath ?? "", HOME: target.dataPath ?? "" },
        cwd: target.dataPath ?? "",
      };
    case "cairn-mcp":
      return {
        command: process.execPath,
        args: [join(packageRoot, "dist", "src", "cli.js"), "mcp"],
        env: { ...base, CAIRN_URL: target.url ?? "", CAIRN_AGENT_ID: target.agent?.agentId ?? "", CAIRN_API_KEY: target.agent?.apiKey ?? "" },
      };
    case "cairn-rest":
      throw new Error("REST has no stdio server");
  }
}

const textOf = (result: Record<string, unknown>): string => ((result.content ?? []) as { text?: string }[]).map((part) => part.text ?? "").join("");

async function mcpConnection(target: Target): Promise<Connection> {
  // Cairn's bridge says on stderr why it could not connect; the peers' servers log every start there.
  const transport = new StdioClientTransport({ ...stdioServer(target), stderr: target.system === "cairn-mcp" ? "inherit" : "ignore" });
  const client = new Client({ name: "cairn-peers-bench", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${textOf(result)}`);
    return (result.structuredContent ?? {}) as Record<string, unknown>;
  };
  const write = async (index: number, content: string): Promise<string> => {
    switch (target.system) {
      case "reference": {
        const name = `note-${process.pid}-${index}`;
        await call("create_entities", { entities: [{ name, entityType: "note", observations: [content] }] });
        return name;
      }
      case "keeper": {
        const key = `note-${process.pid}-${index}`;
        await call("context_save", { key, value: content, category: "note" });
        return key;
      }
      default: {
        const written = await call("memory_write", { content });
        if (typeof written.id !== "string") throw new Error("memory_write answered without an id");
        return written.id;
      }
    }
  };
  const search = async (query: string, semantic = false): Promise<void> => {
    if (target.system === "reference") await call("search_nodes", { query });
    else if (target.system === "keeper") await call(semantic ? "context_semantic_search" : "context_search", semantic ? { query, topK: 10 } : { query, limit: 10 });
    else await call("memory_search", { q: query, limit: 10 });
  };
  return { write, search, pid: transport.pid, close: () => client.close() };
}

function restConnection(target: Target): Connection {
  const http = new HttpClient(target.url ?? "", 1);
  const agent = target.agent as Credentials;
  return {
    async write(_index, content) {
      const reply = await http.post("/memory", { content }, agent);
      if (reply.status !== 201 && reply.status !== 200) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
      return (JSON.parse(reply.body) as { id: string }).id;
    },
    async search(query) {
      const reply = await http.get(`/memory/search?q=${encodeURIComponent(query)}&limit=10`, agent);
      if (reply.status !== 200) throw new Error(`GET /memory/search: ${reply.status} ${reply.body}`);
    },
    pid: null,
    close: () => Promise.resolve(http.close()),
  };
}

export const connect = (target: Target): Promise<Connection> =>
  target.system === "cairn-rest" ? Promise.resolve(restConnection(target)) : mcpConnection(target);

/** The entity names a fresh reference server reads from its file (read_graph), as the next session would see them. */
export async function referenceNames(dataPath: string): Promise<Set<string>> {
  const transport = new StdioClientTransport({ ...stdioServer({ system: "reference", dataPath }), stderr: "ignore" });
  const client = new Client({ name: "cairn-peers-bench", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "read_graph", arguments: {} });
    const graph = (result.structuredContent ?? JSON.parse(textOf(result))) as { entities?: { name: string }[] };
    return new Set((graph.entities ?? []).map((entity) => entity.name));
  } finally {
    await client.close();
  }
}
