import express, { type NextFunction, type Request, type Response } from "express";
import { AppError } from "../core/errors.js";

const MAX_DEPTH = 64;
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

function tooDeep(root: unknown): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (depth > MAX_DEPTH) return true;
    if (value !== null && typeof value === "object") {
      for (const child of Object.values(value)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

const hasBody = (request: Request): boolean =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0");

/**
 * JSON bodies for routes that take one: a JSON content type (415 otherwise), at most `maxBytes`
 * (413), well-formed (400) and at most 64 levels deep (400). An empty body counts as `{}`.
 */
export function jsonBody(maxBytes: number) {
  const parse = express.json({ limit: maxBytes, strict: true, type: () => true });
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!hasBody(request)) {
      request.body = {};
      next();
      return;
    }
    if (!JSON_TYPE.test(request.get("content-type") ?? "")) {
      next(new AppError("UNSUPPORTED_MEDIA_TYPE", "content-type must be application/json"));
      return;
    }
    parse(request, response, (error?: unknown) => {
      if (error) {
        next(bodyError(error, maxBytes));
        return;
      }
      next(tooDeep(request.body) ? new AppError("BAD_REQUEST", "json body is nested too deeply") : undefined);
    });
  };
}

function bodyError(error: unknown, maxBytes: number): AppError {
  const type = (error as { type?: string }).type;
  switch (type) {
    case "entity.too.large":
      return new AppError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBytes} bytes`);
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("UNSUPPORTED_MEDIA_TYPE", "request body must be utf-8 json");
    default:
      return new AppError("BAD_REQUEST", "malformed json body");
  }
}
