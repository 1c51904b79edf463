import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What a route answers: status, headers and body, or a handler that writes the response itself. */
type FeedRoute = { status?: number; headers?: Record<string, string>; body?: string | Buffer } | ((response: ServerResponse, headers: IncomingHttpHeaders) => void);

export interface FeedServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Sets what `path` answers (a path with a query string is matched whole). */
  route(path: string, answer: FeedRoute): void;
  /** The requests each path received, with their headers, in order. */
  requests(path: string): IncomingHttpHeaders[];
  /** Connections the server accepted, whatever they asked. */
  readonly connections: number;
  close(): Promise<void>;
}

/** A real HTTP server on loopback serving feed documents to the server under test, counting what reaches it. */
export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, FeedRoute>();
  const seen = new Map<string, IncomingHttpHeaders[]>();
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((request, response) => {
    const path = request.url ?? "/";
    seen.set(path, [...(seen.get(path) ?? []), request.headers]);
    const answer = routes.get(path);
    if (answer === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("no such feed");
      return;
    }
    if (typeof answer === "function") {
      answer(response, request.headers);
      return;
    }
    response.writeHead(answer.status ?? 200, answer.headers ?? {}).end(answer.body ?? "");
  });
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    route: (path, answer) => void routes.set(path, answer),
    requests: (path) => seen.get(path) ?? [],
    get connections() {
      return connections;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
