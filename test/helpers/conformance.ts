import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);
const PACKAGE = require.resolve("@modelcontextprotocol/conformance/package.json");
/** The suite's command line, as its package names it. */
const SUITE_CLI = join(dirname(PACKAGE), (require(PACKAGE) as { bin: { conformance: string } }).bin.conformance);
/** Lets the suite start on Node 20: see the file. */
const PRELOAD = join(ROOT, "test/helpers/fs-glob-sync/preload.mjs");

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface ConformanceCheck {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO";
  description: string;
  errorMessage?: string;
}

export interface SuiteRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the suite's CLI with `args` to completion; killed after `timeoutMs` so a hang fails instead of stalling. */
export function runSuite(args: string[], timeoutMs = 120_000): Promise<SuiteRun> {
  const child = spawn(process.execPath, ["--import", PRELOAD, SUITE_CLI, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const output = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code, ...output });
    });
  });
}

/** The server scenarios the suite has, as `conformance list --server` prints them (`  - name [versions]`). */
export async function serverScenarios(): Promise<string[]> {
  const listed = await runSuite(["list", "--server"]);
  if (listed.code !== 0) throw new Error(`conformance list failed: ${listed.stderr}`);
  return [...listed.stdout.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1] as string);
}

/**
 * The checks of each scenario of a run with `--output-dir outputDir`: the suite writes them to
 * `server-<scenario>-<timestamp>/checks.json` there.
 */
export function checksIn(outputDir: string): Map<string, ConformanceCheck[]> {
  const scenarios = new Map<string, ConformanceCheck[]>();
  for (const entry of readdirSync(outputDir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (scenario === undefined) continue;
    scenarios.set(scenario, JSON.parse(readFileSync(join(outputDir, entry, "checks.json"), "utf8")) as ConformanceCheck[]);
  }
  return scenarios;
}
