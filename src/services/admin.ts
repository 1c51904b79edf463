import { chmodSync, existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { uiDir } from "../core/paths.js";
import { backupTo, foreignKeyViolations, integrityCheck, keywordIndexProblem } from "../store/maintenance.js";
import { schemaVersion, loadMigrations } from "../store/migrate.js";
import { credentialsPath } from "./credentials.js";
import { verifyAudit } from "../events/audit.js";
import { auditDir, databasePath, type Services } from "./index.js";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Consistent online copy through SQLite's backup API (safe while the server writes). */
export async function backupDatabase(services: Services, file: string): Promise<number> {
  // The copy holds what the database holds (private entries, key hashes), so it is created as
  // private as the database itself (0600) before SQLite writes into it, never world-readable.
  writeFileSync(file, "", { mode: 0o600 });
  chmodSync(file, 0o600);
  return backupTo(services.db, file);
}

const mode = (path: string): number => statSync(path).mode & 0o777;

/** Everything `cairn doctor` checks; each failed check makes it exit non-zero. */
export async function runChecks(services: Services, modelWaitMs: number): Promise<Check[]> {
  const { config, db } = services;
  const checks: Check[] = [{ name: "config", ok: true, detail: "settings parsed" }];
  const dirMode = mode(config.DATA_DIR);
  checks.push({
    name: "data dir",
    ok: (dirMode & 0o077) === 0,
    detail: `${config.DATA_DIR} mode ${dirMode.toString(8)}${dirMode & 0o077 ? " (should be 700)" : ""}`,
  });
  const credentials = credentialsPath(config.DATA_DIR);
  if (existsSync(credentials)) {
    const fileMode = mode(credentials);
    checks.push({
      name: "credentials file",
      ok: (fileMode & 0o077) === 0,
      detail: `${credentials} mode ${fileMode.toString(8)}${fileMode & 0o077 ? " (should be 600)" : ""}`,
    });
  }
  const dbMode = mode(databasePath(config));
  checks.push({ name: "database file", ok: (dbMode & 0o077) === 0, detail: `mode ${dbMode.toString(8)}` });
  const integrity = integrityCheck(db);
  checks.push({ name: "database integrity", ok: integrity === "ok", detail: integrity });
  const violations = foreignKeyViolations(db);
  checks.push({ name: "foreign keys", ok: violations === 0, detail: `${violations} violations` });
  const keywordProblem = keywordIndexProblem(db);
  checks.push({ name: "keyword index", ok: keywordProblem === null, detail: keywordProblem ?? "fts5 integrity ok" });
  const version = schemaVersion(db);
  const latest = loadMigrations().at(-1)?.version ?? 0;
  checks.push({ name: "schema", ok: version === latest, detail: `version ${version} of ${latest}` });
  const status = await services.embeddingQueue.settled(modelWaitMs);
  const model = services.embeddingQueue.model;
  let modelOk = status === "ready";
  let detail = status === "ready" ? `${model?.id} (${model?.dimensions} dimensions)` : `${config.EMBEDDING_MODEL} is ${status}`;
  if (modelOk) {
    const vector = await services.embeddings.embed("doctor probe sentence", modelWaitMs);
    modelOk = vector !== null && vector.length === model?.dimensions;
    if (!modelOk) detail += "; embedding a probe sentence failed";
  }
  checks.push({ name: "embedding model", ok: modelOk, detail });
  const uiBuilt = ["index.html", "app.js", "styles.css"].every((file) => existsSync(join(uiDir, file)));
  checks.push({ name: "web UI", ok: uiBuilt, detail: uiBuilt ? uiDir : `not built in ${uiDir}: run npm run build` });
  if (config.AUDIT_LOG === "on") checks.push({ name: "audit log", ...(await verifyAudit(db, auditDir(config))) });
  return checks;
}
