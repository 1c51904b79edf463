import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkInstallation, type Check } from "../app.js";
import { packageVersion } from "../core/paths.js";
import { cliLogger, configOrExit, withGateway } from "./common.js";
import { backupHelp } from "./help.js";
import { print, printError, UsageError } from "./output.js";
import { commandServer, type CommandServer } from "./pidfile.js";

export async function backup(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { force: { type: "boolean", default: false } } });
  const target = positionals[0];
  if (!target || positionals.length > 1) throw new UsageError(backupHelp);
  const file = resolve(target);
  if (existsSync(file) && !values.force) throw new UsageError(`${file} exists; pass --force to overwrite it`);
  const pages = await withGateway(configOrExit(), { embeddings: false }, (gateway) => gateway.maintenance.backup(file));
  print(`backed up ${pages} pages to ${file}`);
}

export async function reindex(): Promise<void> {
  const config = configOrExit();
  const count = await withGateway(config, { embeddings: true }, async (gateway) => {
    const status = await gateway.maintenance.modelSettled(15 * 60_000);
    if (status !== "ready") throw new UsageError(`embedding model ${config.EMBEDDING_MODEL} is ${status}`);
    return gateway.maintenance.reindex((done) => printError(`embedded ${done}`));
  });
  print(`re-embedded ${count} entries with ${config.EMBEDDING_MODEL}`);
}

/** What answers where the commands look for the server. Nothing is no fault (the server may be stopped); a stranger, or another version, is. */
async function serverCheck({ url, from }: CommandServer): Promise<Check> {
  const name = "server";
  let response: Response;
  try {
    response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(3000) });
  } catch {
    const where = from === "CAIRN_URL" ? "CAIRN_URL" : "the server recorded for DATA_DIR";
    return { name, status: "ok", detail: `nothing answers at ${url} (${where}); cairn serve starts it` };
  }
  const health = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok || typeof health?.version !== "string") {
    const refusal = typeof health?.detail === "string" ? `: ${health.detail}` : "";
    return { name, status: "fail", detail: `${url} answers /health with status ${response.status}${refusal}, not as cairn does` };
  }
  const state = `embeddings ${String(health.embeddings)}, database ${String(health.database)}`;
  if (health.version !== packageVersion) {
    return { name, status: "fail", detail: `cairn ${health.version} answers at ${url}, but this is cairn ${packageVersion}` };
  }
  if (health.status !== "ok") return { name, status: "fail", detail: `cairn at ${url} is degraded (${state})` };
  const found = from === "DATA_DIR" ? ", the server running for DATA_DIR" : "";
  return { name, status: "ok", detail: `cairn ${health.version} answers at ${url}${found} (${state})` };
}

const LABELS: Record<Check["status"], string> = { ok: "ok  ", warn: "WARN", fail: "FAIL" };

export async function doctor(): Promise<boolean> {
  const config = configOrExit();
  const server = await serverCheck(commandServer(config));
  const checks = await checkInstallation(config, { modelWaitMs: 120_000, log: cliLogger(config) });
  checks.splice(1, 0, server);
  for (const check of checks) print(`${LABELS[check.status]}  ${check.name}: ${check.detail}`);
  return checks.every((check) => check.status !== "fail");
}
