import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../core/config.js";
import { exposureWarnings } from "../core/exposure.js";
import type { Logger } from "../core/log.js";
import { uiDir } from "../core/paths.js";
import { embedderLoaderFor } from "../embed/models.js";
import { EmbeddingQueue } from "../embed/queue.js";
import { auditPosition, verifyAudit } from "../events/audit.js";
import { openStore, sqliteLoadProblem } from "../store/open.js";
import type { Store } from "../store/store.js";
import { readSecretKey, secretKeyMode, secretKeyPath } from "../core/secret-box.js";
import { keyOpensCheck, SECRET_KEY_CHECK } from "./instance.js";
import { auditDir, credentialsPath, databasePath } from "../core/paths.js";

export interface Check {
  name: string;
  /** `warn`: worth knowing, not a fault; only `fail` makes `cairn doctor` exit non-zero. */
  status: "ok" | "warn" | "fail";
  detail: string;
}

export interface CheckOptions {
  /** How long to wait for the embedding model to load. */
  modelWaitMs: number;
  log: Logger;
}


const mode = (path: string): number => statSync(path).mode & 0o777;
const verdict = (ok: boolean): Check["status"] => (ok ? "ok" : "fail");
const NOTHING_CREATED = "nothing was created (cairn serve creates it on its first start)";

/**
 * Everything `cairn doctor` checks in the files. It reads what exists and creates nothing: a
 * missing data directory or database is reported, not made.
 */
export async function runChecks(config: Config, options: CheckOptions): Promise<Check[]> {
  const checks: Check[] = [{ name: "config", status: "ok", detail: "settings parsed" }];
  for (const warning of exposureWarnings(config)) checks.push({ name: "exposure", status: "warn", detail: warning.message });
  checks.push(sqliteModuleCheck(config));
  if (existsSync(config.DATA_DIR)) checks.push(...dataChecks(config), ...(await databaseChecks(config)));
  else checks.push({ name: "data dir", status: "fail", detail: `${config.DATA_DIR} does not exist; ${NOTHING_CREATED}` });
  checks.push(await modelCheck(config, options));
  const uiBuilt = ["index.html", "app.js", "styles.css"].every((file) => existsSync(join(uiDir, file)));
  checks.push({ name: "web UI", status: verdict(uiBuilt), detail: uiBuilt ? uiDir : `not built in ${uiDir}: run npm run build` });
  return checks;
}

/** SQLite's native module: the store on SQLite cannot open without it; on PostgreSQL only migrate-store needs it. */
function sqliteModuleCheck(config: Config): Check {
  const problem = sqliteLoadProblem();
  if (problem === null) return { name: "sqlite module", status: "ok", detail: "better-sqlite3 and sqlite-vec load" };
  return { name: "sqlite module", status: config.DATABASE_URL === undefined ? "fail" : "warn", detail: problem };
}

function dataChecks(config: Config): Check[] {
  const dirMode = mode(config.DATA_DIR);
  const checks: Check[] = [
    {
      name: "data dir",
      status: verdict((dirMode & 0o077) === 0),
      detail: `${config.DATA_DIR} mode ${dirMode.toString(8)}${dirMode & 0o077 ? " (should be 700)" : ""}`,
    },
  ];
  const credentials = credentialsPath(config.DATA_DIR);
  if (existsSync(credentials)) {
    const fileMode = mode(credentials);
    checks.push({
      name: "credentials file",
      status: verdict((fileMode & 0o077) === 0),
      detail: `${credentials} mode ${fileMode.toString(8)}${fileMode & 0o077 ? " (should be 600)" : ""}`,
    });
  }
  checks.push(secretKeyFileCheck(secretKeyPath(config.DATA_DIR)));
  return checks;
}

/** The key file: there, private, 32 bytes. Whether it is the database's key is checked with the database. */
function secretKeyFileCheck(path: string): Check {
  if (!existsSync(path)) return { name: "secret key", status: "fail", detail: `no ${path}; ${NOTHING_CREATED}` };
  const fileMode = secretKeyMode(path);
  try {
    readSecretKey(path);
  } catch (error) {
    return { name: "secret key", status: "fail", detail: error instanceof Error ? error.message : String(error) };
  }
  return {
    name: "secret key",
    status: verdict((fileMode & 0o077) === 0),
    detail: `${path} mode ${fileMode.toString(8)}${fileMode & 0o077 ? " (should be 600)" : ""}`,
  };
}

