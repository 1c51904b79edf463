import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * What a Streamable HTTP server may do that Cairn's own `/mcp` does not, for the stdio bridge to
 * be held to it: an SDK `McpServer` on loopback that answers calls with event streams (the
 * messages of a call before its answer), keeps its events so a dropped stream resumes from
 * Last-Event-ID (a call's too: `pause` ends its own stream midway), and can drop a call's connection. It takes one agent's key, as Cairn does.
 */
export interface StreamingUpstream {
  url: string;
  /** Every request to /mcp, in the order they came. */
  requests: { method: string; headers: IncomingHttpHeaders }[];
  /** A log message the server sends unasked, on the session's GET stream. */
  notify(text: string): Promise<void>;
  /** Ends the session's GET stream from the server's side. */
  dropStream(): void;
  close(): Promise<void>;
}

/** Every event the server sent, numbered: a resumed stream gets those of its stream after the id it names. */
function eventStore(): EventStore {
  const events: { streamId: string; message: JSONRPCMessage }[] = [];
  return {
    storeEvent: (streamId, message) => Promise.resolve(String(events.push({ streamId, message }))),
    replayEventsAfter: async (lastEventId, { send }) => {
      const streamId = events[Number(lastEventId) - 1]?.streamId;
      if (streamId === undefined) return "";
      for (let index = Number(lastEventId); index < events.length; index++) {
        const event = events[index];
        if (event?.streamId === streamId) await send(String(index + 1), event.message);
      }
      return streamId;
    },
  };
}

export async function startStreamingUpstream(agent: { agentId: string; apiKey: string }): Promise<StreamingUpstream> {
  const requests: StreamingUpstream["requests"] = [];
  let session: { server: McpServer; transport: StreamableHTTPServerTransport } | undefined;

  const open = async (): Promise<StreamableHTTPServerTransport> => {
    const server = new McpServer({ name: "streaming-upstream", version: "1.0.0" }, { capabilities: { logging: {} } });
    server.registerTool("steps", { description: "Logs one, two, three, then answers done" }, async (extra) => {
      for (const step of ["one", "two", "three"]) await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: step } });
      return { content: [{ type: "text", text: "done" }] };
    });
    server.registerTool("pause", { description: "Logs, ends its event stream, logs again, then answers resumed" }, async (extra) => {
      await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "before the pause" } });
      extra.closeSSEStream?.();
      await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "after the pause" } });
      return { content: [{ type: "text", text: "resumed" }] };
    });
    server.registerTool("vanish", { description: "Its connection is cut before any answer" }, () => ({ content: [] }));
    // A short retry: the bridge comes back within the test's patience.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), eventStore: eventStore(), retryInterval: 100 });
    await server.connect(transport);
    session = { server, transport };
    return transport;
  };

  const http = createServer((request, response) => {
    void (async () => {
      const known = request.headers["x-agent-id"] === agent.agentId && request.headers["x-api-key"] === agent.apiKey;
      if (request.url === "/agents/me") {
        response.writeHead(known ? 200 : 401, { "content-type": "application/json" }).end(JSON.stringify(known ? { agent_id: agent.agentId } : { code: "UNAUTHENTICATED" }));
        return;
      }
      if (request.url !== "/mcp") return void response.writeHead(404).end();
      requests.push({ method: request.method ?? "", headers: request.headers });
      if (!known) return void response.writeHead(401).end();
      let body: unknown;
      if (request.method === "POST") {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const call = body as { method?: string; params?: { name?: string } };
        if (call.method === "tools/call" && call.params?.name === "vanish") return void request.socket.destroy();
      }
      const transport = session && request.headers["mcp-session-id"] !== undefined ? session.transport : await open();
      await transport.handleRequest(request, response, body);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    notify: async (text) => {
      await session?.server.server.notification({ method: "notifications/message", params: { level: "info", data: text } });
    },
    dropStream: () => session?.transport.closeStandaloneSSEStream(),
    close: async () => {
      await session?.server.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
