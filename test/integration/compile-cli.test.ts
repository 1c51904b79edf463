import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CompileAnchor as Anchor } from "../../src/wire/compile.js";
import { CLI, type CliRun } from "../helpers/cli.js";
import { withDatabase } from "../helpers/database.js";
import { startTestServer, tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §18: `cairn compile`, the built CLI, run in a real git repository in a temporary
// directory against a real server on loopback.

/** In a function body: it must never reach the output, the server or its database. */
const SECRET = "ZEBRA-CROSSING-7731";

const STORE_TS = `import { readFileSync } from "node:fs";

/** Loads the entries from disk. */
export function loadEntries(path: string): string[] {
  const marker = "${SECRET}";
  return readFileSync(path, "utf8").split("\\n").filter((line) => line !== marker);
}

export function countEntries(path: string): number {
  return loadEntries(path).length;
}

export class Store {
  entries: string[] = [];

  add(entry: string): void {
    this.entries.push(entry);
  }
}
`;

const UTIL_PY = `def slugify(text):
    secret = "${SECRET}"
    return text.lower().replace(" ", "-")
`;

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

/** git without the machine's global and system settings (a global core.hooksPath would move hooks). */
const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
});

const git = (repo: string, args: string[], env: NodeJS.ProcessEnv = gitEnv()): string => execFileSync("git", args, { cwd: repo, env, encoding: "utf8" });

function write(repo: string, path: string, text: string | Buffer): void {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), text);
}

/** A repository with one commit: TypeScript (5 units), Python (2), a README (1) and a binary file (skipped). */
function repository(): string {
  const repo = scratch("cairn-compile-repo-");
  git(repo, ["init", "-q", "-b", "main"]);
  git(repo, ["config", "commit.gpgsign", "false"]);
  write(repo, "src/store.ts", STORE_TS);
  write(repo, "src/util.py", UTIL_PY);
  write(repo, "README.md", "# Demo\n\nA repository to compile.\n");
  write(repo, "logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01, 0x02]));
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", "first"]);
  return repo;
}

/** The CLI's settings: the server's URL (or a port where nothing answers) and the agent to act as. */
function cliEnv(options: { url?: string; as?: Credentials; dataDir?: string } = {}): NodeJS.ProcessEnv {
  const identity = options.as ? { CAIRN_AGENT_ID: options.as.agentId, CAIRN_API_KEY: options.as.apiKey } : {};
  return { ...gitEnv(), ...testEnv(options.dataDir ?? scratch("cairn-compile-data-"), { CAIRN_URL: options.url ?? "http://127.0.0.1:9", ...identity }) };
}

/** Runs `cairn ARGS` in `cwd` to completion (killed after 60 s, so a hang fails rather than stalls). */
function cairn(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return run(process.execPath, [CLI, ...args], cwd, env);
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const output = { stdout: "", stderr: "" };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code, ...output });
    });
  });
}

