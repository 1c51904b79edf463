import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { isUnspecifiedHost, urlHostFor } from "../core/config.js";
import { exposureWarnings } from "../core/exposure.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { createHttpApp } from "./app.js";

export interface ServerOptions {
  /** How long shutdown waits for in-flight requests before cutting connections. */
  drainTimeoutMs?: number;
  /** Milliseconds between SSE `: ping` comments (default 15 s). */
  ssePingMs?: number;
}

export interface RunningServer {
  /** Where this machine reaches the server: loopback when it listens on every interface. */
  url: string;
  /** Where clients are sent (PUBLIC_URL, or derived from HOST and the port bound). */
  publicUrl: string;
  port: number;
  gateway: OperationGateway;
  /** Where a human opens the web UI: with the one-time login token in the fragment until it is used. */
  uiUrl(): Promise<string>;
  close(): Promise<void>;
}

const KEEP_ALIVE_MS = 30_000;
/** After the start is over (the model loaded), before the MCP endpoint's modules are loaded. */
const MCP_PRELOAD_AFTER_MS = 1000;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Serves the gateway over HTTP on the configured host and port; `close()` drains in-flight
 * requests, then closes the gateway (and so the store). A failure to listen leaves the gateway open.
 */
export async function startServer(gateway: OperationGateway, options: ServerOptions = {}): Promise<RunningServer> {
  const { config, log } = gateway;
  let publicUrl = config.PUBLIC_URL;
  const http = createHttpApp(gateway, log, () => publicUrl, { ssePingMs: options.ssePingMs });
  const server = createServer(http.app);
  // A client reuses an idle connection until a second before the Keep-Alive hint runs out. With
  // Node's 5 s, a request sent on a connection idle for about 4 s (a busy client's timers late)
  // met the server closing it: ECONNRESET on a request that never arrived. 30 s leaves the client
  // the margin; idle connections are still closed at shutdown.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await listen(server, config.PORT, config.HOST);
  const port = (server.address() as AddressInfo).port;
  // The server refuses a Host of 0.0.0.0 (it names no machine), so it reaches itself by loopback.
  const selfHost = isUnspecifiedHost(config.HOST) ? (config.HOST.includes(":") ? "[::1]" : "127.0.0.1") : urlHostFor(config.HOST);
  const url = `http://${selfHost}:${port}`;
  if (!config.publicUrlExplicit) publicUrl = `http://${urlHostFor(config.HOST)}:${port}`;
  gateway.setPublicUrl(publicUrl);
  // The MCP endpoint's modules (about 100 ms of this thread, in one piece) load a while after the
  // model has: loaded as the server listened, they held the model's arrival and the first requests
  // answered. A first /mcp request before then loads them itself.
  void gateway
    .listening(port)
    .then(() => sleep(MCP_PRELOAD_AFTER_MS, undefined, { ref: false }))
    .then(() => http.preload());
  for (const warning of exposureWarnings(config)) log.warn(warning.message, { setting: warning.setting });

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      http.drain();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + (options.drainTimeoutMs ?? 10_000);
      while (http.inFlight() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      server.closeAllConnections();
      await stopped;
      await gateway.close();
    })());

  const sessions = gateway.ui;
  // Without a password, the link printed at start is the way in.
  const startLink = config.UI_PASSWORD === "" ? (await sessions.issueLoginLink()).token : null;
  return {
    url,
    publicUrl,
    port,
    gateway,
    // A fragment, so the token never reaches a server log or a Referer header.
    async uiUrl() {
      const live = startLink !== null && (await sessions.loginLinkIsLive(startLink));
      return `${publicUrl}/ui/${live ? `#login=${startLink}` : ""}`;
    },
    close,
  };
}
