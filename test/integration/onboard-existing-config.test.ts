import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { runInNewContext } from "node:vm";
import { parse as parseToml } from "smol-toml";
import { describe, expect } from "vitest";
import { HOST_NAMES, HOSTS } from "../../plugin/hosts/index.js";
import { withHome } from "../helpers/fixtures.js";
import { agentOverStdio } from "../helpers/mcp.js";
import type { TestServer } from "../helpers/server.js";

/** A PATH that knows nothing of the checkout: the system's binaries only. */
const BARE_PATH = "/usr/bin:/bin";

/** Where each host keeps its servers; codex's are TOML tables under `mcp_servers`. */
const CONTAINER: Record<string, string> = { vscode: "servers", opencode: "mcp", codex: "mcp_servers" };
const containerOf = (host: string): string => CONTAINER[host] ?? "mcpServers";
const syntaxOf = (host: string): string => HOSTS.find((renderer) => renderer.host === host)?.syntax ?? "";

/**
 * The file the script writes for `host` on this platform, under HOME for `~/` paths, else in the
 * project directory; and how the script names it (a project's file by its relative path).
 */
function configFile(host: string, home: string, work: string): { path: string; shown: string } {
  const files = HOSTS.find((renderer) => renderer.host === host)?.render({ agentId: "a", url: "http://x", launcher: ["cairn", "mcp"], keyVariable: "K" }, "stdio").files ?? [];
  const path = (process.platform === "darwin" ? files[0] : files[files.length - 1])?.path ?? "";
  return path.startsWith("~/") ? { path: join(home, path.slice(2)), shown: join(home, path.slice(2)) } : { path: join(work, path), shown: path };
}

/**
 * A configuration someone already had: another server and a setting of their own, indented by four,
 * with a comment (and a trailing comma) where the host reads them.
 */
function existingConfig(host: string): string {
  if (host === "codex") return 'model = "o3"  # chosen by hand\n\n[mcp_servers.other]\ncommand = "other-server"\nargs = ["--port", "1"]\n';
  const other = host === "opencode" ? '{ "type": "local", "command": ["other-server", "--port", "1"] }' : '{ "command": "other-server", "args": ["--port", "1"] }';
  const syntax = syntaxOf(host);
  const comment = syntax === "json" ? "" : "    // the team's own servers\n";
  const trailing = syntax === "jsonc" ? "," : "";
  return `{\n    "theme": "dark",\n${comment}    "${containerOf(host)}": {\n        "other": ${other}${trailing}\n    }${trailing}\n}\n`;
}

/** What the host makes of its file: TOML, or JSON read as JavaScript reads it (comments and trailing commas allowed). */
const read = (host: string, text: string): Record<string, Record<string, Record<string, unknown>>> =>
  (host === "codex" ? parseToml(text) : JSON.parse(JSON.stringify(runInNewContext(`(${text})`)))) as Record<string, Record<string, Record<string, unknown>>>;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script with `sh` in `cwd`, as `curl … | sh` would, and returns how it ended (it never throws on a failure). */
function sh(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const output = { stdout: "", stderr: "" };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, ...output }));
  });
}

/** What the script printed after saying to add it by hand: the entry. */
const entryPrinted = (stderr: string): string => stderr.slice(stderr.indexOf(":\n", stderr.indexOf(" yourself, ")) + 2);
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const onboardScript = async (server: TestServer, host: string): Promise<string> => (await fetch(new URL(`/onboard?host=${host}`, server.url))).text();
const backupsBeside = (path: string): string[] => readdirSync(dirname(path)).filter((name) => name.startsWith(`${basename(path)}.cairn-`) && name.endsWith(".bak"));

/** Starts the stdio server a host would start from `entry`, from `cwd` with the bare PATH, and asks who it is. */
async function connectWith(host: string, entry: Record<string, unknown>, cwd: string, home: string): Promise<string> {
  const [command, ...args] = host === "opencode" ? (entry.command as string[]) : [entry.command as string, ...(entry.args as string[])];
  const env = (host === "opencode" ? entry.environment : entry.env) as Record<string, string>;
  return agentOverStdio({ command: command as string, args, env: { PATH: BARE_PATH, ...env, HOME: home }, cwd });
}

/** Every line of `before`, in order, in `after`: nothing the user wrote was reformatted (a comma may be added after a member). */
function keepsLines(before: string, after: string): boolean {
  const afterLines = after.split("\n").map((line) => line.replace(/,$/, ""));
  let at = 0;
  for (const line of before.split("\n").map((each) => each.replace(/,$/, ""))) {
    at = afterLines.indexOf(line, at);
    if (at < 0) return false;
    at++;
  }
  return true;
}