/** Whether the key file opens the database's check value: a server with another key cannot read the secrets stored. */
async function secretKeyMatch(store: Store, path: string): Promise<Check | null> {
  const sealed = await store.meta.get(store.reader, SECRET_KEY_CHECK);
  if (sealed === undefined || !existsSync(path)) return null;
  let key: Buffer;
  try {
    key = readSecretKey(path);
  } catch {
    return null;
  }
  return keyOpensCheck(key, sealed)
    ? { name: "secret key matches", status: "ok", detail: "the database's secrets are encrypted with this key" }
    : {
        name: "secret key matches",
        status: "fail",
        detail: "the database's secrets are encrypted with another key: copy secret.key from the data directory of the server that first started on this database",
      };
}

async function databaseChecks(config: Config): Promise<Check[]> {
  const file = databasePath(config.DATA_DIR);
  const checks: Check[] = [];
  if (config.DATABASE_URL === undefined) {
    if (!existsSync(file)) return [{ name: "database", status: "fail", detail: `no database at ${file}; ${NOTHING_CREATED}` }];
    const dbMode = mode(file);
    checks.push({ name: "database file", status: verdict((dbMode & 0o077) === 0), detail: `mode ${dbMode.toString(8)}` });
  }
  let store: Store | null = null;
  try {
    // Not migrated: doctor reports the schema it finds, and leaves upgrading it to serve.
    store = await openStore({ databaseUrl: config.DATABASE_URL, file, migrate: false });
    const integrity = await store.maintenance.integrityCheck();
    checks.push({ name: "database integrity", status: verdict(integrity === "ok"), detail: integrity });
    const violations = await store.maintenance.foreignKeyViolations();
    checks.push({ name: "foreign keys", status: verdict(violations === 0), detail: `${violations} violations` });
    const keywordProblem = await store.maintenance.keywordIndexProblem();
    checks.push({ name: "keyword index", status: verdict(keywordProblem === null), detail: keywordProblem ?? "matches the content" });
    const { version, latest } = await store.maintenance.schema();
    checks.push({
      name: "schema",
      status: version === latest ? "ok" : version < latest ? "warn" : "fail",
      detail: `version ${version} of ${latest}${version < latest ? "; cairn serve migrates it at start" : version > latest ? "; written by a newer cairn" : ""}`,
    });
    const keyMatch = await secretKeyMatch(store, secretKeyPath(config.DATA_DIR));
    if (keyMatch) checks.push(keyMatch);
    if (config.AUDIT_LOG === "on") checks.push(...(await auditChecks(store, auditDir(config.DATA_DIR))));
  } catch (error) {
    // A database that cannot even be read is a finding, not a crash.
    checks.push({ name: "database", status: "fail", detail: error instanceof Error ? error.message : String(error) });
  } finally {
    await store?.close();
  }
  return checks;
}

async function auditChecks(store: Store, dir: string): Promise<Check[]> {
  const verified = await verifyAudit(store, dir);
  const checks: Check[] = [{ name: "audit log", status: verdict(verified.ok), detail: verified.detail }];
  const { restore } = await auditPosition(store, dir);
  if (restore?.recorded === false) {
    checks.push({
      name: "audit log position",
      status: "warn",
      detail:
        `the audit log's last event (seq ${restore.audit_last_seq}) is ahead of the database's (seq ${restore.database_last_seq}): ` +
        "a restored backup? cairn serve continues the audit log from the database's events; the later ones stay in it as history",
    });
  } else if (restore) {
    checks.push({
      name: "audit log position",
      status: "ok",
      detail: `continued from a restored database (the audit log had reached seq ${restore.audit_last_seq}, the database seq ${restore.database_last_seq})`,
    });
  }
  return checks;
}

async function modelCheck(config: Config, options: CheckOptions): Promise<Check> {
  const name = "embedding model";
  // This model is downloaded into DATA_DIR: loading it would create the directory.
  if (config.EMBEDDING_MODEL === "bge-small-en-v1.5" && !existsSync(config.DATA_DIR)) {
    return { name, status: "warn", detail: "not checked: bge-small-en-v1.5 is downloaded into DATA_DIR, which does not exist" };
  }
  const queue = new EmbeddingQueue(embedderLoaderFor(config), options.log);
  queue.start();
  try {
    const status = await queue.settled(options.modelWaitMs);
    const model = queue.model;
    if (status !== "ready" || model === null) return { name, status: "fail", detail: `${config.EMBEDDING_MODEL} is ${status}` };
    const vector = await queue.embed("doctor probe sentence");
    const ok = vector.length === model.dimensions;
    return { name, status: verdict(ok), detail: `${model.id} (${model.dimensions} dimensions)${ok ? "" : "; embedding a probe sentence failed"}` };
  } catch (error) {
    return { name, status: "fail", detail: `embedding a probe sentence failed: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    await queue.close();
  }
}
