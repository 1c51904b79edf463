import { randomBytes, randomUUID } from "node:crypto";
import { AppError } from "./errors.js";

export const newId = (): string => randomUUID();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PREFIX = /^[0-9a-f][0-9a-f-]{5,35}$/;

/**
 * A reference to a record: a full UUID, or a prefix of at least 6 hex characters that the
 * store resolves among the rows the caller can see.
 */
export type IdRef = { id: string } | { prefix: string };

/** `path`: where a refusal points, when the id is not the request's `id`. */
export function parseIdRef(raw: string, path = "id"): IdRef {
  const value = raw.trim().toLowerCase();
  if (UUID.test(value)) return { id: value };
  if (PREFIX.test(value) && value.replace(/-/g, "").length >= 6) return { prefix: value };
  throw new AppError("VALIDATION_FAILED", "request validation failed", {
    errors: [{ path, message: "expected a uuid or a unique prefix of at least 6 hex characters" }],
  });
}

/** Random secret: `cairn_` + 32 random bytes in base64url. */
export const newApiKey = (): string => `cairn_${randomBytes(32).toString("base64url")}`;
