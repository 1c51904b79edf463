import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Role } from "../wire/roles.js";
import { InternalError } from "../core/errors.js";
import { credentialsPath } from "../core/paths.js";

export const hashKey = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest();

// Compared against when the agent does not exist, so a wrong id costs the same as a wrong key.
const ABSENT_HASH = createHash("sha256").update(randomBytes(32)).digest();

/** Constant-time check of a presented key against a stored hash (or against nothing). */
export function keyMatches(presented: string, stored: Buffer | null | undefined): boolean {
  const candidate = hashKey(presented);
  const expected = stored && stored.length === candidate.length ? stored : ABSENT_HASH;
  return timingSafeEqual(candidate, expected) && expected !== ABSENT_HASH;
}

export interface BootstrapCredential {
  agent_id: string;
  role: Role;
  api_key: string;
}

export interface CredentialsFile {
  note: string;
  server: string;
  agents: Record<string, BootstrapCredential>;
}

export function readCredentials(dataDir: string): CredentialsFile | null {
  const path = credentialsPath(dataDir);
  if (!existsSync(path)) return null;
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as CredentialsFile;
    if (typeof parsed.agents !== "object" || parsed.agents === null) throw new Error("no agents object");
    return parsed;
  } catch (error) {
    throw new InternalError("setup", `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}; fix or remove it`, { cause: error });
  }
}

/** Written atomically and only ever with mode 0600: it holds the owner's and archivist's keys. */
export function writeCredentials(dataDir: string, server: string, agents: Record<string, BootstrapCredential>): string {
  const path = credentialsPath(dataDir);
  const file: CredentialsFile = {
    note: "Cairn bootstrap credentials: the owner (UI) and archivist identities. Keep this file private.",
    server,
    agents,
  };
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
