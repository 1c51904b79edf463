import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A listener on loopback that counts the connections it receives: what a refused outbound call
 * must never reach. It listens on 127.0.0.1 and, on the same port, on ::1 when the machine has
 * IPv6, so `[::1]`, `[::]` and `0.0.0.0` spellings would land on it too if they got through.
 */
export interface Canary {
  port: number;
  /** Connections accepted so far, on either address. */
  connections(): number;
  /** Requests received, as `METHOD path`, with their Host header. */
  requests: { line: string; host: string | undefined; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const answer: Handler = (_request, response) => {
  response.writeHead(200, { "content-type": "text/plain" }).end("canary");
};

function listen(server: Server, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, host, () => resolve(true));
  });
}

const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** A canary on 127.0.0.1 (and ::1), answering every request with `handler` (200 "canary" by default). */
export async function startCanary(handler: Handler = answer, host = "127.0.0.1", port = 0): Promise<Canary> {
  let connections = 0;
  const requests: Canary["requests"] = [];
  const make = (): Server => {
    const server = createServer((request, response) => {
      requests.push({ line: `${request.method} ${request.url}`, host: request.headers.host, headers: request.headers });
      handler(request, response);
    });
    server.on("connection", () => connections++);
    return server;
  };
  const primary = make();
  if (!(await listen(primary, port, host))) throw new Error(`the canary cannot listen on ${host}:${port}`);
  const bound = (primary.address() as AddressInfo).port;
  const servers = [primary];
  if (host === "127.0.0.1") {
    const ipv6 = make();
    if (await listen(ipv6, bound, "::1")) servers.push(ipv6);
  }
  return {
    port: bound,
    connections: () => connections,
    requests,
    close: async () => {
      await Promise.all(servers.map(close));
    },
  };
}
