import { z } from "zod";

/** Every failure a client can see. The code decides the HTTP status; nothing else does. */
export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  /** A call to a peer or a feed that the request waited for failed (CONTRACT §11). */
  UPSTREAM_ERROR: 502,
  UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;
export const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/** The body of every refusal: `{detail, code}`, for 422 one entry per problem, and extras some codes add. */
export const errorBody = z.looseObject({
  detail: z.string().describe("a lower-case sentence"),
  code: z.enum(errorCodes as [ErrorCode, ...ErrorCode[]]),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  current_version: z.number().int().optional().describe("412 only: the entry's current version"),
});

export interface FieldError {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  /** Validation problems, reported as `errors` in the body. */
  errors?: FieldError[];
  /** Extra body fields (for example `current_version` on a 412). */
  extra?: Record<string, unknown>;
  /** Seconds a client should wait (429, 503). */
  retryAfter?: number;
  /** A 403 for a bearer token that lacks this scope: the answer challenges for it (`insufficient_scope`). */
  scopeRequired?: string;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly scopeRequired: string | undefined;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.detail = detail;
    this.errors = options.errors;
    this.extra = options.extra;
    this.retryAfter = options.retryAfter;
    this.scopeRequired = options.scopeRequired;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  /** The wire body: `{detail, code, errors?, ...extra}`. */
  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { detail: this.detail, code: this.code };
    if (this.errors) body.errors = this.errors;
    if (this.extra) Object.assign(body, this.extra);
    return body;
  }
}

// Refusals are built with these rather than by hand, so each text is written once.
export const notFound = (what: string): AppError => new AppError("NOT_FOUND", `${what} not found`);
export const forbidden = (detail: string): AppError => new AppError("FORBIDDEN", detail);
export const conflict = (detail: string): AppError => new AppError("CONFLICT", detail);
export const invalidCredentials = (): AppError => new AppError("UNAUTHENTICATED", "invalid credentials");
export const ambiguousIdPrefix = (): AppError => new AppError("BAD_REQUEST", "ambiguous id prefix");

/** 422 with one problem per field; a `detail` of its own only where a sentence says more than the generic one. */
export const invalidFields = (errors: FieldError[], detail = "request validation failed"): AppError =>
  new AppError("VALIDATION_FAILED", detail, { errors });
export const invalid = (path: string, message: string, detail?: string): AppError => invalidFields([{ path, message }], detail);

/**
 * The answer to anything that is not an AppError (an InternalError included): no message, no
 * stack, since those speak of the server's insides.
 */
export const internalError = (): AppError => new AppError("INTERNAL", "internal server error");

/**
 * `invariant`: the code broke one of its own rules. `setup`: what the server was started with (the
 * data directory, a file in it, a setting) cannot work. `io`: the disk refused what the server
 * needed of it (a sync of the write-ahead log).
 */
export type InternalErrorKind = "invariant" | "setup" | "io";

/**
 * A failure that is the server's, not the request's. It never becomes a client's answer (that is a
 * logged 500 with no details), so it has no wire code; `kind` says what failed.
 */
export class InternalError extends Error {
  readonly kind: InternalErrorKind;

  constructor(kind: InternalErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "InternalError";
    this.kind = kind;
  }
}
