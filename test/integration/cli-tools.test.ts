import { spawn } from "node:child_process";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";

// The operator's commands that go through a running server as the owner (CONTRACT §10a):
// `cairn export`, `cairn import FILE`, `cairn search`, `cairn agent list`. They run the built CLI.

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/src/cli.js");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer(env);
  servers.push(started);
  return started;
}

function scratch(): string {
  const dir = tempDir("cairn-cli-tools-");
  dirs.push(dir);
  return dir;
}

/** The CLI with the settings of `target` (its data dir, hence its owner's key, and its URL). */
const envFor = (target: TestServer, env: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  ...testEnv(target.dataDir, { CAIRN_URL: target.url, ...env }),
});

/** Runs `cairn ARGS` to completion (killed after 60 s, so a hang fails rather than stalls). */
function cairn(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
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

async function write(target: TestServer, as: Credentials, body: Record<string, unknown>): Promise<string> {
  const response = await target.request<{ id: string }>("/memory", { as, body });
  expect(response.status, response.text).toBe(201);
  return response.body.id;
}

describe("cairn export and cairn import", () => {
  it("move everything shared from one server to another, and the second import skips it all", async () => {
    const source = await server();
    const alice = await source.agent("alice");
    await source.request("/projects", { as: alice, body: { name: "Web" } });
    const deploys = await write(source, alice, { content: "Deploys go out on Tuesdays after the freeze", project: "web" });
    const secret = await write(source, alice, { content: "Alice keeps a private note about zebras", scope: "agent", project: null });
    const file = join(scratch(), "cairn.jsonl");

    const exported = await cairn(["export", "--output", file], envFor(source));
    expect(exported.code, exported.stderr).toBe(0);
    // The header, the project, the three agents (alice, the owner, the archivist) and the entry.
    expect(exported.stderr).toMatch(/exported 6 lines/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, "utf8");
    expect(text).toContain(deploys);
    expect(text).not.toContain(secret);

    const target = await server();
    const imported = await cairn(["import", file], envFor(target));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(
      "imported 1 project, 1 agent, 1 entry, 0 edges, 0 decisions, 0 blueprint versions, 0 tasks, 0 runs, 0 messages, 0 handoffs; skipped 2 that exist; 0 errors",
    );
    const copy = await target.request<{ agent_id: string; content: string }>(`/memory/${deploys}`, { as: target.owner });
    expect(copy.body).toMatchObject({ agent_id: "alice", content: "Deploys go out on Tuesdays after the freeze" });

    const again = await cairn(["import", file, "--json"], envFor(target));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: { projects: 0, agents: 0, entries: 0 }, skipped: 5, errors: [] });
  });

  it("streams the export to standard output", async () => {
    const source = await server();
    const id = await write(source, source.owner, { content: "Standard output carries the export", project: null });
    const run = await cairn(["export", "--project", ""], envFor(source));
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; id?: string });
    // Agents belong to no project: the owner and the archivist come with the global records.
    expect(lines.map((line) => line.kind)).toEqual(["header", "agent", "agent", "entry"]);
    expect(lines[3]?.id).toBe(id);
  });

  it("imports a memory.json, checks without writing on --dry-run, and exits 1 naming the lines it refused", async () => {
    const target = await server();
    const file = join(scratch(), "memory.json");
    writeFileSync(
      file,
      [
        { type: "entity", name: "Ada", entityType: "person", observations: ["Wrote the first program"] },
        { type: "entity", name: "Engine", entityType: "machine", observations: ["Analytical"] },
        { type: "relation", from: "Ada", to: "Engine", relationType: "programmed" },
        { type: "relation", from: "Ada", to: "Babbage", relationType: "corresponded_with" },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    );
    const dry = await cairn(["import", file, "--dry-run", "--project", ""], envFor(target));
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain("would import 0 projects, 0 agents, 2 entries, 1 edge");
    expect(dry.stdout).toContain("dry run: nothing was written");
    expect(dry.stderr).toContain("line 4: entity Babbage not found");
    expect((await target.request("/memory", { as: target.owner })).body).toEqual([]);

    const real = await cairn(["import", file, "--project", ""], envFor(target));
    expect(real.code).toBe(1);
    expect(real.stdout).toContain("imported 0 projects, 0 agents, 2 entries, 1 edge");
    const hits = await target.request<{ content: string; project: string | null }[]>("/memory/search?q=first%20program", { as: target.owner });
    expect(hits.body[0]).toMatchObject({ content: "Ada (person)\n- Wrote the first program", project: null });
  });

  it("streams a file larger than MAX_BODY_BYTES in one request, reporting a line longer than that by its number in the file", async () => {
    const small = { MAX_BODY_BYTES: "1024", MAX_CONTENT_BYTES: "1024" };
    const target = await server(small);
    const file = join(scratch(), "many.jsonl");
    const entities = Array.from({ length: 40 }, (_, index) => JSON.stringify({ type: "entity", name: `Thing ${index}`, entityType: "thing", observations: ["x".repeat(80)] }));
    entities.splice(30, 0, "{ broken");
    entities.splice(35, 0, JSON.stringify({ type: "entity", name: "Huge", entityType: "thing", observations: ["y".repeat(2000)] }));
    writeFileSync(file, `${entities.join("\n")}\n`);
    expect(statSync(file).size).toBeGreaterThan(4 * 1024);
    const run = await cairn(["import", file, "--project", "", "--json"], envFor(target, small));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      imported: { entries: 40 },
      errors: [
        { line: 31, detail: "not valid json" },
        { line: 36, detail: "line is larger than MAX_BODY_BYTES (1024 bytes)" },
      ],
    });
    // A CLI that believes the server takes longer lines sends it: the server refuses the request, naming the line.
    const unaware = await cairn(["import", file, "--project", "", "--json"], envFor(target));
    expect(unaware.code).toBe(1);
    expect(unaware.stderr).toContain("line 36 of the body exceeds 1024 bytes (413)");
  });

  it("refuses an agent that is not the owner, and says so when no server answers", async () => {
    const target = await server();
    const alice = await target.agent("alice");
    const refused = await cairn(["export"], envFor(target, { CAIRN_AGENT_ID: alice.agentId, CAIRN_API_KEY: alice.apiKey }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("owner");
    expect(refused.stderr).toContain("(403)");

    // A refusal names the field the server refused, and the status.
    const badType = await cairn(["search", "anything", "--type", "novel"], envFor(target));
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/request validation failed: type: .*\(422\)/);

    const nowhere = await cairn(["search", "anything"], envFor(target, { CAIRN_URL: "http://127.0.0.1:9" }));
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain("no Cairn server answers at http://127.0.0.1:9");
  });

  it("answers a command without its argument with its usage and exit code 2", async () => {
    const target = await server();
    for (const args of [["import"], ["search"], ["export", "extra"]]) {
      const run = await cairn(args, envFor(target));
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toContain("usage: cairn");
    }
  });
});

