import { randomUUID } from "node:crypto";
import type { Request, Response } from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Role } from "../wire/roles.js";
import { AppError, invalid } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import type { Caller, OperationGateway } from "../../tools/gateway.js";
import { callTool, mcpTools, TOOLSET_HEADER, TOOLSETS, type McpTool, type Toolset } from "./tools.js";
import { SERVER_INSTRUCTIONS } from "./instructions.js";
import { SessionResources } from "./resources.js";
import { sendRpcError, unknownName } from "./protocol-errors.js";
import type { HostPolicy } from "../http/hosts.js";
import { presentedBearer } from "../http/challenges.js";

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  agentId: string;
  /** Refreshed on every request: roles can change while a session lives. */
  caller: Caller;
  lastUsed: number;
}

export const MAX_SESSIONS_PER_AGENT = 32;
/** JSON-RPC's server-defined range, as the SDK's transport answers its own HTTP-level refusals. */
const FORBIDDEN_CODE = -32000;

export interface McpChallenges {
  /** A 401's: `invalidToken` when the request presented a bearer token that was refused. */
  unauthenticated(invalidToken: boolean): string;
  /** A 403's for a token short of the scope a tool needs. */
  insufficientScope(description: string): string;
}
const IDLE_MS = 30 * 60_000;

/**
 * `/mcp`: MCP over Streamable HTTP. Every request authenticates like REST (no credentials, no
 * identity: 401), and a session belongs to the agent that opened it — anyone else presenting its
 * id gets 404, as for a session that does not exist.
 */
