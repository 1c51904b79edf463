import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { migrateStore as copyStore } from "../app.js";
import { migrateStoreHelp } from "./help.js";
import { print, printError, UsageError } from "./output.js";

export async function migrateStore(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { from: { type: "string" }, to: { type: "string" } } });
  if (!values.from || !values.to || positionals.length > 0) throw new UsageError(migrateStoreHelp);
  const file = resolve(values.from);
  if (!existsSync(file)) throw new UsageError(`no SQLite file at ${file}`);
  if (statSync(file).isDirectory()) throw new UsageError(`${file} is a directory: --from takes the SQLite file, DATA_DIR/cairn.db`);
  if (!/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError("--to must be a postgres:// or postgresql:// URL");
  const report = await copyStore(file, values.to, (table, rows) => printError(`copied ${table}: ${rows}`));
  const rows = report.tables.reduce((sum, table) => sum + table.rows, 0);
  print(`copied ${rows} rows in ${report.tables.length} tables and ${report.vectors} vectors; every count matches`);
}
