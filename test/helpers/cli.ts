import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { testEnv } from "./server.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** The built CLI: tests that spawn it need `npm run build` first. */
export const CLI = join(ROOT, "dist/src/cli.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test settings for `dataDir` over this process's environment, as a spawned CLI sees them. */
export const cliEnv = (dataDir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, ...testEnv(dataDir, env) });

function collect(child: ChildProcess): { stdout: string; stderr: string } {
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  return output;
}

/** Runs `cairn ARGS` to completion; killed after 60 s so a hang fails instead of stalling. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const output = collect(child);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code, ...output });
    });
  });
}

export interface ServeProcess {
  /** The URL on serve's first line, `cairn http://…`. */
  url: string;
  pid: number;
  output: { stdout: string; stderr: string };
  /** SIGTERM, then the finished run. */
  stop(): Promise<CliRun>;
  /** SIGKILL: the process ends at once, whatever it was doing. */
  kill(): Promise<CliRun>;
}

async function answering(url: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if ((await fetch(`${url}/health`).catch(() => null))?.ok) return;
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`nothing answers at ${url}`);
}

/**
 * Spawns `cairn serve` and waits until it answers: serve installs its signal handlers after printing
 * its first line, so a SIGTERM sent on that line alone could still kill it outright.
 */
export async function startServe(env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, "serve"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const output = collect(child);
  const exit = new Promise<CliRun>((resolveRun) => child.once("close", (code) => resolveRun({ code, ...output })));
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve printed no URL: ${output.stdout} ${output.stderr}`)), 30_000);
      child.stdout?.on("data", () => {
        const match = /^cairn (http:\/\/\S+)\n/.exec(output.stdout);
        if (match?.[1]) {
          clearTimeout(timer);
          resolveUrl(match[1]);
        }
      });
      void exit.then((run) => {
        clearTimeout(timer);
        reject(new Error(`serve exited ${run.code}: ${run.stderr}`));
      });
    });
    await answering(url);
    return {
      url,
      pid: child.pid as number,
      output,
      stop: () => {
        if (child.exitCode === null) child.kill("SIGTERM");
        return exit;
      },
      kill: () => {
        if (child.exitCode === null) child.kill("SIGKILL");
        return exit;
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
