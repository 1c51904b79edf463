import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeLlmCall {
  provider: "openai" | "anthropic";
  system: string;
  user: string;
  model: string;
  maxTokens: number;
  headers: Record<string, string | undefined>;
  body: unknown;
}

type FakeLlmReply = string | { status: number; body?: unknown; headers?: Record<string, string> };

export interface FakeLlm {
  /** http://127.0.0.1:<port> */
  url: string;
  /** `${url}/v1` */
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  calls: FakeLlmCall[];
  /** Replaces how the fake answers; the default answers every call with "{}". A string becomes the model's text. */
  respond(handler: (call: FakeLlmCall) => FakeLlmReply | Promise<FakeLlmReply>): void;
  close(): Promise<void>;
}

const tokens = (text: string): number => Math.ceil(text.length / 4);

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Message text whether sent as a plain string or as content blocks. */
function contentText(content: unknown): string {
  if (Array.isArray(content)) return content.map((block) => str(record(block).text)).join("");
  return str(content);
}

function firstMessage(messages: unknown, role: string): string {
  const found = Array.isArray(messages) ? messages.map(record).find((message) => message.role === role) : undefined;
  return found ? contentText(found.content) : "";
}

function toCall(provider: FakeLlmCall["provider"], request: IncomingMessage, body: unknown): FakeLlmCall {
  const fields = record(body);
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  const system = provider === "openai" ? firstMessage(fields.messages, "system") : contentText(fields.system);
  const maxTokens = typeof fields.max_tokens === "number" ? fields.max_tokens : 0;
  return { provider, system, user: firstMessage(fields.messages, "user"), model: str(fields.model), maxTokens, headers, body };
}

function success(call: FakeLlmCall, text: string): unknown {
  const input = tokens(call.system + call.user);
  const output = tokens(text);
  if (call.provider === "openai") {
    return {
      id: `chatcmpl-fake-${Date.now()}`,
      object: "chat.completion",
      model: call.model,
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    };
  }
  return {
    id: `msg_fake_${Date.now()}`,
    type: "message",
    role: "assistant",
    model: call.model,
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    usage: { input_tokens: input, output_tokens: output },
  };
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
  response.writeHead(status, { "content-type": typeof body === "string" ? "text/plain" : "application/json", ...headers });
  response.end(text);
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A real HTTP server on loopback that speaks the chat-completions and messages APIs. */
export async function startFakeLlm(): Promise<FakeLlm> {
  let handler: (call: FakeLlmCall) => FakeLlmReply | Promise<FakeLlmReply> = () => "{}";
  const calls: FakeLlmCall[] = [];

  const server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0];
    const provider = path === "/v1/chat/completions" ? "openai" : path === "/v1/messages" ? "anthropic" : null;
    if (request.method !== "POST" || provider === null) {
      request.resume();
      send(response, 404, { error: { message: `no route for ${request.method} ${path}` } });
      return;
    }
    void (async () => {
      try {
        const call = toCall(provider, request, await readBody(request));
        calls.push(call);
        const reply = await handler(call);
        // A client that timed out has gone; writing to it would only raise.
        if (response.destroyed) return;
        if (typeof reply === "string") send(response, 200, success(call, reply));
        else send(response, reply.status, reply.body, reply.headers);
      } catch (error) {
        if (!response.headersSent) send(response, 500, { error: { message: error instanceof Error ? error.message : String(error) } });
      }
    })();
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    calls,
    respond(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Handlers still delaying (timeout tests) would otherwise hold the server open.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
