import { randomUUID } from "node:crypto";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { AppError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { packageVersion } from "../core/paths.js";
import { buildOpenApi } from "../openapi/build.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { docsRouter } from "./docs.js";
import { errorHandler } from "./errors.js";
import { mountOperations } from "./mount.js";
import { StreamRegistry } from "./sse.js";
import type { McpEndpoint } from "../mcp/http.js";
import { jsonRpcBody } from "../mcp/protocol-errors.js";
import { oauthRouter } from "./oauth.js";
import { insufficientScopeChallenge, unauthenticatedChallenge } from "./challenges.js";
import { jsonBody } from "./body.js";
import { uiRouter } from "./ui.js";
import { HostPolicy } from "./hosts.js";
import { loggedPath } from "./logged-path.js";
import { ServerMetrics, transportLabel } from "./metrics.js";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A path that does not percent-decode to UTF-8 (`%zz`, `%C0%AE`) is refused before any route sees it. */
function refuseUndecodablePath(request: Request, _response: Response, next: NextFunction): void {
  try {
    decodeURIComponent(request.path);
    next();
  } catch {
    next(new AppError("BAD_REQUEST", "malformed path"));
  }
}

export interface HttpApp {
  app: Express;
  /** From now on every request is answered 503 and open event streams end, so in-flight requests can finish before close. */
  drain(): void;
  /** Requests still being answered, open event streams not counted. */
  inFlight(): number;
  /** Loads, in the background, what the routes load on first use (MCP). */
  preload(): void;
}

export interface HttpOptions {
  /** Milliseconds between SSE `: ping` comments (default 15 s). */
  ssePingMs?: number | undefined;
}

export function createHttpApp(gateway: OperationGateway, log: Logger, publicUrl: () => string, options: HttpOptions = {}): HttpApp {
  const streams = new StreamRegistry();
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  let draining = false;
  let inFlight = 0;

  app.use((request: Request, response: Response, next: NextFunction) => {
    const incoming = request.get("x-request-id");
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    response.locals.requestId = requestId;
    response.set("X-Request-Id", requestId);
    const started = performance.now();
    inFlight++;
    response.on("close", () => {
      inFlight--;
      const path = loggedPath(request);
      const ms = performance.now() - started;
      const streamed = response.get("content-type")?.startsWith("text/event-stream") ?? false;
      metrics.observe((response.locals.operation as string | undefined) ?? transportLabel(path), response.statusCode, ms / 1000, streamed);
      log.info("request", {
        request_id: requestId,
        method: request.method,
        path,
        status: response.statusCode,
        ms: Math.round(ms * 10) / 10,
        agent: (response.locals.caller as { agentId?: string } | null | undefined)?.agentId,
      });
    });
    if (draining) {
      response.set("Connection", "close");
      next(new AppError("UNAVAILABLE", "server is shutting down", { retryAfter: 5 }));
      return;
    }
    next();
  });
  const hosts = new HostPolicy(gateway.config, publicUrl);
  app.use(hosts.middleware);
  app.use(refuseUndecodablePath);

  let openApi: unknown = null;
  app.get("/openapi.json", (_request, response) => {
    openApi ??= buildOpenApi(gateway.operations, { version: packageVersion, serverUrl: publicUrl() });
    response.json(openApi);
  });
  app.use(docsRouter());

  app.use(oauthRouter(gateway, publicUrl, hosts));
  app.use(uiRouter(gateway, hosts));
  // The MCP SDK's server and its validators load after the server listens (preload) or with the
  // first /mcp request, whichever comes first: they are not on the way to a server that answers.
  let mcp: McpEndpoint | null = null;
  let mcpLoading: Promise<McpEndpoint> | null = null;
  const mcpEndpoint = (): Promise<McpEndpoint> =>
    (mcpLoading ??= import("../mcp/http.js").then(
      ({ McpEndpoint }) =>
        (mcp = new McpEndpoint(gateway, hosts, {
          unauthenticated: (invalidToken) => unauthenticatedChallenge(publicUrl(), invalidToken),
          insufficientScope: (description) => insufficientScopeChallenge(publicUrl(), description),
        })),
    ));
  const handleMcp = async (request: Request, response: Response): Promise<void> => (await mcpEndpoint()).handle(request, response);
  app.post("/mcp", jsonRpcBody(jsonBody(gateway.config.MAX_BODY_BYTES)), handleMcp);
  app.get("/mcp", handleMcp);
  app.delete("/mcp", handleMcp);
  const metrics = new ServerMetrics(gateway, hosts, { eventStreams: () => streams.size, mcpSessions: () => mcp?.sessionCount ?? 0 });
  app.get("/metrics", metrics.handle);

  const api = express.Router();
  mountOperations(api, gateway, hosts, { registry: streams, options: { pingMs: options.ssePingMs ?? 15_000 } });
  app.use(api);

  app.use((_request: Request, _response: Response, next: NextFunction) => {
    next(new AppError("NOT_FOUND", "route not found"));
  });
  app.use(errorHandler(log, publicUrl));

  return {
    app,
    drain: () => {
      draining = true;
      streams.endAll();
      void mcpLoading?.then((endpoint) => endpoint.close());
    },
    preload: () => {
      if (!draining) void mcpEndpoint();
    },
    inFlight: () => inFlight - streams.size,
  };
}
