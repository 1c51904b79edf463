import type { NextFunction, Request, Response } from "express";
import { AppError, internalError } from "../core/errors.js";
import type { Logger } from "../core/log.js";

export const AUTHENTICATE_CHALLENGE = 'ApiKey realm="cairn", header="X-API-Key"';

export function sendError(response: Response, error: AppError): void {
  if (error.code === "UNAUTHENTICATED") response.set("WWW-Authenticate", AUTHENTICATE_CHALLENGE);
  if (error.retryAfter !== undefined) response.set("Retry-After", String(error.retryAfter));
  response.status(error.status).json(error.toBody());
}

/** The one error handler: AppErrors as they are; anything else is a logged 500 with no details. */
export function errorHandler(log: Logger) {
  return (error: unknown, request: Request, response: Response, next: NextFunction): void => {
    if (response.headersSent) {
      next(error);
      return;
    }
    if (error instanceof AppError) {
      sendError(response, error);
      return;
    }
    log.error("unhandled error", { request_id: response.get("X-Request-Id"), method: request.method, path: request.originalUrl.split("?")[0], error });
    sendError(response, internalError());
  };
}
