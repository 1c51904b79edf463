import type { IncomingMessage } from "node:http";
import express, { type NextFunction, type Request, type Response } from "express";
import { AppError, invalidFields } from "../core/errors.js";
import { keyProblem } from "../core/json-keys.js";

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

/** Thrown from a parser's `verify`: body-parser keeps the `type` on the error it passes on. */
class BodyRefusal extends Error {
  constructor(readonly type: "encoding.invalid" | "charset.unsupported") {
    super(type);
  }
}

// Refuses what a lenient decoder would turn into U+FFFD: the text stored must be the text sent.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A body's bytes as UTF-8 text; a refusal typed `encoding.invalid` or `charset.unsupported` otherwise. */
export function decodeUtf8(bytes: Buffer, charset: string | null): string {
  if (charset !== null && !/^utf-?8$/i.test(charset)) throw new BodyRefusal("charset.unsupported");
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new BodyRefusal("encoding.invalid");
  }
}

/** The body's text, as decoded strictly, for the key check once JSON.parse has accepted it. */
const bodyTexts = new WeakMap<IncomingMessage, string>();

function verifyUtf8(request: IncomingMessage, _response: unknown, bytes: Buffer, charset: string | null): void {
  bodyTexts.set(request, decodeUtf8(bytes, charset));
}

const hasBody = (request: Request): boolean =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0");

/**
 * JSON bodies for routes that take one: a JSON content type in UTF-8 (415 otherwise), at most
 * `maxBytes` (413), valid UTF-8 (400), well-formed (400), at most 64 levels deep (400), and no
 * key twice in an object nor a `__proto__` key (422, with its path). An empty body counts as `{}`.
 */
export function jsonBody(maxBytes: number) {
  const parse = express.json({ limit: maxBytes, strict: true, type: () => true, verify: verifyUtf8 });
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
      if (tooDeep(request.body)) {
        next(new AppError("BAD_REQUEST", "json body is nested too deeply"));
        return;
      }
      const problem = keyProblem(bodyTexts.get(request) ?? "");
      next(problem === null ? undefined : invalidFields([problem.error], problem.detail));
    });
  };
}

function bodyError(error: unknown, maxBytes: number): AppError {
  const type = (error as { type?: string }).type;
  switch (type) {
    case "entity.too.large":
      return new AppError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBytes} bytes`);
    case "encoding.invalid":
      return new AppError("BAD_REQUEST", "request body is not valid utf-8");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("UNSUPPORTED_MEDIA_TYPE", "request body must be utf-8 json");
    default:
      return new AppError("BAD_REQUEST", "malformed json body");
  }
}