async function json<T>(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<T> {
  const result = await cairn(cwd, [...args, "--json"], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

interface DryRun {
  dry_run: true;
  checked: boolean;
  files: number;
  units: number;
  skipped: { missing: number; oversized: number; binary: number; excluded: number };
  sending: { fresh: number; stale: number; unknown: number };
  prune_paths: string[];
  units_to_send: { path: string; symbol: string; kind: string; sha: string; description: string }[];
}

interface Compiled {
  project: string | null;
  commit: string | null;
  files: number;
  units: number;
  sent: number;
  requests: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  prune_paths: string[];
}

const unitNames = (dry: DryRun): string[] => dry.units_to_send.map((unit) => `${unit.path} ${unit.symbol}`.trim()).sort();

describe("cairn compile: choosing files", () => {
  it("leaves out tests, fixtures, vendored and generated code by default; .cairnignore and --exclude add rules, and !pattern brings files back", async () => {
    const repo = repository();
    write(repo, "src/store.test.ts", "export function testAdd(): void {}\n");
    write(repo, "test/helpers.ts", "export function helper(): number { return 1; }\n");
    write(repo, "fixtures/sample.py", "def sample():\n    return 1\n");
    write(repo, "vendor/lib.js", "export function vendored() { return 1; }\n");
    write(repo, "dist/store.js", "export function built() { return 1; }\n");
    write(repo, "scripts/release.py", "def release():\n    return 1\n");
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", "the rest"]);
    const env = cliEnv();
    const files = (dry: DryRun): string[] => [...new Set(dry.units_to_send.map((unit) => unit.path))].sort();

    const defaults = await json<DryRun>(repo, ["compile", "--all", "--dry-run"], env);
    expect(files(defaults)).toEqual(["README.md", "scripts/release.py", "src/store.ts", "src/util.py"]);
    expect(defaults.skipped).toMatchObject({ binary: 1, excluded: 5 });

    const excluded = await json<DryRun>(repo, ["compile", "--all", "--dry-run", "--exclude", "scripts/", "--exclude", "*.md"], env);
    expect(files(excluded)).toEqual(["src/store.ts", "src/util.py"]);

    write(repo, ".cairnignore", "# our own rules\nsrc/util.py\n!test/\n");
    const own = await json<DryRun>(repo, ["compile", "--all", "--dry-run"], env);
    expect(files(own)).toEqual(["README.md", "scripts/release.py", "src/store.ts", "test/helpers.ts"]);
    // --exclude comes last, so it wins over a .cairnignore that brought a folder back.
    expect(files(await json<DryRun>(repo, ["compile", "--all", "--dry-run", "--exclude", "test/"], env))).not.toContain("test/helpers.ts");
    // Named explicitly, an excluded file is still left out, and counted.
    const named = await json<DryRun>(repo, ["compile", "vendor/lib.js", "--dry-run"], env);
    expect(named).toMatchObject({ files: 0, skipped: { excluded: 1 } });
  });

  it("compiles given files and directories, every file with --all, and by default the last commit's files and those changed since", async () => {
    const repo = repository();
    const env = cliEnv();
    const all = await json<DryRun>(repo, ["compile", "--all", "--dry-run"], env);
    expect(all).toMatchObject({ checked: false, files: 3, units: 8, skipped: { binary: 1 } });
    expect(unitNames(all)).toEqual(["README.md", "src/store.ts", "src/store.ts Store", "src/store.ts Store.add", "src/store.ts countEntries", "src/store.ts loadEntries", "src/util.py", "src/util.py slugify"]);

    const python = await json<DryRun>(join(repo, "src"), ["compile", "util.py", "--dry-run"], env);
    expect(unitNames(python)).toEqual(["src/util.py", "src/util.py slugify"]);
    const directory = await json<DryRun>(repo, ["compile", "src", "--dry-run"], env);
    expect(directory.files).toBe(2);

    // The root commit: everything in it. Then a commit of the README, and a new file not yet added.
    expect((await json<DryRun>(repo, ["compile", "--dry-run"], env)).files).toBe(3);
    write(repo, "README.md", "# Demo\n\nChanged.\n");
    git(repo, ["commit", "-q", "-am", "readme"]);
    write(repo, "notes/todo.py", "def later():\n    pass\n");
    expect(unitNames(await json<DryRun>(repo, ["compile", "--dry-run"], env))).toEqual(["README.md", "notes/todo.py", "notes/todo.py later"]);
  });

  it("refuses a path outside the repository, paths with --all, and a directory that is no repository, with exit code 2", async () => {
    const repo = repository();
    const env = cliEnv();
    const outside = await cairn(repo, ["compile", "..", "--dry-run"], env);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("outside the repository");
    expect((await cairn(repo, ["compile", "src", "--all"], env)).code).toBe(2);
    const nowhere = await cairn(scratch("cairn-compile-plain-"), ["compile", "--all"], env);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain("git repository");
  });

  it("--help prints its usage, and cairn --help lists it", async () => {
    const env = cliEnv();
    const help = await cairn(scratch("cairn-compile-help-"), ["compile", "--help"], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: cairn compile/);
    expect((await cairn(scratch("cairn-compile-help-"), ["--help"], env)).stdout).toContain("  compile");
  });
});

describe("cairn compile --dry-run", () => {
  it("lists each unit it would send by kind, sha, path and symbol, and never a line of source", async () => {
    const repo = repository();
    const env = cliEnv();
    const plain = await cairn(repo, ["compile", "--all", "--dry-run"], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/unchecked function\s+[0-9a-f]{12} {2}src\/store\.ts {2}loadEntries/);
    expect(plain.stdout).toContain("would send 8 units and prune 0 paths in 1 request; no server was asked");
    expect(plain.stdout).toContain("nothing was written");
    const asJson = await cairn(repo, ["compile", "--all", "--dry-run", "--json"], env);
    expect(asJson.code).toBe(0);
    for (const output of [plain.stdout, plain.stderr, asJson.stdout, asJson.stderr]) {
      expect(output).not.toContain(SECRET);
      expect(output).not.toContain("readFileSync(path");
      expect(output).not.toContain("text.lower()");
    }
  });
});

describe("cairn compile --install-hook", () => {
  const hookAt = (repo: string, folder = ".git/hooks"): string => join(repo, folder, "post-commit");
  const logOf = (repo: string): string => join(repo, ".git", "cairn-compile.log");
  const logSays = async (repo: string, text: string): Promise<boolean> =>
    eventually(() => existsSync(logOf(repo)) && readFileSync(logOf(repo), "utf8").includes(text), 30_000);

  it("writes a post-commit hook that exits 0 at once with the server down, run directly and by a real commit", async () => {
    const repo = repository();
    const env = cliEnv({ as: { agentId: "alice", apiKey: "cairn_not_a_real_key" } });
    const installed = await cairn(repo, ["compile", "--install-hook", "--project", "web"], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(hookAt(repo));
    expect(statSync(hookAt(repo)).mode & 0o111).toBe(0o111);
    expect(readFileSync(hookAt(repo), "utf8")).toContain("--project 'web'");

    const direct = await run(hookAt(repo), [], repo, env);
    expect(direct).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await logSays(repo, "no Cairn server answers at http://127.0.0.1:9")).toBe(true);

    unlinkSync(logOf(repo));
    write(repo, "src/util.py", UTIL_PY.replace("lower", "upper"));
    const commit = await run("git", ["commit", "-q", "-am", "shout"], repo, env);
    expect(commit).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await logSays(repo, "no Cairn server answers")).toBe(true);
  });

  it("exits 0 without a word when cairn is nowhere to be found", async () => {
    const repo = repository();
    const env = cliEnv();
    expect((await cairn(repo, ["compile", "--install-hook"], env)).code).toBe(0);
    // The checkout the hook names has moved away, and no `cairn` is on PATH.
    writeFileSync(hookAt(repo), readFileSync(hookAt(repo), "utf8").replaceAll(CLI, "/nonexistent/cairn/dist/src/cli.js"));
    const result = await run(hookAt(repo), [], repo, { ...env, PATH: "/usr/bin:/bin" });
    expect(result).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(existsSync(logOf(repo))).toBe(false);
  });

  it("writes the hook where core.hooksPath points, and a commit runs it there", async () => {
    const repo = repository();
    git(repo, ["config", "core.hooksPath", ".githooks"]);
    const env = cliEnv({ as: { agentId: "alice", apiKey: "cairn_not_a_real_key" } });
    const installed = await cairn(join(repo, "src"), ["compile", "--install-hook"], env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(existsSync(hookAt(repo, ".githooks"))).toBe(true);
    expect(existsSync(hookAt(repo))).toBe(false);
    write(repo, "README.md", "# Demo\n\nAgain.\n");
    expect((await run("git", ["commit", "-q", "-am", "again"], repo, env)).code).toBe(0);
    expect(await logSays(repo, "no Cairn server answers")).toBe(true);
  });

  it("rewrites a hook it wrote, and refuses to touch another, printing the line to add to it", async () => {
    const repo = repository();
    const env = cliEnv();
    expect((await cairn(repo, ["compile", "--install-hook"], env)).code).toBe(0);
    const again = await cairn(repo, ["compile", "--install-hook", "--project", "web"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(hookAt(repo), "utf8")).toContain("--project 'web'");

    const other = repository();
    const foreign = "#!/bin/sh\necho 'the team hook'\n";
    write(other, ".git/hooks/post-commit", foreign);
    const refused = await cairn(other, ["compile", "--install-hook"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("cairn did not write it");
    expect(refused.stderr).toContain("(cairn compile </dev/null >/dev/null 2>&1 &)");
    expect(readFileSync(hookAt(other), "utf8")).toBe(foreign);
  });
});

describe("cairn compile against a server", () => {
  async function setUp(serverEnv: Record<string, string> = {}): Promise<{ server: TestServer; repo: string; env: NodeJS.ProcessEnv; alice: Credentials }> {
    const server = await startTestServer(serverEnv);
    servers.push(server);
    const alice = await server.agent("alice");
    expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
    return { server, repo: repository(), env: cliEnv({ url: server.url, as: alice }), alice };
  }

  async function anchors(server: TestServer, as: Credentials, query: string): Promise<Anchor[]> {
    const response = await server.request<Anchor[]>(`/compile/anchors?project=web&${query}`, { as });
    expect(response.status, response.text).toBe(200);
    return response.body;
  }

  it("sends every unit once, nothing when nothing changed, only an edited symbol, and prunes removed symbols and deleted files", async () => {
    const { server, repo, env, alice } = await setUp();
    const compile = (args: string[]): Promise<Compiled> => json<Compiled>(repo, ["compile", ...args, "--project", "web"], env);

    const dry = await json<DryRun>(repo, ["compile", "--all", "--dry-run", "--project", "web"], env);
    expect(dry).toMatchObject({ checked: true, sending: { unknown: 8, stale: 0, fresh: 0 } });
    expect(await anchors(server, alice, "")).toEqual([]);

    const head = git(repo, ["rev-parse", "HEAD"]).trim();
    const first = await compile(["--all"]);
    expect(first).toMatchObject({ project: "web", commit: head, files: 3, units: 8, sent: 8, created: 8, updated: 0, removed: 0 });
    const stored = await anchors(server, alice, "path=src/store.ts");
    expect(stored.map((anchor) => anchor.symbol).sort()).toEqual(["", "Store", "Store.add", "countEntries", "loadEntries"]);
    expect(stored.every((anchor) => anchor.commit === head)).toBe(true);

    expect(await compile(["--all"])).toMatchObject({ sent: 0, requests: 0, created: 0, updated: 0, removed: 0 });

    write(repo, "src/store.ts", STORE_TS.replace(SECRET, "ZEBRA-CROSSING-8842"));
    const preview = await cairn(repo, ["compile", "src/store.ts", "--dry-run", "--project", "web"], env);
    expect(preview.stdout).toMatch(/^stale\s+function\s+[0-9a-f]{12} {2}src\/store\.ts {2}loadEntries$/m);
    expect(preview.stdout).toContain("would send 1 unit and prune 0 paths");
    const edited = await compile(["src/store.ts"]);
    expect(edited).toMatchObject({ files: 1, units: 5, sent: 1, created: 0, updated: 1, unchanged: 0, removed: 0 });

    // A removed function changes the module's shape and leaves an anchor behind: the file goes whole, with its prune.
    write(repo, "src/store.ts", STORE_TS.replace(/export function countEntries[^}]*}\n\n/, ""));
    const removed = await compile(["--all"]);
    expect(removed).toMatchObject({ sent: 4, updated: 2, unchanged: 2, removed: 1, prune_paths: ["src/store.ts"] });
    expect((await anchors(server, alice, "path=src/store.ts")).map((anchor) => anchor.symbol).sort()).toEqual(["", "Store", "Store.add", "loadEntries"]);

    rmSync(join(repo, "src/util.py"));
    const deleted = await compile(["src"]);
    expect(deleted).toMatchObject({ sent: 0, removed: 2, prune_paths: ["src/util.py"] });
    expect(await anchors(server, alice, "path=src/util.py")).toEqual([]);
    expect((await anchors(server, alice, "")).length).toBe(5);

    const contents = await withDatabase(server.dataDir, (db) => db.all<{ content: string }>("SELECT content FROM memory"));
    expect(contents.length).toBeGreaterThan(0);
    for (const { content } of contents) expect(content).not.toContain("ZEBRA-CROSSING");
  }, 120_000);

  it("keeps memory in step with each commit through the installed hook", async () => {
    const { server, repo, env, alice } = await setUp();
    expect((await cairn(repo, ["compile", "--install-hook", "--project", "web"], env)).code).toBe(0);
    expect((await cairn(repo, ["compile", "--all", "--project", "web"], env)).code).toBe(0);
    const before = (await anchors(server, alice, "path=src/store.ts")).find((anchor) => anchor.symbol === "Store.add");

    write(repo, "src/store.ts", STORE_TS.replace("this.entries.push(entry);", "this.entries.unshift(entry);"));
    rmSync(join(repo, "src/util.py"));
    expect((await run("git", ["commit", "-q", "-am", "newest first"], repo, env)).code).toBe(0);
    const head = git(repo, ["rev-parse", "HEAD"]).trim();
    const log = join(repo, ".git", "cairn-compile.log");
    expect(await eventually(() => existsSync(log) && readFileSync(log, "utf8").includes("compiled "), 30_000)).toBe(true);
    // The method changed, and so did the class that holds it; the deleted file's two units went.
    expect(readFileSync(log, "utf8")).toMatch(/sent 2, created 0, updated 2, unchanged 0, removed 2/);
    const after = (await anchors(server, alice, "path=src/store.ts")).find((anchor) => anchor.symbol === "Store.add");
    expect(after?.sha).not.toBe(before?.sha);
    expect(after?.commit).toBe(head);
    expect(await anchors(server, alice, "path=src/util.py")).toEqual([]);
  }, 120_000);

  it("sends again in halves what a server with a smaller MAX_BODY_BYTES refuses", async () => {
    const { server, repo, env, alice } = await setUp({ MAX_BODY_BYTES: "8192", MAX_CONTENT_BYTES: "8192" });
    const functions = Array.from({ length: 40 }, (_, index) => `/** ${"Explains what this step does and why it exists. ".repeat(6)}*/\nexport function step${index}(): number {\n  return ${index};\n}\n`);
    write(repo, "src/steps.ts", functions.join("\n"));
    const result = await json<Compiled>(repo, ["compile", "src/steps.ts", "--project", "web"], env);
    expect(result).toMatchObject({ units: 41, sent: 41, created: 41 });
    expect((await anchors(server, alice, "path=src/steps.ts&limit=100")).length).toBe(41);
  });
});
