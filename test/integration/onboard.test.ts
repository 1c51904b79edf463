import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse as parseToml } from "smol-toml";
import { describe, expect } from "vitest";
import { withHome } from "../helpers/fixtures.js";
import type { TestServer } from "../helpers/server.js";

const run = promisify(execFile);

/** A home directory of the test's own, and in it the directory `work` (`dir`) where the script runs. */
const it = withHome("cairn-onboard-home-", "work");

const script = async (server: TestServer, query: string): Promise<{ status: number; text: string; type: string | null }> => {
  const response = await fetch(new URL(`/onboard${query}`, server.url));
  return { status: response.status, text: await response.text(), type: response.headers.get("content-type") };
};
const sh = (home: string, text: string, env: Record<string, string> = {}) =>
  run("sh", ["-c", text], { cwd: join(home, "work"), env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CAIRN_AGENT_ID: "onboarded", ...env } });

describe("GET /onboard", () => {
  it("registers, stores the key 0600, joins the project, writes a working config; a second run changes nothing", async ({ server, home, dir: work }) => {
    const fetched = await script(server, "?project=launchpad&host=claude-code");
    expect(fetched.status).toBe(200);
    expect(fetched.type).toMatch(/^text\/x-shellscript/);
    expect(fetched.text.startsWith("#!/bin/sh\n")).toBe(true);

    const first = await sh(home, fetched.text);
    expect(first.stdout).toMatch(/registered onboarded/);
    const keyFile = join(home, ".cairn", "agents", "onboarded.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, "utf8").trim();
    const me = await server.request<{ agent_id: string; projects: string[] }>("/agents/me", { as: { agentId: "onboarded", apiKey: key } });
    expect(me.body).toMatchObject({ agent_id: "onboarded", projects: ["launchpad"] });

    // The bridge by absolute path (no cairn on this PATH: the server's own, on this machine), reading the key from its file.
    const config = JSON.parse(readFileSync(join(work, ".mcp.json"), "utf8")) as { mcpServers: { cairn: { command: string; args: string[]; env: Record<string, string> } } };
    expect(config.mcpServers.cairn).toEqual({
      command: process.execPath,
      args: [join(import.meta.dirname, "../../dist/src/cli.js"), "mcp"],
      env: { CAIRN_URL: server.url, CAIRN_AGENT_ID: "onboarded", CAIRN_KEY_FILE: keyFile },
    });
    expect(readFileSync(join(home, ".cairn", "connections.tsv"), "utf8")).toBe(`${work}\tonboarded\t${server.url}\t${keyFile}\n`);

    const before = { config: readFileSync(join(work, ".mcp.json"), "utf8"), key: readFileSync(keyFile, "utf8") };
    const agents = (await server.request<unknown[]>("/agents?limit=500", { as: server.owner })).body.length;
    const second = await sh(home, fetched.text);
    expect(second.stdout).toMatch(/reusing the key/);
    expect(second.stdout).toMatch(/left as it is/);
    expect(readFileSync(join(work, ".mcp.json"), "utf8")).toBe(before.config);
    expect(readFileSync(keyFile, "utf8")).toBe(before.key);
    expect((await server.request<unknown[]>("/agents?limit=500", { as: server.owner })).body.length).toBe(agents);
  });

  it("detects the host when none is named: a codex on the PATH gets its TOML config", async ({ server, home }) => {
    const bin = join(home, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "codex"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const fetched = await script(server, "");
    const ran = await sh(home, fetched.text, { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, CAIRN_AGENT_ID: "detected" });
    expect(ran.stdout).toMatch(/wrote .*\.codex\/config\.toml for codex/);
    const config = parseToml(readFileSync(join(home, ".codex", "config.toml"), "utf8")) as { mcp_servers: { cairn: { env: Record<string, string> } } };
    expect(config.mcp_servers.cairn.env).toEqual({ CAIRN_URL: server.url, CAIRN_AGENT_ID: "detected", CAIRN_KEY_FILE: join(home, ".cairn", "agents", "detected.key") });
  });

  // Debian's shellcheck, when the machine has it: the script is clean under POSIX sh rules.
  it.skipIf(!existsSync("/usr/bin/shellcheck"))("passes shellcheck as POSIX sh", async ({ server, home }) => {
    for (const query of ["", "?project=web&host=codex"]) {
      const path = join(home, `onboard${query.length}.sh`);
      writeFileSync(path, (await script(server, query)).text);
      await expect(run("/usr/bin/shellcheck", ["-s", "sh", path])).resolves.toBeDefined();
    }
  });

  it("gives each directory its own agent (user-machine-directory) unless one is named, and uses an installed cairn by its path", async ({ server, home }) => {
    const bin = join(home, "cairn-bin");
    mkdirSync(bin, { recursive: true });
    // An installed cairn, as \`npm install -g\` leaves it: a launcher on the PATH.
    writeFileSync(join(bin, "cairn"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(import.meta.dirname, "../../dist/src/cli.js"))} "$@"\n`, { mode: 0o755 });
    const fetched = await script(server, "?host=cursor&agent=named-one");
    for (const name of ["one", "two"]) {
      const dir = join(home, "dirs", name);
      mkdirSync(dir, { recursive: true });
      const env = { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: home };
      await run("sh", ["-c", name === "one" ? fetched.text : (await script(server, "?host=cursor")).text], { cwd: dir, env });
      const config = JSON.parse(readFileSync(join(dir, ".cursor", "mcp.json"), "utf8")) as { mcpServers: { cairn: { command: string; args: string[]; env: Record<string, string> } } };
      expect(config.mcpServers.cairn.command).toBe(join(bin, "cairn"));
      expect(config.mcpServers.cairn.args).toEqual(["mcp"]);
      const expected = name === "one" ? "named-one" : `${(await run("id", ["-un"])).stdout.trim()}-${(await run("hostname")).stdout.trim()}-two`.toLowerCase().replace(/[^a-z0-9_-]/g, "-");
      expect(config.mcpServers.cairn.env.CAIRN_AGENT_ID).toBe(expected);
    }
    // `curl … | sh -s -- --agent ID` names the agent too.
    mkdirSync(join(home, "dirs", "three"), { recursive: true });
    await run("sh", ["-c", (await script(server, "?host=cursor")).text, "onboard", "--agent", "flagged"], { cwd: join(home, "dirs", "three"), env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home } });
    expect(statSync(join(home, ".cairn", "agents", "flagged.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses a project that is not a project id with 422, so nothing hostile reaches the script", async ({ server }) => {
    for (const project of ["x'; rm -rf ~; '", "$(touch pwned)", "UPPER", "a b"]) {
      const fetched = await script(server, `?project=${encodeURIComponent(project)}`);
      expect(fetched.status, project).toBe(422);
    }
  });

  it("quotes what it interpolates: an agent id with shell syntax is reduced, never run", async ({ server, home, dir: work }) => {
    const fetched = await script(server, "?host=cursor");
    await sh(home, fetched.text, { CAIRN_AGENT_ID: "Evil$(touch pwned)`id`" });
    expect(() => statSync(join(work, "pwned"))).toThrow();
    const config = JSON.parse(readFileSync(join(work, ".cursor", "mcp.json"), "utf8")) as { mcpServers: { cairn: { env: Record<string, string> } } };
    expect(config.mcpServers.cairn.env.CAIRN_AGENT_ID).toBe("evil--touch-pwned--id-");
  });
});
