import { request as httpRequest, type IncomingHttpHeaders } from "node:http";

export interface RawOptions {
  method?: string;
  /** Sent exactly as given: `host`, `cookie`, `origin` and the like included (fetch would refuse or rewrite some). */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The client's source address: any of 127.0.0.0/8 stands for another machine. */
  localAddress?: string;
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when it is not JSON. */
  body: T;
}

/** One HTTP/1.1 request with full control over its headers and source address. */
export function rawRequest<T = unknown>(url: string, options: RawOptions = {}): Promise<RawResponse<T>> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
    const outgoing = httpRequest(url, { method: options.method ?? "GET", headers, localAddress: options.localAddress }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text, body: body as T });
      });
    });
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}
