import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse as parseToml } from "smol-toml";
import { describe, expect } from "vitest";
import { HOST_NAMES } from "../../plugin/hosts/index.js";
import { withHome } from "../helpers/fixtures.js";
import { agentOverStdio } from "../helpers/mcp.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import type { HostConfig } from "../../src/wire/hosts.js";

const run = promisify(execFile);

interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A PATH that knows nothing of the checkout: the system's binaries only. */
const BARE_PATH = "/usr/bin:/bin";

/** How a host would start the stdio server from its configuration file. */
function launchOf(config: HostConfig, content = config.files[0]?.content ?? ""): Launch {
  if (config.host === "codex") {
    const entry = (parseToml(content) as { mcp_servers: { cairn: { command: string; args: string[]; env: Record<string, string> } } }).mcp_servers.cairn;
    return { command: entry.command, args: entry.args, env: entry.env };
  }
  const parsed = JSON.parse(content) as Record<string, Record<string, Record<string, unknown>>>;
  const container = { vscode: "servers", opencode: "mcp" }[config.host] ?? "mcpServers";
  const entry = parsed[container]?.cairn as Record<string, unknown>;
  if (config.host === "opencode") {
    const [command, ...args] = entry.command as string[];
    return { command: command as string, args, env: entry.environment as Record<string, string> };
  }
  return { command: entry.command as string, args: entry.args as string[], env: (entry.env ?? {}) as Record<string, string> };
}

/** What the host does with a reference to the key variable in its own syntax: it puts the key there. */
const expand = (env: Record<string, string>, key: string): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([name, value]) => [name, /CAIRN_API_KEY/.test(value) && name === "CAIRN_API_KEY" ? key : value]));

/** Starts the configured server from `cwd` with the bare PATH, connects, and returns who it is. */
async function connectAs(launch: Launch, cwd: string, extraEnv: Record<string, string>): Promise<string> {
  return agentOverStdio({ command: launch.command, args: launch.args, env: { PATH: BARE_PATH, ...launch.env, ...extraEnv }, cwd });
}

/** Runs the onboarding script (claude-code, project twins) in `home/projects/name`; its output and the directory. */
async function onboard(server: TestServer, home: string, name: string): Promise<{ stdout: string; dir: string }> {
  const script = await (await fetch(new URL("/onboard?host=claude-code&project=twins", server.url))).text();
  const dir = join(home, "projects", name);
  mkdirSync(dir, { recursive: true });
  const ran = await run("sh", ["-c", script], { cwd: dir, env: { PATH: process.env.PATH ?? BARE_PATH, HOME: home } });
  return { stdout: ran.stdout, dir };
}

describe("connecting from anywhere", () => {
  // A home directory of the test's own, with an empty directory `empty` in it to start hosts from.
  const it = withHome("cairn-anywhere-", "empty").extend("agent", ({ server }) => server.agent("anywhere"));

  // Eight hosts, each a bridge process started and connected in turn: more than a minute on a busy machine.
  it("runs every host's generated stdio configuration from an empty directory, with nothing fetched by name", { timeout: 180_000 }, async ({ server, agent, home }) => {
    const empty = join(home, "empty");
    const response = await server.request<{ hosts: HostConfig[] }>("/plugin/install?transport=stdio", { as: agent });
    expect(response.body.hosts.map((config) => config.host)).toEqual(HOST_NAMES);
    for (const config of response.body.hosts) {
      const text = JSON.stringify(config);
      expect(text, config.host).not.toMatch(/\bnpx\b|mcp-remote/);
      const launch = launchOf(config);
      // An absolute command: no lookup on the PATH, no package resolved at run time.
      expect(launch.command, config.host).toMatch(/^\//);
      const key: Credentials = agent;
      expect(await connectAs({ ...launch, env: expand(launch.env, key.apiKey) }, empty, { CAIRN_API_KEY: key.apiKey, HOME: home }), config.host).toBe("anywhere");
    }
  });

  it("onboards two directories as two agents whose configurations connect with nothing exported", async ({ server, home }) => {
    const empty = join(home, "empty");
    const ids: string[] = [];
    for (const name of ["alpha", "beta"]) {
      const { stdout, dir } = await onboard(server, home, name);
      expect(stdout).toMatch(/wrote \.mcp\.json for claude-code/);
      const config: HostConfig = { host: "claude-code", transport: "stdio", files: [{ path: ".mcp.json", format: "json", content: readFileSync(join(dir, ".mcp.json"), "utf8") }] };
      const launch = launchOf(config);
      expect(launch.env.CAIRN_KEY_FILE).toMatch(/\.cairn\/agents\/.+\.key$/);
      expect(launch.env).not.toHaveProperty("CAIRN_API_KEY");
      // Started elsewhere, as hosts do, with no CAIRN_* variable in the environment.
      ids.push(await connectAs(launch, empty, { HOME: home }));
    }
    expect(ids[0]).toMatch(/-alpha$/);
    expect(ids[1]).toMatch(/-beta$/);
    expect(ids[0]).not.toBe(ids[1]);
    const members = await server.request<{ agent_id: string }[]>("/projects/twins/members", { as: server.owner });
    expect(members.body.map((member) => member.agent_id).sort()).toEqual([...ids].sort());
  });

  it("lets `cairn mcp` find the directory's agent by itself, from a subdirectory too", async ({ server, home }) => {
    await onboard(server, home, "alpha");
    const dir = join(home, "projects", "alpha", "src", "deep");
    mkdirSync(dir, { recursive: true });
    const cli = join(import.meta.dirname, "../../dist/src/cli.js");
    const who = await connectAs({ command: process.execPath, args: [cli, "mcp"], env: { HOME: home } }, dir, {});
    expect(who).toMatch(/-alpha$/);
  });
});
