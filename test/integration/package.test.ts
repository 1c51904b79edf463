import { execFile, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");

describe("the npm package", () => {
  const work = tempDir("cairn-package-");
  let tarball = "";
  let files: string[] = [];
  beforeAll(async () => {
    // `npm test` has just built dist/; packing again would only rebuild it.
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: ROOT, maxBuffer: 64 * 2 ** 20 });
    const [packed] = JSON.parse(stdout) as { filename: string; name: string; files: { path: string }[] }[];
    tarball = join(work, packed?.filename ?? "");
    files = (packed?.files ?? []).map((file) => file.path);
    expect(packed?.name).toBe("cairn-blackboard");
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("carries what a running install needs, and none of the sources or tests", () => {
    for (const needed of [
      "bin/cairn.js",
      "dist/src/cli.js",
      "dist/src/embed/onnx-worker.js",
      "dist/src/services/graph/graph-worker.js",
      "dist/ui/index.html",
      "dist/ui/app.js",
      "dist/ui/styles.css",
      "models/universal-sentence-encoder-lite/model-int8.onnx",
      "models/universal-sentence-encoder-lite/tokenizer.json",
      "src/store/migrations/sqlite/001_init.sql",
      "src/store/migrations/postgres/001_init.sql",
      "plugin/claude-code/.claude-plugin/plugin.json",
      "plugin/claude-code/hooks/hooks.json",
      "plugin/claude-code/hooks/session-end.mjs",
      ".claude-plugin/marketplace.json",
      "LICENSE",
      "README.md",
    ]) {
      expect(files, needed).toContain(needed);
    }
    expect(files.filter((file) => /^(test|bench|ui\/src)\//.test(file) || (/^src\/.*\.ts$/.test(file) && !file.endsWith(".d.ts")) || file === ".npmrc")).toEqual([]);
  });

  it("installs globally from the tarball with nothing but the npm registry, and the installed cairn serves from any directory", async () => {
    const prefix = join(work, "prefix");
    // Outside the checkout, so its npm settings play no part: what the package itself does is what counts.
    await run("npm", ["install", "-g", "--prefix", prefix, tarball], { cwd: work, maxBuffer: 64 * 2 ** 20 });
    const anywhere = join(work, "anywhere");
    mkdirSync(anywhere);
    const child = spawn(join(prefix, "bin", "cairn"), ["serve"], {
      cwd: anywhere,
      env: { PATH: `${resolve(process.execPath, "..")}:/usr/bin:/bin`, HOME: work, DATA_DIR: join(work, "data"), PORT: "0", ARCHIVIST: "off", AUDIT_LOG: "off" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        createInterface({ input: child.stdout }).once("line", (line) => resolveUrl(/^cairn (\S+)/.exec(line)?.[1] ?? ""));
        child.once("exit", (code) => reject(new Error(`cairn serve exited with ${code}`)));
      });
      const page = await fetch(`${url}/ui/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<script");
      // The bundled model loads from the installed package: no download, no native install step.
      expect(await eventually(async () => ((await (await fetch(`${url}/health`)).json()) as { embeddings: string }).embeddings === "ready", 60_000)).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolveExit) => child.once("exit", resolveExit));
    }
    // The install compiles better-sqlite3 and hnswlib-node where no prebuilt binary can be fetched:
    // on two cores shared with other work that once took past 300 s. A hang still fails.
  }, 600_000);

  it("names the cause when SQLite's native module is missing, as an install that could neither download nor build it leaves it", async () => {
    const prefix = join(work, "no-native");
    // No install scripts: better-sqlite3 gets no binary, as where GitHub and nodejs.org are unreachable.
    await run("npm", ["install", "-g", "--ignore-scripts", "--prefix", prefix, tarball], { cwd: work, maxBuffer: 64 * 2 ** 20 });
    const env = { PATH: `${resolve(process.execPath, "..")}:/usr/bin:/bin`, HOME: work, DATA_DIR: join(work, "no-native-data"), PORT: "0", ARCHIVIST: "off", AUDIT_LOG: "off" };
    const cairn = join(prefix, "bin", "cairn");
    const doctor = await run(cairn, ["doctor"], { cwd: work, env }).then(
      () => ({ code: 0, stdout: "" }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(doctor.code).toBe(1);
    const line = doctor.stdout.split("\n").find((text) => text.includes("sqlite module")) ?? "";
    expect(line).toMatch(/^FAIL/);
    expect(line).toContain("was not installed");
    expect(line).toContain("npm rebuild better-sqlite3 --nodedir=");
    const serve = await run(cairn, ["serve"], { cwd: work, env, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain("SQLite's native module (better-sqlite3) was not installed");
    expect(serve.stderr).not.toContain("bindings file");
  }, 300_000);
});
