import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Credentials, TestServer } from "./server.js";

/** An MCP client over Streamable HTTP to the server's /mcp, authenticated as `as`. */
export async function mcpClient(server: TestServer, as: Credentials): Promise<Client> {
  const client = new Client({ name: "cairn-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", server.url), {
    requestInit: { headers: { "X-Agent-ID": as.agentId, "X-API-Key": as.apiKey } },
  });
  await client.connect(transport);
  return client;
}

export interface ToolCall<T> {
  isError: boolean;
  structured: T;
  text: string;
}

/** Calls a tool and returns its structured content and text. */
export async function callTool<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolCall<T>> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return {
    isError: result.isError === true,
    structured: result.structuredContent as T,
    text: content.map((part) => part.text ?? "").join(""),
  };
}

/** Starts a stdio server as a host would from its configuration, and asks it who the agent is. */
export async function agentOverStdio(server: StdioServerParameters): Promise<string> {
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ ...server, stderr: "pipe" }));
  try {
    return (await callTool<{ agent_id: string }>(client, "agent_me")).structured.agent_id;
  } finally {
    await client.close();
  }
}
