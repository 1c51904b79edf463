/**
 * JSON-RPC messages as the stdio bridge sees them: it relays them as they are and reads only the
 * fields it needs (ids to answer, `initialize`'s answer), so the server stays their one validator.
 */
export type RequestId = string | number;

export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: RequestId | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

const isMessage = (value: unknown): value is JsonRpcMessage =>
  typeof value === "object" && value !== null && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === "2.0";

/** The messages of one message or a batch of them. Throws when the value is neither. */
export function messagesOf(value: unknown): JsonRpcMessage[] {
  const messages: unknown[] = Array.isArray(value) ? value : [value];
  if (messages.length === 0 || !messages.every(isMessage)) throw new Error("not a JSON-RPC 2.0 message");
  return messages;
}

/** One message or a batch of them, as JSON text. Throws when the text is not that. */
export const parseMessages = (text: string): JsonRpcMessage[] => messagesOf(JSON.parse(text));

const isRequestId = (id: unknown): id is RequestId => typeof id === "string" || (typeof id === "number" && Number.isFinite(id));

/** The requests among messages: what must get an answer. */
export const requestsOf = (messages: JsonRpcMessage[]): (JsonRpcMessage & { id: RequestId; method: string })[] =>
  messages.filter((message): message is JsonRpcMessage & { id: RequestId; method: string } => typeof message.method === "string" && isRequestId(message.id));

/** An answer to a request (a result or an error), by the id it answers. */
export const answeredId = (message: JsonRpcMessage): RequestId | undefined =>
  message.method === undefined && ("result" in message || "error" in message) && isRequestId(message.id) ? message.id : undefined;

/** Ids as map keys: `1` and `"1"` are different requests. */
export const idKey = (id: RequestId): string => (typeof id === "number" ? `n${id}` : `s${id}`);

export const isInitializedNotification = (message: unknown): boolean =>
  isMessage(message) && message.method === "notifications/initialized" && message.id === undefined;

export const errorAnswer = (id: RequestId | null, code: number, message: string, data?: unknown): JsonRpcMessage => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});