describe("onboarding where the host's configuration already exists", () => {
  // A home directory of the test's own, with the project directory `work` (`dir`) in it.
  const it = withHome("cairn-onboard-merge-", "work");

  for (const host of HOST_NAMES) {
    it(`adds Cairn to ${host}'s file beside the server there, keeps the rest and a backup, and changes nothing the second time`, async ({ server, home, dir: work }) => {
      const { path, shown } = configFile(host, home, work);
      const original = existingConfig(host);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, original);
      const script = await onboardScript(server, host);
      const env = { PATH: process.env.PATH ?? BARE_PATH, HOME: home, CAIRN_AGENT_ID: `merged-${host}` };

      const first = await sh(script, work, env);
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`wrote cairn's entry into ${shown} for ${host} as merged-${host}, keeping everything else in it; the original is in ${shown}.cairn-`);
      const backups = backupsBeside(path);
      expect(backups).toHaveLength(1);
      expect(readFileSync(join(dirname(path), backups[0] as string), "utf8")).toBe(original);

      const merged = readFileSync(path, "utf8");
      expect(keepsLines(original, merged), merged).toBe(true);
      const before = read(host, original);
      const after = read(host, merged);
      const servers = after[containerOf(host)] ?? {};
      expect(Object.keys(servers)).toEqual(["other", "cairn"]);
      expect(servers.other).toEqual(before[containerOf(host)]?.other);
      expect(after).toMatchObject(host === "codex" ? { model: "o3" } : { theme: "dark" });
      // The entry works: the host's stdio server, started from elsewhere with nothing exported, is this directory's agent.
      expect(await connectWith(host, servers.cairn as Record<string, unknown>, home, home)).toBe(`merged-${host}`);

      const second = await sh(script, work, env);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain(`${shown} already connects ${host} as merged-${host}; left as it is`);
      expect(readFileSync(path, "utf8")).toBe(merged);
      expect(backupsBeside(path)).toEqual(backups);
    });

    it(`leaves an unreadable ${host} file as it is, says why, prints the entry to add, and exits 1`, async ({ server, home, dir: work }) => {
      const { path, shown } = configFile(host, home, work);
      mkdirSync(dirname(path), { recursive: true });
      const broken =
        host === "codex" ? '[mcp_servers.other\ncommand = "other-server"\n' : `{\n  "${containerOf(host)}": {\n    "other": { "command": "other-server" }\n`;
      // A host that reads plain JSON does not read comments either: such a file is not merged into.
      const commented = `{\n  // ours\n  "${containerOf(host)}": {}\n}\n`;
      const unreadable = syntaxOf(host) === "json" ? [broken, commented] : [broken];
      const script = await onboardScript(server, host);
      for (const text of unreadable) {
        writeFileSync(path, text);
        const ran = await sh(script, work, { PATH: process.env.PATH ?? BARE_PATH, HOME: home, CAIRN_AGENT_ID: `unmerged-${host}` });
        expect(ran.code, text).toBe(1);
        expect(ran.stderr).toMatch(new RegExp(`cairn onboard: ${escapeRegExp(shown)} is not valid ${host === "codex" ? "TOML" : "JSON"}[^\\n]*\\(line \\d+, column \\d+: [^\\n]+\\); it is left as it is\\n`));
        expect(ran.stderr).toContain(`to connect ${host} as unmerged-${host}, add this to ${shown} yourself, ${host === "codex" ? "as a table of its own" : `in its "${containerOf(host)}" object`}:\n`);
        expect(readFileSync(path, "utf8")).toBe(text);
        expect(backupsBeside(path)).toEqual([]);
        // What it prints is the entry itself, ready to paste.
        const printed = entryPrinted(ran.stderr);
        const entry = host === "codex" ? (parseToml(printed) as { mcp_servers: Record<string, Record<string, unknown>> }).mcp_servers.cairn : (JSON.parse(`{${printed}}`) as Record<string, Record<string, unknown>>).cairn;
        expect(JSON.stringify(entry)).toContain(`"CAIRN_AGENT_ID":"unmerged-${host}"`);
      }
    });
  }

  it("prints the entry to add by hand when the machine has no node to merge with", async ({ server, home, dir: work }) => {
    // A machine with the usual tools and no node: a symbolic link to each tool the script uses.
    const bin = join(home, "bin");
    mkdirSync(bin);
    for (const tool of ["curl", "id", "hostname", "basename", "dirname", "tr", "sed", "cut", "mkdir", "cat", "chmod", "tail", "grep", "uname"]) {
      const found = ["/usr/bin", "/bin"].map((dir) => join(dir, tool)).find((candidate) => existsSync(candidate));
      if (found) symlinkSync(found, join(bin, tool));
    }
    // …and not the server's machine, so no server installation to borrow node from.
    const script = (await onboardScript(server, "claude-code")).replace(/^SERVER_NODE=.*$/m, "SERVER_NODE=''");
    const path = join(work, ".mcp.json");
    const original = existingConfig("claude-code");
    writeFileSync(path, original);
    const ran = await sh(script, work, { PATH: bin, HOME: home, CAIRN_AGENT_ID: "no-node" });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`cairn onboard: .mcp.json exists, and adding to it takes node, which is not on this machine; it is left as it is\n`);
    const printed = entryPrinted(ran.stderr);
    // Without a bridge on the machine the entry is the HTTP one, with the key left to the environment.
    expect(JSON.parse(`{${printed}}`)).toEqual({
      cairn: { type: "http", url: `${server.url}/mcp`, headers: { "X-Agent-ID": "no-node", "X-API-Key": "${CAIRN_API_KEY}" } },
    });
    expect(readFileSync(path, "utf8")).toBe(original);
    expect(backupsBeside(path)).toEqual([]);
  });
});
