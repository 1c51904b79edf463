import { createHash, randomBytes, randomUUID } from "node:crypto";
import { invalid } from "./errors.js";

export const newId = (): string => randomUUID();

/**
 * A name-based UUID (version 5, RFC 9562): the same `name` in the same `namespace` (a UUID) always
 * gives the same id, and another name another one. For ids that must stay put, such as a feed's.
 */
export function nameBasedId(namespace: string, name: string): string {
  const bytes = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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
  throw invalid(path, "expected a uuid or a unique prefix of at least 6 hex characters");
}

/** Random secret: `cairn_` + 32 random bytes in base64url. */
export const newApiKey = (): string => `cairn_${randomBytes(32).toString("base64url")}`;
