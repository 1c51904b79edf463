import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname } from "node:path";
import { packageRoot } from "../src/core/paths.js";
import { round, type Row, type Section } from "./lib.js";
import { backend } from "./postgres.js";

const dash = "–";
const cell = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined || Number.isNaN(value) ? dash : value.toFixed(digits);

/** A plain-text table: scenario, n, p50, p95, ops/s, server CPU per op, RSS, and a note if any. */
function formatTable(rows: Row[]): string {
  const header = ["scenario", "n", "p50 ms", "p95 ms", "ops/s", "CPU ms/op", "RSS MB", ""];
  const lines = rows.map((row) => [
    row.scenario,
    String(row.n),
    cell(row.p50Ms),
    cell(row.p95Ms),
    cell(row.opsPerSec),
    cell(row.cpuMsPerOp),
    cell(row.rssMb, 0),
    row.note ?? "",
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => (line[column] ?? "").length)));
  const format = (line: string[]): string =>
    line
      .map((value, column) => (column === 0 || column === line.length - 1 ? value.padEnd(widths[column] ?? 0) : value.padStart(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [format(header), format(widths.map((width) => "─".repeat(width))), ...lines.map(format)].join("\n");
}

export function formatSection(section: Section): string {
  const parts = [`## ${section.title}`, "", formatTable(section.rows)];
  if (section.targets.length > 0) {
    parts.push("");
    for (const target of section.targets) {
      const verdict = target.met === null ? "n/a" : target.met ? "MET" : "MISSED";
      parts.push(`target  ${target.what}: ${target.goal} → ${target.measured}  [${verdict}]`);
    }
  }
  return parts.join("\n");
}

function gitCommit(): string | null {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: packageRoot, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: packageRoot, encoding: "utf8" }).trim();
    return dirty ? `${commit} (src modified)` : commit;
  } catch {
    return null;
  }
}

export interface Environment {
  /** Where every server's store lives: SQLite in its data directory, or PostgreSQL (BENCH_DATABASE_URL). */
  backend: "sqlite" | "postgres";
  node: string;
  cpus: number;
  cpu_model: string;
  memory_gb: number;
  commit: string | null;
  /** Other work on the machine skews numbers on two cores; the load average shows it. */
  load_average_at_start: number[];
}

export function environment(): Environment {
  return {
    backend: backend(),
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? "unknown",
    memory_gb: round(totalmem() / 2 ** 30),
    commit: gitCommit(),
    load_average_at_start: loadavg().map((value) => round(value, 2)),
  };
}

export function writeJson(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}
