import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect } from "vitest";
import type { Capture } from "../../src/wire/captures.js";
import type { Handoff } from "../../src/wire/sessions.js";
import { test } from "../helpers/fixtures.js";
import { tempDir, type Credentials, type TestServer } from "../helpers/server.js";

const PLUGIN = resolve(import.meta.dirname, "../../plugin/claude-code");
const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(PLUGIN, path), "utf8")) as T;

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a hook as Claude Code would: its command, the hook input on stdin, the user's environment. */
function hook(name: string, input: Record<string, unknown>, env: Record<string, string>): Promise<HookRun> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [join(PLUGIN, "hooks", name)], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("close", (code) => resolveRun({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

const envFor = (url: string, as: Credentials): Record<string, string> => ({ CAIRN_URL: url, CAIRN_AGENT_ID: as.agentId, CAIRN_API_KEY: as.apiKey });

/** A transcript as Claude Code writes it: one JSON object per line. */
function transcript(dir: string, lines: unknown[]): string {
  const path = join(dir, `transcript-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, lines.map((line) => JSON.stringify(line)).join("\n"));
  return path;
}

/** Transcript lines as Claude Code appends them, each ended by a newline. */
function append(path: string, lines: unknown[]): void {
  appendFileSync(path, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
}

const user = (content: unknown, extra: Record<string, unknown> = {}) => ({ type: "user", message: { role: "user", content }, ...extra });
const assistant = (...content: unknown[]) => ({ type: "assistant", message: { role: "assistant", content } });
const text = (words: string) => ({ type: "text", text: words });
const toolUse = (name: string, input: Record<string, unknown>) => ({ type: "tool_use", id: `toolu_${name}`, name, input });
const toolResult = (content: string) => user([{ type: "tool_result", tool_use_id: "toolu_1", content }]);

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
    const path = join(home, "down.jsonl");
    append(path, [user("a request with the key sk-ant-api03-" + "k".repeat(40)), assistant(text("an answer"))]);
    for (const env of [{ ...envFor("http://127.0.0.1:9", agent), TMPDIR: home }, { HOME: home, TMPDIR: home }]) {
      for (const name of ["session-start.mjs", "pre-compact.mjs", "session-end.mjs"]) {
        const run = await hook(name, { session_id: "down", cwd: "/", transcript_path: path }, env);
        expect(run.code, name).toBe(0);
        expect(run.stdout, name).toBe("");
        expect(run.stderr, name).toBe("");
      }
    }
  });

  describe("captures", () => {
    const mine = async (server: TestServer, as: Credentials): Promise<Capture[]> => {
      const response = await server.request<Capture[]>("/captures?mine=true", { as });
      expect(response.status, response.text).toBe(200);
      return response.body;
    };
    /** The captures holding `words`: a stretch of transcript is sent once, so one each. */
    const holding = (captures: Capture[], words: string): Capture[] => captures.filter((capture) => capture.content.includes(words));
    const silent = (run: HookRun, name: string): void => {
      expect(run.code, name).toBe(0);
      expect(run.stdout, name).toBe("");
      expect(run.stderr, name).toBe("");
    };

    it("sends the session at PreCompact, then only what is new at each compaction and at the end, into the agent's project", async ({ server, agent, home }) => {
      expect((await server.request("/projects", { as: agent, body: { name: "billing" } })).status).toBe(201);
      const session = { session_id: `capture-${Date.now()}`, cwd: "/repo" };
      const env = { ...envFor(server.url, agent), TMPDIR: home };
      const path = join(home, "session.jsonl");
      append(path, [
        user("add retries to the billing webhooks"),
        assistant({ type: "thinking", thinking: "private musing" }, text("Reading the handler first."), toolUse("Read", { file_path: "/repo/src/webhooks.ts" })),
        toolResult(`export function handle() {}\n${"// filler line of a long file\n".repeat(5000)}`),
        assistant(toolUse("Edit", { file_path: "/repo/src/webhooks.ts", old_string: "x".repeat(3000), new_string: "y".repeat(3000) })),
        toolResult("The file /repo/src/webhooks.ts has been updated."),
        assistant(text("Retries are in.")),
      ]);
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path, trigger: "auto" }, env), "first compaction");
      const [first, ...none] = await mine(server, agent);
      expect(none).toEqual([]);
      expect(first).toMatchObject({ session_id: session.session_id, host: "claude-code", project: "billing", redactions: 0 });
      for (const words of ["User: add retries to the billing webhooks", "Assistant: Reading the handler first.", "tool Read (file_path: /repo/src/webhooks.ts)", "tool Edit (file_path: /repo/src/webhooks.ts", "export function handle() {}", "Assistant: Retries are in."]) {
        expect(first?.content).toContain(words);
      }
      expect(first?.content).not.toContain("private musing");
      // A long tool output is cut short, and so are a call's long inputs.
      expect(first?.content).not.toContain("// filler line of a long file\n".repeat(20));
      expect(first?.content).not.toContain("x".repeat(300));
      expect(first?.bytes).toBeLessThan(4000);

      append(path, [user("now cap them at five"), assistant(text("Capped at five attempts with backoff."))]);
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path, trigger: "manual" }, env), "second compaction");
      let captures = await mine(server, agent);
      expect(captures).toHaveLength(2);
      expect(holding(captures, "add retries to the billing webhooks")).toHaveLength(1);
      const [second] = holding(captures, "now cap them at five");
      expect(second?.content).toContain("Capped at five attempts with backoff.");
      expect(second?.content).not.toContain("Retries are in.");

      // Nothing new, or only a line still being written: nothing is sent.
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path }, env), "nothing new");
      const half = JSON.stringify(user("and log every retry"));
      appendFileSync(path, half.slice(0, 20));
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path }, env), "half a line");
      expect(await mine(server, agent)).toHaveLength(2);

      appendFileSync(path, `${half.slice(20)}\n`);
      append(path, [
        { type: "system", subtype: "compact_boundary", content: "Conversation compacted" },
        user("This session is being continued from a previous conversation that ran out of context.", { isCompactSummary: true }),
        assistant(text("Every retry is logged now.")),
      ]);
      silent(await hook("session-end.mjs", { ...session, transcript_path: path, reason: "prompt_input_exit" }, env), "end");
      captures = await mine(server, agent);
      expect(captures).toHaveLength(3);
      const [last] = holding(captures, "User: and log every retry");
      expect(last?.content).toContain("Every retry is logged now.");
      expect(last?.content).not.toContain("now cap them at five");
      expect(last?.content).not.toContain("This session is being continued");
      // The end still hands off on the model's behalf.
      expect((await lastHandoff(server, agent))?.summary).toContain("without a handoff");

      silent(await hook("session-end.mjs", { ...session, transcript_path: path, reason: "other" }, env), "end again");
      expect(await mine(server, agent)).toHaveLength(3);
    });

    it("sends a secret in the transcript only redacted, and prints nothing", async ({ server, agent, home }) => {
      const key = `sk-ant-api03-${"Q7x".repeat(20)}`;
      const aws = "AKIAIOSFODNN7EXAMPLE";
      const path = join(home, "secret.jsonl");
      append(path, [user(`deploy with ANTHROPIC_KEY ${key} please`), assistant(toolUse("Bash", { command: "env | grep AWS" })), toolResult(`AWS_ACCESS_KEY_ID=${aws}`), assistant(text("Deployed."))]);
      const run = await hook("pre-compact.mjs", { session_id: `secret-${Date.now()}`, transcript_path: path }, { ...envFor(server.url, agent), TMPDIR: home });
      silent(run, "pre-compact");
      const [capture] = await mine(server, agent);
      expect(capture?.content).toContain("[REDACTED:anthropic_key]");
      expect(capture?.content).toContain("Deployed.");
      expect(capture?.content).not.toContain(key);
      expect(capture?.content).not.toContain(aws);
      expect(capture?.redactions).toBeGreaterThanOrEqual(2);
    });

    it("keeps the most recent text within 64 KiB, cut at a line", async ({ server, agent, home }) => {
      const path = join(home, "long.jsonl");
      append(path, Array.from({ length: 300 }, (_, turn) => user(`turn ${turn} ${"ünïcödé 😀 ".repeat(30)}`)));
      silent(await hook("session-end.mjs", { session_id: `long-${Date.now()}`, transcript_path: path }, { ...envFor(server.url, agent), TMPDIR: home }), "end");
      const [capture] = await mine(server, agent);
      expect(Buffer.byteLength(capture?.content ?? "", "utf8")).toBeLessThanOrEqual(65_536);
      expect(capture?.bytes).toBeGreaterThan(60_000);
      expect(capture?.content).toContain("User: turn 299 ");
      expect(capture?.content).not.toContain("User: turn 0 ");
      expect(capture?.content).not.toContain("\uFFFD");
      expect(capture?.content).toMatch(/cut to fit …]\nUser: turn \d+ ünïcödé/);
    });

    it("is sent later, with what follows, when the server was down; and not at all with CAIRN_CAPTURE=off", async ({ server, agent, home }) => {
      const session = { session_id: `later-${Date.now()}` };
      const path = join(home, "later.jsonl");
      append(path, [user("rename the queue"), assistant(text("Renamed to billing-retries."))]);
      const env = { ...envFor(server.url, agent), TMPDIR: home };
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path }, { ...env, CAIRN_URL: "http://127.0.0.1:9" }), "server down");
      expect(await mine(server, agent)).toEqual([]);
      append(path, [user("and document it")]);
      silent(await hook("pre-compact.mjs", { ...session, transcript_path: path }, { ...env, CAIRN_CAPTURE: "off" }), "off");
      silent(await hook("session-end.mjs", { ...session, transcript_path: path }, { ...env, CAIRN_CAPTURE: "off" }), "off at the end");
      expect(await mine(server, agent)).toEqual([]);
      // Off leaves the handoff alone.
      expect((await lastHandoff(server, agent))?.summary).toContain("and document it");
      silent(await hook("session-end.mjs", { ...session, transcript_path: path }, env), "back");
      const [capture, ...none] = await mine(server, agent);
      expect(none).toEqual([]);
      expect(capture?.content).toContain("User: rename the queue");
      expect(capture?.content).toContain("User: and document it");
    });

    describe("on a server that takes less", () => {
      it.override("serverEnv", { CAPTURE_MAX_BYTES: "4096" });

      it("fits the capture to the limit the server names", async ({ server, agent, home }) => {
        const path = join(home, "small.jsonl");
        append(path, Array.from({ length: 50 }, (_, turn) => user(`turn ${turn} ${"ünïcödé 😀 ".repeat(30)}`)));
        silent(await hook("pre-compact.mjs", { session_id: `small-${Date.now()}`, transcript_path: path }, { ...envFor(server.url, agent), TMPDIR: home }), "pre-compact");
        const [capture] = await mine(server, agent);
        expect(Buffer.byteLength(capture?.content ?? "", "utf8")).toBeLessThanOrEqual(4096);
        expect(capture?.content).toContain("User: turn 49 ");
        expect(capture?.content).not.toContain("User: turn 0 ");
      });
    });
  });
});
