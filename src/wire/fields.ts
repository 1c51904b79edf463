import { z } from "zod";
import { AGENT_ID_PATTERN } from "./ids.js";

// Fields of requests that several operations validate and that services take as they parse them:
// here, below both, so a service's input can be the operation's schema's output (tools/schemas.ts
// keeps the pieces no service input shares).

/**
 * A count or version an input compares with a stored one: the stores keep these as 32-bit
 * integers (PostgreSQL's `integer`), and a larger number would fail there rather than match nothing.
 */
export const storedCount = (min: number) => z.number().int().min(min).max(2_147_483_647);

export const agentId = z.string().regex(AGENT_ID_PATTERN, "must match ^[a-z0-9][a-z0-9_-]{0,63}$");

export const projectId = z
  .string()
  .regex(AGENT_ID_PATTERN, "must be a project id (lower-case slug)")
  .describe("project id (the lower-cased slug of its name)");

export const idRef = z
  .string()
  .min(6)
  .max(64)
  .describe("a uuid, or a unique prefix of at least 6 hex characters");

export const tags = z
  .array(z.string().trim().min(1).max(64))
  .max(32)
  .describe("up to 32 tags of 1 to 64 characters; trimmed and de-duplicated");

/** A page size of 1 to `max`, `fallback` when not given. */
export const limitParam = (max: number, fallback: number) =>
  // The default is in the schema itself: repeating it here would only lengthen every tool listing.
  z.number().int().min(1).max(max).default(fallback).describe(`page size, 1 to ${max}`);
