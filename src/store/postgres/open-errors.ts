import { SchemaTooNewError } from "../migrations.js";

// A server that cannot open its PostgreSQL database says which database, without its password,
// and what is wrong in the words of what to do about it: the driver's own message alone
// ("connect ECONNREFUSED 127.0.0.1:5432", "role \"x\" does not exist") names neither.

/**
 * DATABASE_URL as it may be shown: without the password, and without the query, which may carry one
 * too. Not `safeUrl` (src/net): that one is for http(s) URLs, keeps no user name, and shows only
 * the scheme of one like `postgres:`, whose origin is opaque; the role is what a reader must check.
 */
function shownDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    parsed.search = "";
    return parsed.toString();
  } catch {
    return "DATABASE_URL";
  }
}

function addressOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.hostname === "" ? "the local socket" : `${parsed.hostname}:${parsed.port === "" ? "5432" : parsed.port}`;
  } catch {
    return "its address";
  }
}

function remedy(url: string, code: unknown, message: string): string {
  switch (code) {
    case "ECONNREFUSED":
      return `nothing accepts connections at ${addressOf(url)}: is PostgreSQL running, and listening there?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host name does not resolve (${message})`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${addressOf(url)} cannot be reached (${message})`;
    case "3D000":
      return `${message}: create it first (createdb), or name a database that exists`;
    case "28000":
    case "28P01":
      return `${message}: check the user and password in DATABASE_URL, and the server's pg_hba.conf`;
    case "42501":
      return /extension/i.test(message)
        ? `${message}: this role may not create the pgvector extension; an administrator runs CREATE EXTENSION vector; in this database once`
        : message;
    case "0A000":
    case "58P01":
      return /vector/.test(message) ? `${message}: pgvector is not installed on this PostgreSQL server (docs/operations.md, "PostgreSQL and several servers")` : message;
    default:
      return message;
  }
}

/** Why the database at `url` could not be opened, as an error to show; a schema too new stays as it is. */
export function openFailure(url: string, error: unknown): unknown {
  if (error instanceof SchemaTooNewError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`cannot open the PostgreSQL database ${shownDatabaseUrl(url)}: ${remedy(url, code, message)}`, { cause: error });
}
