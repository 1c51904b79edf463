import { resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { HOST_NAMES } from "../../plugin/hosts/index.js";
import type { ErrorBody } from "../helpers/server.js";
import type { HostConfig } from "../../src/wire/hosts.js";

type Json = Record<string, unknown>;

const CLI = resolve(import.meta.dirname, "../../dist/src/cli.js");

/** The server entry each host's file must hold, found where that host looks for it. */
function serverEntry(config: HostConfig): Json {
  const file = config.files[0];
  if (!file) throw new Error(`${config.host}: no file`);
  const parsed = (file.format === "toml" ? parseToml(file.content) : JSON.parse(file.content)) as Json;
  const containers: Record<string, string> = { vscode: "servers", opencode: "mcp", codex: "mcp_servers" };
  const container = parsed[containers[config.host] ?? "mcpServers"] as Record<string, Json> | undefined;
  const entry = container?.cairn;
  if (!entry) throw new Error(`${config.host}: no cairn server in ${file.path}`);
  return entry;
}

describe("GET /plugin/install", () => {
  const it = test.extend("agent", ({ server }) => server.agent("plugin-agent"));

  it("renders every host for both transports, parseable, with the keys each host expects and no key in them", async ({ server, agent }) => {
    const response = await server.request<{ hosts: HostConfig[] }>("/plugin/install", { as: agent });
    expect(response.status).toBe(200);
    expect(response.body.hosts.map((config) => `${config.host}/${config.transport}`)).toEqual(
      HOST_NAMES.flatMap((host) => [`${host}/stdio`, `${host}/http`]),
    );
    for (const config of response.body.hosts) {
      const entry = serverEntry(config);
      const text = JSON.stringify(config);
      expect(text, config.host).not.toContain(agent.apiKey);
      expect(text, config.host).toContain("CAIRN_API_KEY");
      expect(text, config.host).toContain(agent.agentId);
      const stdio = config.transport === "stdio";
      // The bridge of this server's own installation, by absolute path: node and its cli.js.
      const launcher = [process.execPath, CLI, "mcp"];
      switch (config.host) {
        case "opencode":
          expect(entry.type).toBe(stdio ? "local" : "remote");
          expect(stdio ? entry.command : entry.url).toEqual(stdio ? launcher : `${server.url}/mcp`);
          break;
        case "codex":
          expect(stdio ? entry.command : entry.url).toBe(stdio ? process.execPath : `${server.url}/mcp`);
          if (stdio) expect(entry.env_vars).toEqual(["CAIRN_API_KEY"]);
          else expect(entry.env_http_headers).toEqual({ "X-API-Key": "CAIRN_API_KEY" });
          break;
        case "gemini":
          expect(stdio ? entry.command : entry.httpUrl).toBe(stdio ? process.execPath : `${server.url}/mcp`);
          break;
        case "windsurf":
          expect(stdio ? entry.command : entry.serverUrl).toBe(stdio ? process.execPath : `${server.url}/mcp`);
          break;
        case "claude-desktop":
          // It starts local commands only: over HTTP too, the bridge is the HTTP client; a shell hands it the key.
          expect(entry.command).toBe("/bin/sh");
          expect((entry.args as string[])[1]).toContain(`exec '${process.execPath}' '${CLI}' 'mcp'`);
          expect(config.files.map((file) => file.path)).toEqual(["~/Library/Application Support/Claude/claude_desktop_config.json", "~/.config/Claude/claude_desktop_config.json"]);
          break;
        default:
          expect(stdio ? entry.command : entry.url).toBe(stdio ? process.execPath : `${server.url}/mcp`);
      }
      if (stdio && config.host !== "opencode" && config.host !== "claude-desktop") expect(entry.args).toEqual([CLI, "mcp"]);
    }
  });

  it("answers one configuration for a host and transport, with the host's CLI command where it has one", async ({ server, agent }) => {
    const response = await server.request<HostConfig>("/plugin/install?host=claude-code&transport=stdio", { as: agent });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ host: "claude-code", transport: "stdio", files: [{ path: ".mcp.json", format: "json" }] });
    expect(serverEntry(response.body)).toEqual({
      command: process.execPath,
      args: [CLI, "mcp"],
      env: { CAIRN_URL: server.url, CAIRN_AGENT_ID: agent.agentId, CAIRN_API_KEY: "${CAIRN_API_KEY}" },
    });
    expect(response.body.command).toBe(
      `claude mcp add cairn --env CAIRN_URL='${server.url}' --env CAIRN_AGENT_ID='${agent.agentId}' --env CAIRN_API_KEY="$CAIRN_API_KEY" -- '${process.execPath}' '${CLI}' 'mcp'`,
    );
    const both = await server.request<{ hosts: HostConfig[] }>("/plugin/install?host=cursor", { as: agent });
    expect(both.body.hosts.map((config) => config.transport)).toEqual(["stdio", "http"]);
  });

  it("refuses an unknown host with 422 and anonymous callers with 401", async ({ server, agent }) => {
    expect((await server.request<ErrorBody>("/plugin/install?host=notepad", { as: agent })).status).toBe(422);
    expect((await server.request("/plugin/install")).status).toBe(401);
  });
});
