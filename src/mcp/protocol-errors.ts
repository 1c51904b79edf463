import type { Response } from "express";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/** The MCP specification's code for a resource that does not exist (server/resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error a request handler throws: the SDK answers with its `code`, `message` and `data`
 * as they are. (The SDK's own `McpError` prefixes its message with "MCP error <code>:", which a
 * client then prefixes again.)
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

export const unknownName = (what: "tool" | "prompt", name: string): ProtocolError => new ProtocolError(ErrorCode.InvalidParams, `unknown ${what}: ${name}`);

/** A JSON-RPC error answered over HTTP, outside any request the SDK read (so with no id). */
export function sendRpcError(response: Response, status: number, code: number, message: string): void {
  response.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}