describe("the operator commands' help", () => {
  it.each(["export", "import", "search", "agent list"])("%s --help prints its usage, is listed by cairn --help, and exits 0", async (command) => {
    const env = { ...process.env, ...testEnv(scratch()) };
    const run = await cairn([...command.split(" "), "--help"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: cairn /);
    expect(run.stdout).toContain(`cairn ${command}`);
    expect((await cairn(["--help"], env)).stdout).toContain(`  ${command}`);
  });
});

describe("cairn search", () => {
  it("prints the hits a person can read, or the API's JSON with --json", async () => {
    const target = await server();
    const alice = await target.agent("alice");
    const id = await write(target, alice, { content: "The staging database is reset every night at two", tags: ["staging"], project: null });
    await write(target, alice, { content: "Lunch is at noon on Fridays", project: null });

    const run = await cairn(["search", "staging", "database", "reset"], envFor(target));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(id.slice(0, 8));
    expect(run.stdout).toContain("memory · global · alice");
    expect(run.stdout).toContain("#staging");
    expect(run.stdout).toContain("The staging database is reset every night at two");

    const json = await cairn(["search", "staging database", "--limit", "1", "--json"], envFor(target));
    expect(json.code).toBe(0);
    const hits = JSON.parse(json.stdout) as { id: string }[];
    expect(hits.map((hit) => hit.id)).toEqual([id]);

    const none = await cairn(["search", "xylophone quartet"], envFor(target));
    expect(none.stdout.trim()).toBe("no matches");
  });

  it("leaves compiled code out unless --code asks for it", async () => {
    const target = await server();
    const alice = await target.agent("alice");
    const note = await write(target, alice, { content: "Nightly reset of the staging database happens at two", project: null });
    const unit = { path: "ops/reset.ts", symbol: "resetStaging", kind: "function", lang: "typescript", start_line: 1, end_line: 5, sha: "a".repeat(64), signature: "function resetStaging(): void", description: "Resets the staging database.", deps: [] };
    const compiled = await target.request<{ memory_ids: string[] }>("/compile", { as: alice, body: { project: null, units: [unit] } });
    expect(compiled.status, compiled.text).toBe(200);
    const ids = async (...extra: string[]) => (JSON.parse((await cairn(["search", "staging database reset", "--json", ...extra], envFor(target))).stdout) as { id: string }[]).map((hit) => hit.id).sort();
    expect(await ids()).toEqual([note]);
    expect(await ids("--code")).toEqual([note, compiled.body.memory_ids[0]].sort());
  });
});

describe("cairn agent list", () => {
  it("lists the server's agents in a table, or as JSON", async () => {
    const target = await server();
    await target.agent("alice");
    const run = await cairn(["agent", "list"], envFor(target));
    expect(run.code, run.stderr).toBe(0);
    const [heading, ...rows] = run.stdout.trim().split("\n");
    expect(heading).toMatch(/^AGENT\s+ROLE\s+STATUS\s+LAST SEEN\s+PROJECT\s+CLAIMED\s+NAME$/);
    expect(rows.map((row) => row.split(/\s+/).slice(0, 2))).toEqual(
      expect.arrayContaining([
        ["alice", "agent"],
        [target.config.UI_AGENT_ID, "owner"],
      ]),
    );
    const json = await cairn(["agent", "list", "--json"], envFor(target));
    const agents = JSON.parse(json.stdout) as { agent_id: string }[];
    expect(agents.map((agent) => agent.agent_id)).toEqual(expect.arrayContaining(["alice", target.config.UI_AGENT_ID, target.config.ARCHIVIST_AGENT_ID]));
  });
});
