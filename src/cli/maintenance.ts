import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { backupDatabase, runChecks, type Check } from "../../tools/admin.js";
import { configOrExit, withRuntime } from "./common.js";
import { backupHelp } from "./help.js";
import { print, printError, UsageError } from "./output.js";

export async function backup(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { force: { type: "boolean", default: false } } });
  const target = positionals[0];
  if (!target || positionals.length > 1) throw new UsageError(backupHelp);
  const file = resolve(target);
  if (existsSync(file) && !values.force) throw new UsageError(`${file} exists; pass --force to overwrite it`);
  const pages = await withRuntime(configOrExit(), { embeddings: false }, (runtime) => backupDatabase(runtime.services, file));
  print(`backed up ${pages} pages to ${file}`);
}

export async function reindex(): Promise<void> {
  const config = configOrExit();
  const count = await withRuntime(config, { embeddings: true }, async (runtime) => {
    const status = await runtime.services.embeddingQueue.settled(15 * 60_000);
    if (status !== "ready") throw new UsageError(`embedding model ${config.EMBEDDING_MODEL} is ${status}`);
    return runtime.services.embeddings.reindexAll((done) => printError(`embedded ${done}`));
  });
  print(`re-embedded ${count} entries with ${config.EMBEDDING_MODEL}`);
}

export async function doctor(): Promise<boolean> {
  const config = configOrExit();
  let checks: Check[];
  try {
    checks = await withRuntime(config, { embeddings: true }, (runtime) => runChecks(runtime.services, 120_000));
  } catch (error) {
    // A database that cannot even be opened is a finding, not a crash.
    checks = [{ name: "database", ok: false, detail: error instanceof Error ? error.message : String(error) }];
  }
  for (const check of checks) print(`${check.ok ? "ok  " : "FAIL"}  ${check.name}: ${check.detail}`);
  return checks.every((check) => check.ok);
}
