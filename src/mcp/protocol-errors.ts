import type { NextFunction, Request, RequestHandler, Response } from "express";
import { AppError } from "../core/errors.js";

/**
 * JSON-RPC 2.0's codes, as the SDK's `ErrorCode` has them. Written here because this module is on
 * every server's way to listening, and the SDK's types module builds its hundreds of schemas as it
 * loads (the MCP endpoint loads it later, off that path).
 */
export const JSON_RPC_ERRORS = { ParseError: -32700, InvalidRequest: -32600, InvalidParams: -32602 } as const;
/** The MCP specification's code for a resource that does not exist (server/resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC's range for errors a server defines; the SDK's transport answers transport refusals with it too. */
const SERVER_ERROR = -32000;

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

export const unknownName = (what: "tool" | "prompt", name: string): ProtocolError => new ProtocolError(JSON_RPC_ERRORS.InvalidParams, `unknown ${what}: ${name}`);

/** A JSON-RPC error answered over HTTP, outside any request the SDK read (so with no id). */
export function sendRpcError(response: Response, status: number, code: number, message: string, data?: Record<string, unknown>): void {
  response.status(status).json({ jsonrpc: "2.0", error: { code, message, ...(data === undefined ? {} : { data }) }, id: null });
}

/**
 * A body the JSON reader refused, as JSON-RPC says it: text that does not parse as JSON (or as
 * UTF-8, or nests deeper than the reader goes) is a parse error, and JSON that repeats a key is not
 * a valid request (which key, as REST reports it, in `data.errors`) — both 400, as the SDK's
 * transport answers them. A body too large or not JSON by
 * its type is refused unread, with REST's status (413, 415) and the code the SDK's transport uses.
 */
function sendBodyRefusal(response: Response, error: AppError): void {
  if (error.code === "BAD_REQUEST") sendRpcError(response, 400, JSON_RPC_ERRORS.ParseError, `Parse error: ${error.detail}`);
  else if (error.code === "VALIDATION_FAILED") sendRpcError(response, 400, JSON_RPC_ERRORS.InvalidRequest, `Invalid Request: ${error.detail}`, { errors: error.errors });
  else sendRpcError(response, error.status, SERVER_ERROR, error.detail);
}

/** `read` (the JSON body reader) for /mcp: what it refuses is answered in JSON-RPC's terms. */
export const jsonRpcBody =
  (read: RequestHandler) =>
  (request: Request, response: Response, next: NextFunction): void => {
    void read(request, response, (error?: unknown) => {
      if (error instanceof AppError) sendBodyRefusal(response, error);
      else next(error);
    });
  };
