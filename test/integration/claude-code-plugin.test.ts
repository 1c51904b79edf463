import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { Credentials } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";

const PLUGIN = resolve(import.meta.dirname, "../../plugin/claude-code");
const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(PLUGIN, path), "utf8")) as T;

interface HookRun {
  code: number | null;
  stdout: string;
}

/** Runs a hook as Claude Code would: its command, the hook input on stdin, the user's environment. */
function hook(name: string, input: Record<string, unknown>, env: Record<string, string>): Promise<HookRun> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [join(PLUGIN, "hooks", name)], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.on("close", (code) => resolveRun({ code, stdout }));
    child.stdin.end(JSON.stringify(input));
  });
}

const envFor = (url: string, as: Credentials): Record<string, string> => ({ CAIRN_URL: url, CAIRN_AGENT_ID: as.agentId, CAIRN_API_KEY: as.apiKey });

describe("the Claude Code plugin", () => {
  const server = serverForSuite();
  const agent = agentForSuite(server, "claude-coder");

  it("has a manifest, the MCP server entry, hooks that exist and time out fast, and the slash commands", () => {
    expect(readJson<{ name: string }>(".claude-plugin/plugin.json").name).toBe("cairn");
    const mcp = readJson<{ mcpServers: { cairn: { command: string; args: string[]; env: Record<string, string> } } }>(".mcp.json");
    expect(mcp.mcpServers.cairn).toMatchObject({ command: "npx", args: ["cairn", "mcp"] });
    expect(Object.keys(mcp.mcpServers.cairn.env)).toEqual(["CAIRN_URL", "CAIRN_AGENT_ID", "CAIRN_API_KEY"]);
    const { hooks } = readJson<{ hooks: Record<string, { hooks: { command: string; timeout: number }[] }[]> }>("hooks/hooks.json");
    expect(Object.keys(hooks)).toEqual(["SessionStart", "Stop"]);
    for (const entry of Object.values(hooks).flat().flatMap((group) => group.hooks)) {
      expect(entry.timeout).toBeLessThanOrEqual(3);
      const script = /hooks\/([a-z-]+\.mjs)/.exec(entry.command)?.[1] as string;
      expect(existsSync(join(PLUGIN, "hooks", script)), script).toBe(true);
    }
    for (const command of ["recall", "remember", "handoff"]) {
      const text = readFileSync(join(PLUGIN, "commands", `${command}.md`), "utf8");
      expect(text).toMatch(/^---\ndescription: /);
    }
  });

  it("loads the handoff at session start, and reminds to hand off at the end until it is done", async () => {
    await server.request("/sessions/handoff", { as: agent, body: { summary: "wired the billing webhooks", next_steps: ["add retries"] } });
    const session = { session_id: `test-${Date.now()}` };
    const start = await hook("session-start.mjs", session, envFor(server.url, agent));
    expect(start.code).toBe(0);
    const context = (JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }).hookSpecificOutput;
    expect(context.hookEventName).toBe("SessionStart");
    expect(context.additionalContext).toContain("wired the billing webhooks");
    expect(context.additionalContext).toContain("add retries");

    const reminder = await hook("stop.mjs", session, envFor(server.url, agent));
    expect(JSON.parse(reminder.stdout)).toMatchObject({ decision: "block", reason: expect.stringContaining("session_handoff") as string });
    // Claude Code continued because of the reminder: never ask twice.
    expect((await hook("stop.mjs", { ...session, stop_hook_active: true }, envFor(server.url, agent))).stdout).toBe("");

    await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    await server.request("/sessions/handoff", { as: agent, body: { summary: "retries added" } });
    expect((await hook("stop.mjs", session, envFor(server.url, agent))).stdout).toBe("");
  });

  it("stays silent when the server is down or the credentials are missing", async () => {
    for (const env of [envFor("http://127.0.0.1:9", agent), {}]) {
      for (const name of ["session-start.mjs", "stop.mjs"]) {
        const run = await hook(name, { session_id: "down" }, env);
        expect(run.code, name).toBe(0);
        expect(run.stdout, name).toBe("");
      }
    }
  });
});