export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();
  /** Per role and tool set: a session lists only the tools its agent may call. */
  private readonly toolsByRole = new Map<string, McpTool[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly gateway: OperationGateway,
    private readonly hosts: HostPolicy,
    /** The WWW-Authenticate values: a 401's points MCP clients at the OAuth metadata. */
    private readonly challenges: McpChallenges,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), 60_000);
    this.sweeper.unref();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  readonly handle = async (request: Request, response: Response): Promise<void> => {
    // The Host was checked for every route; MCP asks for the Origin too. Local tools (an inspector
    // on another loopback port) are allowed, like any host this server answers to.
    const origin = request.get("origin");
    if (origin !== undefined && !this.hosts.allowsOrigin(origin)) throw new AppError("FORBIDDEN", "origin not allowed");
    const credentials = { agentId: request.get("x-agent-id"), apiKey: request.get("x-api-key"), authorization: request.get("authorization") };
    let caller: Caller;
    try {
      caller = await this.gateway.authenticate({ ...credentials, address: request.socket.remoteAddress });
    } catch (error) {
      if (error instanceof AppError && error.code === "UNAUTHENTICATED") {
        response.status(401).set("WWW-Authenticate", this.challenges.unauthenticated(presentedBearer(credentials))).json(error.toBody());
        return;
      }
      throw error;
    }
    // A peer's token reads the feed routes and nothing else; MCP is for agents.
    this.gateway.refuseMeshCaller(caller);
    const sessionId = request.get("mcp-session-id");
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (!session || session.agentId !== caller.agentId) {
        sendRpcError(response, 404, -32001, "session not found");
        return;
      }
      session.caller = caller;
      session.lastUsed = Date.now();
      if (this.refusedForScope(caller, request, response)) return;
      await session.transport.handleRequest(request, response, request.body);
      return;
    }
    if (request.method !== "POST" || !isInitializeRequest(request.body)) {
      sendRpcError(response, 400, -32000, "no session: send an initialize request first");
      return;
    }
    const toolset = request.get(TOOLSET_HEADER);
    if (toolset !== undefined && !TOOLSETS.includes(toolset as Toolset)) {
      throw invalid(TOOLSET_HEADER, `one of ${TOOLSETS.join(", ")}`);
    }
    this.makeRoomFor(caller.agentId);
    await this.open(caller, request, response, (toolset as Toolset | undefined) ?? this.gateway.config.MCP_TOOLSET);
  };

  /**
   * A `cairn:read` token calling a tool that makes changes: refused over HTTP, 403 with the
   * `insufficient_scope` challenge (CONTRACT §19, MCP authorization's scope challenge), before the
   * session reads it — so a client can ask the human for more scope instead of seeing a tool fail.
   */
  private refusedForScope(caller: Caller, request: Request, response: Response): boolean {
    if (!caller.readOnlyScope || request.method !== "POST") return false;
    const messages: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
    for (const message of messages) {
      const call = message as { method?: unknown; params?: { name?: unknown } } | null;
      if (call?.method !== "tools/call" || typeof call.params?.name !== "string") continue;
      const tool = this.toolsFor(undefined, "all").find((candidate) => candidate.name === call.params?.name);
      if (!tool) continue;
      try {
        this.gateway.authorize(tool.operation, caller);
      } catch (error) {
        if (!(error instanceof AppError) || error.scopeRequired === undefined) continue;
        response.set("WWW-Authenticate", this.challenges.insufficientScope(error.detail));
        sendRpcError(response, 403, FORBIDDEN_CODE, error.detail, { code: error.code, scope_required: error.scopeRequired });
        return true;
      }
    }
    return false;
  }

  /**
   * An agent's sessions are bounded, but a client that vanished without ending its session (a
   * killed host) must never lock the agent out: the least recently used session makes way.
   */
  private makeRoomFor(agentId: string): void {
    const own = [...this.sessions.values()].filter((session) => session.agentId === agentId);
    if (own.length < MAX_SESSIONS_PER_AGENT) return;
    const stalest = own.reduce((oldest, session) => (session.lastUsed < oldest.lastUsed ? session : oldest));
    if (stalest.transport.sessionId !== undefined) this.sessions.delete(stalest.transport.sessionId);
    void stalest.transport.close();
  }

  private async open(caller: Caller, request: Request, response: Response, toolset: Toolset): Promise<void> {
    const server = new Server(
      { name: "cairn", version: packageVersion },
      { capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} }, instructions: SERVER_INSTRUCTIONS },
    );
    const session: Session = {
      server,
      agentId: caller.agentId,
      caller,
      lastUsed: Date.now(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // A call's answer as plain JSON, not a one-event SSE stream: cheaper on both ends.
        // Notifications travel on the session's GET stream.
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          this.sessions.set(id, session);
        },
      }),
    };
    const resources = new SessionResources(this.gateway, server, () => session.caller);
    session.transport.onclose = () => {
      resources.close();
      if (session.transport.sessionId !== undefined) this.sessions.delete(session.transport.sessionId);
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.toolsFor(session.caller.role, toolset).map((tool) => tool.definition) }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      // Any tool of the catalogue may be called, listed or not: the gateway decides what the caller may do.
      const tool = this.toolsFor(undefined, "all").find((candidate) => candidate.name === call.params.name);
      // A name that is no tool is a malformed request, not a tool's failure (MCP: server/tools, error handling).
      if (!tool) throw unknownName("tool", call.params.name);
      return callTool(this.gateway, tool, session.caller, call.params, randomUUID());
    });
    await server.connect(session.transport);
    await session.transport.handleRequest(request, response, request.body);
    // An initialize that failed leaves no session behind, so nothing would ever close it.
    if (session.transport.sessionId === undefined || !this.sessions.has(session.transport.sessionId)) resources.close();
  }

  /** The tools of a tool set for a role (every role's when undefined: what may be called at all). */
  private toolsFor(role: Role | undefined, toolset: Toolset): McpTool[] {
    const key = `${role ?? "*"} ${toolset}`;
    let tools = this.toolsByRole.get(key);
    if (!tools) {
      tools = mcpTools(this.gateway.operations, toolset, role);
      this.toolsByRole.set(key, tools);
    }
    return tools;
  }

  private closeIdle(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const session of this.sessions.values()) if (session.lastUsed < cutoff) void session.transport.close();
  }

  /** Ends every session (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((session) => session.transport.close()));
    this.sessions.clear();
  }
}
