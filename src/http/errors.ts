import type { NextFunction, Request, Response } from "express";
import { AppError, internalError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { insufficientScopeChallenge, presentedBearer, unauthenticatedChallenge } from "./challenges.js";
import { loggedPath } from "./logged-path.js";

/**
 * Answers `error` in Cairn's shape; a 401, and a 403 for a token short of scope, with their
 * challenges (a 401 to a request that presented a bearer token says the token is invalid).
 */
function sendError(response: Response, error: AppError, publicUrl: string, request?: Request): void {
  if (error.code === "UNAUTHENTICATED") response.set("WWW-Authenticate", unauthenticatedChallenge(publicUrl, request !== undefined && bearerOf(request)));
  if (error.scopeRequired !== undefined) response.set("WWW-Authenticate", insufficientScopeChallenge(publicUrl, error.detail));
  if (error.retryAfter !== undefined) response.set("Retry-After", String(error.retryAfter));
  response.status(error.status).json(error.toBody());
}

const bearerOf = (request: Request): boolean =>
  presentedBearer({ agentId: request.get("x-agent-id"), apiKey: request.get("x-api-key"), authorization: request.get("authorization") });

/**
 * Errors Express and its body parsers raise for a bad request (they carry a 4xx `status`): answered
 * in Cairn's shape with a fixed detail, since their messages may quote the request.
 */
function clientRefusal(error: unknown): AppError | null {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== "number" || status < 400 || status >= 500) return null;
  if (status === 413) return new AppError("PAYLOAD_TOO_LARGE", "request body too large");
  if (status === 415) return new AppError("UNSUPPORTED_MEDIA_TYPE", "unsupported request body encoding");
  return new AppError("BAD_REQUEST", "malformed request");
}

/** The one error handler: AppErrors as they are; anything else is a logged 500 with no details. */
export function errorHandler(log: Logger, publicUrl: () => string) {
  return (error: unknown, request: Request, response: Response, next: NextFunction): void => {
    if (response.headersSent) {
      next(error);
      return;
    }
    if (error instanceof AppError) {
      sendError(response, error, publicUrl(), request);
      return;
    }
    const refusal = clientRefusal(error);
    if (refusal) {
      sendError(response, refusal, publicUrl(), request);
      return;
    }
    log.error("unhandled error", { request_id: response.get("X-Request-Id"), method: request.method, path: loggedPath(request), error });
    sendError(response, internalError(), publicUrl());
  };
}
