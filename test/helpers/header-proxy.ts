import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface HeaderProxy {
  /** The proxy's origin, `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy to `target` that adds `headers` to every request and passes everything else
 * through untouched, `Host` and `Origin` included, streaming both ways (SSE stays SSE). It stands for
 * a client's configured credentials when the client itself has no way to send any.
 */
export async function startHeaderProxy(target: string, headers: Record<string, string>): Promise<HeaderProxy> {
  const upstream = new URL(target);
  const proxy = createServer((incoming, outgoing) => {
    const forwarded: IncomingHttpHeaders = { ...incoming.headers, ...headers };
    const call = request({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: forwarded }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    call.on("error", () => outgoing.destroy());
    // A client that hangs up (the end of an SSE stream) ends the upstream request too.
    outgoing.on("close", () => call.destroy());
    incoming.pipe(call);
  });
  await new Promise<void>((resolveListen) => proxy.listen(0, "127.0.0.1", resolveListen));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolveClose) => {
        proxy.closeAllConnections();
        proxy.close(() => resolveClose());
      }),
  };
}
