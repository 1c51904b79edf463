import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import express, { type NextFunction, type Request, type Response } from "express";
import { AppError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { decodeUtf8 } from "./body.js";

// Other names clients use for JSON Lines, and plain text, are read the same way.
const TEXT_ALIASES: Record<string, string[]> = { "application/x-ndjson": ["application/jsonl", "application/x-jsonlines", "text/plain"] };

const mediaTypeOf = (request: Request): string => (request.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

function isTextOf(request: Request, mediaType: string): boolean {
  const type = mediaTypeOf(request);
  return type === mediaType || (TEXT_ALIASES[mediaType] ?? []).includes(type);
}

export const hasBody = (request: Request): boolean =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0");

/** Null when the body is text of `mediaType` (or an alias) in UTF-8; otherwise the 415 to answer. */
export function acceptsTextType(request: Request, mediaType: string): AppError | null {
  if (!isTextOf(request, mediaType)) {
    return new AppError("UNSUPPORTED_MEDIA_TYPE", `content-type must be ${mediaType}`);
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.get("content-type") ?? "")?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return new AppError("UNSUPPORTED_MEDIA_TYPE", "request body must be utf-8");
  return null;
}

/** The body as UTF-8 text of `mediaType` (415 otherwise), at most `maxBytes` (413); none is "". */
export function textBody(mediaType: string, maxBytes: number) {
  const parse = express.text({ limit: maxBytes, type: () => true, defaultCharset: "utf-8", verify: (_request, _response, bytes, charset) => decodeUtf8(bytes, charset) });
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!hasBody(request)) {
      request.body = "";
      next();
      return;
    }
    if (!isTextOf(request, mediaType)) {
      next(new AppError("UNSUPPORTED_MEDIA_TYPE", `content-type must be ${mediaType}`));
      return;
    }
    parse(request, response, (error?: unknown) => {
      if (!error) {
        if (typeof request.body !== "string") request.body = "";
        next();
        return;
      }
      const type = (error as { type?: string }).type;
      if (type === "entity.too.large") next(new AppError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBytes} bytes`));
      else if (type === "encoding.invalid") next(new AppError("BAD_REQUEST", "request body is not valid utf-8"));
      else if (type === "encoding.unsupported" || type === "charset.unsupported") next(new AppError("UNSUPPORTED_MEDIA_TYPE", "request body must be utf-8"));
      else next(new AppError("BAD_REQUEST", "malformed request body"));
    });
  };
}

export const isTextStream = (value: unknown): value is AsyncIterable<string> =>
  typeof (value as AsyncIterable<string> | null)?.[Symbol.asyncIterator] === "function";

/**
 * Sends a text body as it is produced, no faster than the client reads it. A failure after the
 * first bytes cannot become an error response: the connection is cut, so the client sees an
 * incomplete body instead of a short one that looks whole.
 */
export async function sendTextStream(response: Response, status: number, contentType: string, body: AsyncIterable<string>, log: Logger): Promise<void> {
  response.status(status).type(contentType);
  try {
    await pipeline(Readable.from(body), response);
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_STREAM_PREMATURE_CLOSE") return;
    log.error("text stream failed", { request_id: response.get("X-Request-Id"), error });
    response.destroy();
  }
}
