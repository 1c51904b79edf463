import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect } from "vitest";
import { test } from "../helpers/fixtures.js";
import { tempDir, type Credentials, type TestServer } from "../helpers/server.js";

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

interface Handoff {
  summary: string;
  in_progress: string[];
  host: string | null;
  created_at: string;
}

/** A transcript as Claude Code writes it: one JSON object per line. */
function transcript(dir: string, lines: unknown[]): string {
  const path = join(dir, `transcript-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, lines.map((line) => JSON.stringify(line)).join("\n"));
  return path;
}

describe("the Claude Code plugin", () => {
  const it = test
    .extend("agent", ({ server }) => server.agent("claude-coder"))
    // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
    .extend("home", ({}, { onCleanup }) => {
      const home = tempDir("cairn-plugin-home-");
      onCleanup(() => rmSync(home, { recursive: true, force: true }));
      return home;
    });
  const lastHandoff = async (server: TestServer, as: Credentials): Promise<Handoff | null> =>
    (await server.request<{ last_handoff: Handoff | null }>("/sessions/handoff?peek=true", { as })).body.last_handoff;

  it("is offered by the repository's marketplace, with a manifest, hooks that exist and time out fast, and the slash commands", () => {
    const marketplace = JSON.parse(readFileSync(join(PLUGIN, "..", "..", ".claude-plugin", "marketplace.json"), "utf8")) as {
      name: string;
      owner: { name: string };
      plugins: { name: string; source: string }[];
    };
    expect(marketplace.owner.name).toBeTruthy();
    expect(marketplace.plugins).toEqual([expect.objectContaining({ name: "cairn", source: "./plugin/claude-code" })]);
    expect(readJson<{ name: string }>(".claude-plugin/plugin.json").name).toBe("cairn");
    // The MCP server comes from onboarding's configuration, so the plugin adds no second one.
    expect(existsSync(join(PLUGIN, ".mcp.json"))).toBe(false);
    const { hooks } = readJson<{ hooks: Record<string, { hooks: { command: string; timeout: number }[] }[]> }>("hooks/hooks.json");
    expect(Object.keys(hooks)).toEqual(["SessionStart", "PreCompact", "SessionEnd"]);
    for (const entry of Object.values(hooks).flat().flatMap((group) => group.hooks)) {
      expect(entry.timeout).toBeLessThanOrEqual(5);
      const script = /hooks\/([a-z-]+\.mjs)/.exec(entry.command)?.[1] as string;
      expect(existsSync(join(PLUGIN, "hooks", script)), script).toBe(true);
    }
    for (const command of ["recall", "remember", "handoff"]) {
      const text = readFileSync(join(PLUGIN, "commands", `${command}.md`), "utf8");
      expect(text).toMatch(/^---\ndescription: /);
    }
  });

  it("loads the handoff at session start, as the agent onboarding connected to the project, with nothing exported", async ({ server, agent, home }) => {
    await server.request("/sessions/handoff", { as: agent, body: { summary: "wired the billing webhooks", next_steps: ["add retries"] } });
    const project = join(home, "billing");
    mkdirSync(join(home, ".cairn", "agents"), { recursive: true });
    mkdirSync(join(project, "src"), { recursive: true });
    const keyFile = join(home, ".cairn", "agents", `${agent.agentId}.key`);
    writeFileSync(keyFile, `${agent.apiKey}\n`, { mode: 0o600 });
    writeFileSync(join(home, ".cairn", "connections.tsv"), `${project}\t${agent.agentId}\t${server.url}\t${keyFile}\n`);
    // Started in a subdirectory of the project: the nearest connected directory above counts.
    const start = await hook("session-start.mjs", { session_id: `start-${Date.now()}`, cwd: join(project, "src") }, { HOME: home });
    expect(start.code).toBe(0);
    const context = (JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }).hookSpecificOutput;
    expect(context.hookEventName).toBe("SessionStart");
    expect(context.additionalContext).toContain("wired the billing webhooks");
    expect(context.additionalContext).toContain("add retries");
    const elsewhere = await hook("session-start.mjs", { session_id: "elsewhere", cwd: home }, { HOME: home });
    expect(elsewhere.stdout).toBe("");
  });

  it("hands off at the session's real end when the model did not, with what the transcript and the compactions kept", async ({ server, agent, home }) => {
    const task = await server.request<{ id: string }>("/tasks", { as: agent, body: { title: "retry failed webhooks" } });
    await server.request(`/tasks/${task.body.id}/claim`, { as: agent, method: "POST" });
    const session = { session_id: `end-${Date.now()}` };
    const env = envFor(server.url, agent);
    expect((await hook("session-start.mjs", session, env)).code).toBe(0);
    await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    const before = transcript(home, [
      { type: "user", message: { role: "user", content: "add retries to the billing webhooks" } },
      { type: "assistant", message: { content: [{ type: "tool_use", name: "Edit", input: { file_path: "/repo/src/webhooks.ts" } }, { type: "text", text: "Retries are in." }] } },
    ]);
    expect((await hook("pre-compact.mjs", { ...session, transcript_path: before, trigger: "auto" }, env)).code).toBe(0);
    const after = transcript(home, [
      { type: "user", message: { role: "user", content: "now cap them at five" } },
      { type: "assistant", message: { content: [{ type: "text", text: "Capped at five attempts with backoff." }] } },
    ]);
    expect((await hook("session-end.mjs", { ...session, transcript_path: after, reason: "prompt_input_exit" }, env)).code).toBe(0);
    const handoff = await lastHandoff(server, agent);
    expect(handoff?.summary).toContain("without a handoff");
    expect(handoff?.summary).toContain("add retries to the billing webhooks");
    expect(handoff?.summary).toContain("now cap them at five");
    expect(handoff?.summary).toContain("Capped at five attempts");
    expect(handoff?.summary).toContain("/repo/src/webhooks.ts");
    expect(handoff?.in_progress).toEqual([task.body.id]);
    expect(handoff?.host).toBe("claude-code");
  });

  it("leaves a session that handed off alone, and never interrupts the model after a reply", async ({ server, agent }) => {
    const session = { session_id: `handed-${Date.now()}` };
    const env = envFor(server.url, agent);
    await hook("session-start.mjs", session, env);
    await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    await server.request("/sessions/handoff", { as: agent, body: { summary: "handed off by the model itself" } });
    await hook("session-end.mjs", { ...session, reason: "clear" }, env);
    expect((await lastHandoff(server, agent))?.summary).toBe("handed off by the model itself");
    expect(existsSync(join(PLUGIN, "hooks", "stop.mjs"))).toBe(false);
  });

  it("stays silent when the server is down or there is no agent", async ({ agent, home }) => {
    for (const env of [envFor("http://127.0.0.1:9", agent), { HOME: home }]) {
      for (const name of ["session-start.mjs", "pre-compact.mjs", "session-end.mjs"]) {
        const run = await hook(name, { session_id: "down", cwd: "/" }, env);
        expect(run.code, name).toBe(0);
        expect(run.stdout, name).toBe("");
      }
    }
  });
});
