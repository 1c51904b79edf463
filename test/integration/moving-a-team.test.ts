import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, type CliRun } from "../helpers/cli.js";
import { startTestServer, tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";

// Issue 30, item 5 (CONTRACT §10a, §5, §7, §12, §14, §17, §18): a team moves to a new server with
// `cairn export` and `cairn import`, and finds there everything it would miss — compiled memory
// that the next compile keeps grounded, blueprints and their runs, messages as they were read,
// handoffs, decisions, the graph, tasks with their dependencies and claims, agents and members.

interface Line {
  kind: string;
  id?: string;
  agent_id?: string;
  [field: string]: unknown;
}

type Counts = Record<"projects" | "agents" | "entries" | "edges" | "decisions" | "blueprints" | "tasks" | "runs" | "messages" | "handoffs", number>;

interface ImportAnswer {
  imported: Counts;
  skipped: number;
  errors: { line: number; detail: string }[];
  dry_run: boolean;
}

interface CompileAnswer {
  units: number;
  sent: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
}

interface StaleEntry {
  id: string;
  stale_since: string | null;
  stale_reason: { path: string; symbol: string; old_sha: string; new_sha: string } | null;
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const started of servers.splice(0)) await started.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer(env);
  servers.push(started);
  return started;
}

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

async function rest<T = { id: string }>(target: TestServer, as: Credentials, path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await target.request<T>(path, { ...options, as });
  if (response.status >= 300) throw new Error(`${options.method ?? "GET"} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

async function exportText(target: TestServer): Promise<string> {
  const response = await target.request("/admin/export", { as: target.owner });
  expect(response.status, response.text).toBe(200);
  return response.text;
}

async function importText(target: TestServer, text: string, query = ""): Promise<ImportAnswer> {
  const response = await target.request<ImportAnswer>(`/admin/import${query}`, { as: target.owner, body: text, headers: { "content-type": "application/x-ndjson" } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

const parse = (text: string): Line[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Line);

// ---- a repository to compile, with the built CLI ----

/** git without the machine's global and system settings. */
const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
});

const git = (repo: string, args: string[]): string => execFileSync("git", args, { cwd: repo, env: gitEnv(), encoding: "utf8" });

const MATH = (body: string): string => `/** Adds two numbers. */
export function add(a: number, b: number): number {
  return ${body};
}

/** Twice a number, by adding it to itself. */
export function double(x: number): number {
  return add(x, x);
}
`;

const TEXT = (body: string): string => `/** Loud text. */
export function shout(text: string): string {
  return ${body};
}
`;

/** Writes the repository's two files and commits them. */
function commit(repo: string, files: { math: string; text: string }, message: string): void {
  for (const [path, text] of [
    ["src/math.ts", MATH(files.math)],
    ["src/text.ts", TEXT(files.text)],
  ] as const) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", message]);
}

function repository(): string {
  const repo = scratch("cairn-move-repo-");
  git(repo, ["init", "-q", "-b", "main"]);
  git(repo, ["config", "commit.gpgsign", "false"]);
  commit(repo, { math: "a + b", text: "text.toUpperCase()" }, "first");
  return repo;
}

function cairn(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
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

const cliEnv = (target: TestServer, as: Credentials, env: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...gitEnv(),
  ...testEnv(scratch("cairn-move-cli-"), { CAIRN_URL: target.url, CAIRN_AGENT_ID: as.agentId, CAIRN_API_KEY: as.apiKey, ...env }),
});

async function compile(repo: string, target: TestServer, as: Credentials): Promise<CompileAnswer> {
  const run = await cairn(repo, ["compile", "--all", "--project", "web", "--json"], cliEnv(target, as));
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as CompileAnswer;
}

const compiledId = async (target: TestServer, as: Credentials, symbol: string): Promise<string> => {
  const anchors = await rest<{ symbol: string; memory_id: string }[]>(target, as, "/compile/anchors?project=web");
  const anchor = anchors.find((candidate) => candidate.symbol === symbol);
  if (!anchor) throw new Error(`no anchor for ${symbol}`);
  return anchor.memory_id;
};

const staleOf = async (target: TestServer, as: Credentials): Promise<StaleEntry[]> =>
  (await rest<StaleEntry[]>(target, as, "/compile/stale?project=web")).sort((a, b) => a.id.localeCompare(b.id));

// ---- the team on its old server ----

interface Team {
  source: TestServer;
  alice: Credentials;
  bob: Credentials;
  repo: string;
  ids: {
    addNote: string;
    shoutNote: string;
    consumed: string;
    unread: string;
    broadcast: string;
    claimed: string;
    run: string;
    publish: string;
    handoff: string;
    decision: string;
  };
}

/**
 * A project with two members; code compiled by a real `cairn compile` (then changed and compiled
 * again, so a note is stale); notes grounded in it and linked to each other; a decision and the
 * one superseding it; tasks with a dependency and a live claim; a blueprint in two versions and a
 * run of the second half done; messages consumed, read and unread; a handoff.
 */
async function team(): Promise<Team> {
  const source = await server();
  const alice = await source.agent("alice");
  const bob = await source.agent("bob");
  await rest(source, alice, "/projects", { body: { name: "Web", description: "the web shop" } });
  await rest(source, bob, "/projects/web/join", { method: "POST" });
  await rest(source, alice, "/projects/web/join", { method: "POST" });

  const repo = repository();
  await compile(repo, source, alice);
  const addNote = await rest(source, alice, "/memory", { body: { content: "add() must stay pure: the cart totals rely on it", project: "web", tags: ["math"] } });
  const shoutNote = await rest(source, bob, "/memory", { body: { content: "shout() is only for log banners, never for user text", project: "web" } });
  const directive = await rest(source, source.owner, "/memory", { body: { content: "Every change to pricing is reviewed by two people", type: "directive", project: "web" } });
  await rest(source, alice, "/graph/edge", { body: { src: await compiledId(source, alice, "add"), dst: addNote.id, rel: "grounds" } });
  await rest(source, alice, "/graph/edge", { body: { src: await compiledId(source, alice, "shout"), dst: shoutNote.id, rel: "grounds" } });
  await rest(source, alice, "/graph/edge", { body: { src: addNote.id, dst: directive.id, rel: "supports", note: "pricing" } });
  await rest(source, bob, "/graph/edge", { body: { src: shoutNote.id, dst: addNote.id, rel: "relates_to" } });
  // add() changes: its note is stale on the old server before the move.
  commit(repo, { math: "b + a", text: "text.toUpperCase()" }, "add, the other way round");
  expect(await compile(repo, source, alice)).toMatchObject({ created: 0, updated: 1 });

  const first = await rest(source, alice, "/tasks", { body: { title: "Write the release notes", project: "web", tags: ["docs"] } });
  await rest(source, alice, "/tasks", { body: { title: "Publish the release", project: "web", depends_on: [first.id] } });
  const claimed = await rest(source, bob, "/tasks", { body: { title: "Fix the cart rounding", project: "web" } });
  await rest(source, bob, `/tasks/${claimed.id}/claim`, { method: "POST", body: { comment: "mine" } });
  const jest = await rest(source, alice, "/decisions", { body: { decision: "Use jest", rationale: "everyone knows it", project: "web", task_id: first.id } });
  const decision = await rest(source, alice, "/decisions", {
    body: { decision: "Use vitest", rationale: "ESM without configuration", project: "web", supersedes: jest.id, memory_refs: [addNote.id], alternatives: [{ option: "jest", reason_rejected: "slow with ESM" }] },
  });

  const plan = (title: string) => ({
    name: "release",
    project: "web",
    title,
    params: [{ name: "version", type: "string", required: true }],
    nodes: [
      { id: "notes", title: "Notes for {{params.version}}" },
      { id: "publish", title: "Publish {{params.version}}", needs: ["notes"] },
    ],
  });
  await rest(source, alice, "/blueprints", { body: plan("Release") });
  await rest(source, alice, "/blueprints", { body: plan("Release, reviewed") });
  const run = await rest<{ id: string; nodes: { key: string; task_id: string }[] }>(source, alice, "/blueprints/release/instantiate", { body: { project: "web", params: { version: "1.2" } } });
  const notesTask = run.nodes.find((node) => node.key === "notes")?.task_id as string;
  const publish = run.nodes.find((node) => node.key === "publish")?.task_id as string;
  await rest(source, alice, `/tasks/${notesTask}/claim`, { method: "POST" });
  await rest(source, alice, `/tasks/${notesTask}/complete`, { method: "POST", body: { output: { pages: 2 } } });

  const consumed = await rest(source, alice, "/messages", { body: { to: "bob", subject: "cart", body: "The cart rounds down: can you look?" } });
  const unread = await rest(source, alice, "/messages", { body: { to: "bob", body: "Also the totals page" } });
  const broadcast = await rest(source, bob, "/messages", { body: { to: "broadcast", subject: "freeze", body: "Code freeze on Friday" } });
  await rest(source, alice, "/messages", { body: { to: "project:web", body: "Release 1.2 is planned" } });
  const taken = await rest<{ id: string }[]>(source, bob, "/messages/inbox/consume", { body: { limit: 1 } });
  expect(taken.map((message) => message.id)).toEqual([consumed.id]);
  await rest(source, alice, `/messages/${broadcast.id}/read`, { method: "POST" });
  const handoff = await rest(source, alice, "/sessions/handoff", { body: { summary: "Release notes done; publishing next", next_steps: ["publish 1.2"], memory_refs: [addNote.id] } });

  return {
    source,
    alice,
    bob,
    repo,
    ids: { addNote: addNote.id, shoutNote: shoutNote.id, consumed: consumed.id, unread: unread.id, broadcast: broadcast.id, claimed: claimed.id, run: run.id, publish, handoff: handoff.id, decision: decision.id },
  };
}

/** The lines of an export as they must come back: the header and the servers' own identities aside. */
function comparable(text: string, own: TestServer): Line[] {
  const bootstrap = new Set([own.config.UI_AGENT_ID, own.config.ARCHIVIST_AGENT_ID]);
  return parse(text).filter((line) => line.kind !== "header" && !(line.kind === "agent" && bootstrap.has(line.agent_id as string)));
}

/** Gives an imported agent a key on its new server, as the owner does after a move. */
async function keyFor(target: TestServer, agentId: string): Promise<Credentials> {
  const { api_key: apiKey } = await rest<{ api_key: string }>(target, target.owner, `/agents/${agentId}/rotate-key`, { method: "POST" });
  return { agentId, apiKey };
}

describe("moving a team to a new server", () => {
  it("exports every kind of record a team shares, and imports them into an empty server line for line; a second import skips them all", async () => {
    const { source, ids } = await team();
    const text = await exportText(source);
    const lines = parse(text);
    const kinds = [...new Set(lines.map((line) => line.kind))];
    expect(kinds).toEqual(["header", "project", "agent", "entry", "edge", "decision", "blueprint", "task", "run", "message", "handoff"]);
    expect(lines[0]).toMatchObject({ kind: "header", format: 2 });
    expect(lines.find((line) => line.kind === "project")).toMatchObject({ id: "web", members: expect.arrayContaining([expect.objectContaining({ agent_id: "bob" })]) as unknown[] });
    // Never a key, nor a secret, nor a private entry.
    expect(text).not.toMatch(/api_key|key_hash|key_source/);
    const compiled = lines.filter((line) => line.kind === "entry" && line.type === "compiled");
    expect(compiled.length).toBeGreaterThanOrEqual(5);
    for (const entry of compiled) expect(entry.anchor).toMatchObject({ path: expect.stringMatching(/^src\//) as string, sha: expect.stringMatching(/^[0-9a-f]{64}$/) as string });
    expect(lines.filter((line) => line.kind === "edge").map((line) => line.rel)).toEqual(expect.arrayContaining(["grounds", "depends_on", "supports", "relates_to"]) as string[]);
    expect(lines.find((line) => line.id === ids.addNote)).toMatchObject({ stale_since: expect.any(String) as string, stale_reason: { symbol: "add" } });
    expect(lines.find((line) => line.id === ids.consumed)).toMatchObject({ kind: "message", recipients: [{ agent_id: "bob", read_at: expect.any(String) as string }] });
    expect(lines.filter((line) => line.kind === "blueprint").map((line) => line.version)).toEqual([1, 2]);

    const target = await server();
    const answer = await importText(target, text);
    expect(answer.errors).toEqual([]);
    // The owner and the archivist are the new server's own; everything else is new there.
    expect(answer.skipped).toBe(2);
    const byKind = (kind: string): number => lines.filter((line) => line.kind === kind).length;
    expect(answer.imported).toEqual({
      projects: byKind("project"),
      agents: byKind("agent") - 2,
      entries: byKind("entry"),
      edges: byKind("edge"),
      decisions: byKind("decision"),
      blueprints: byKind("blueprint"),
      tasks: byKind("task"),
      runs: byKind("run"),
      messages: byKind("message"),
      handoffs: byKind("handoff"),
    });
    // What the new server exports is what the old one did: ids, authors, versions, times, anchors, read states.
    expect(comparable(await exportText(target), target)).toEqual(comparable(text, source));

    const again = await importText(target, text);
    expect(again).toEqual({ imported: Object.fromEntries(Object.keys(answer.imported).map((kind) => [kind, 0])), skipped: lines.length - 1, errors: [], dry_run: false });
  });

  it("keeps compiled memory grounded: the next compile on the new server duplicates nothing and marks stale as the old server does", async () => {
    const { source, alice, repo, ids } = await team();
    const text = await exportText(source);
    const target = await server();
    expect((await importText(target, text)).errors).toEqual([]);
    const aliceThere = await keyFor(target, "alice");

    // The mark made before the move came along, and the anchors with their entries.
    const staleBefore = await staleOf(source, alice);
    expect(staleBefore.map((entry) => entry.id)).toContain(ids.addNote);
    expect(await staleOf(target, aliceThere)).toEqual(staleBefore);
    const anchors = await rest<unknown[]>(source, alice, "/compile/anchors?project=web");
    expect(await rest<unknown[]>(target, aliceThere, "/compile/anchors?project=web")).toEqual(anchors);

    // The same code compiled again on either server: every unit checks fresh, so nothing is sent, made or rewritten.
    const unchanged = { units: anchors.length, sent: 0, created: 0, updated: 0, removed: 0 };
    expect(await compile(repo, target, aliceThere)).toMatchObject(unchanged);
    expect(await compile(repo, source, alice)).toMatchObject(unchanged);

    // shout() changes, and add() goes back to what it was: both servers mark and clear alike.
    commit(repo, { math: "a + b", text: "text.toUpperCase() + '!'" }, "louder, and add as it was");
    const there = await compile(repo, target, aliceThere);
    const here = await compile(repo, source, alice);
    const withoutTime = ({ ms: _ms, ...answer }: CompileAnswer & { ms?: number }): CompileAnswer => answer;
    expect(withoutTime(there)).toEqual(withoutTime(here));
    expect(here).toMatchObject({ created: 0, updated: 2, removed: 0 });
    const markedThere = await staleOf(target, aliceThere);
    const markedHere = await staleOf(source, alice);
    expect(markedThere.map((entry) => entry.id)).toContain(ids.shoutNote);
    expect(markedThere.map((entry) => entry.id)).not.toContain(ids.addNote);
    expect(markedThere.map(({ id, stale_reason }) => ({ id, stale_reason }))).toEqual(markedHere.map(({ id, stale_reason }) => ({ id, stale_reason })));
    const compiledEntries = async (on: TestServer, as: Credentials): Promise<number> => (await rest<unknown[]>(on, as, "/memory?type=compiled&project=web&limit=100")).length;
    expect(await compiledEntries(target, aliceThere)).toBe(await compiledEntries(source, alice));
  });

  it("keeps each recipient's read state: a message consumed on the old server is never delivered again", async () => {
    const { source, alice, bob, ids } = await team();
    const target = await server();
    expect((await importText(target, await exportText(source))).errors).toEqual([]);
    // The old key is not the agent's here: keys never leave a server.
    expect((await target.request("/messages/inbox", { as: bob })).status).toBe(401);
    const bobThere = await keyFor(target, "bob");

    const inboxHere = await rest<{ id: string }[]>(source, bob, "/messages/inbox");
    const inboxThere = await rest<{ id: string; read: boolean }[]>(target, bobThere, "/messages/inbox");
    expect(inboxThere.map((message) => message.id)).toEqual(inboxHere.map((message) => message.id));
    expect(inboxThere.map((message) => message.id)).toContain(ids.unread);
    expect(inboxThere.map((message) => message.id)).not.toContain(ids.consumed);
    const taken = await rest<{ id: string }[]>(target, bobThere, "/messages/inbox/consume", { body: { limit: 50 } });
    expect(taken.map((message) => message.id)).toEqual(inboxHere.map((message) => message.id));
    expect(await rest<unknown[]>(target, bobThere, "/messages/inbox/consume", { body: { limit: 50 } })).toEqual([]);
    expect((await rest<{ read: boolean }>(target, bobThere, `/messages/${ids.consumed}`)).read).toBe(true);

    // Alice read bob's broadcast there; it is read for her here too, and the sender's own is not in its inbox.
    const aliceThere = await keyFor(target, "alice");
    const aliceInbox = await rest<{ id: string }[]>(target, aliceThere, "/messages/inbox");
    expect(aliceInbox.map((message) => message.id)).not.toContain(ids.broadcast);
    expect(aliceInbox.map((message) => message.id)).toEqual((await rest<{ id: string }[]>(source, alice, "/messages/inbox")).map((message) => message.id));
  });

  it("keeps the work going: claims, blueprint runs, memberships, decisions and handoffs act there as they did here", async () => {
    const { source, alice, ids } = await team();
    const target = await server();
    expect((await importText(target, await exportText(source))).errors).toEqual([]);
    const aliceThere = await keyFor(target, "alice");
    const bobThere = await keyFor(target, "bob");

    expect(await rest(target, aliceThere, "/projects/web/members")).toEqual(await rest(source, alice, "/projects/web/members"));
    expect(await rest(target, aliceThere, `/decisions/${ids.decision}`)).toEqual(await rest(source, alice, `/decisions/${ids.decision}`));
    expect((await rest<{ last_handoff: unknown }>(target, target.owner, "/sessions/handoff/alice?peek=true")).last_handoff).toEqual(
      (await rest<{ last_handoff: unknown }>(source, source.owner, "/sessions/handoff/alice?peek=true")).last_handoff,
    );
    expect(await rest(target, aliceThere, "/blueprints/release?project=web")).toEqual(await rest(source, alice, "/blueprints/release?project=web"));
    expect(await rest(target, aliceThere, `/blueprints/runs/${ids.run}`)).toEqual(await rest(source, alice, `/blueprints/runs/${ids.run}`));

    // Bob's claim is his there, lease and all, and he finishes the task. His request there is
    // activity that may extend the lease (when he was last seen a while ago): it can only have grown.
    const claimed = await rest<{ status: string; assigned_to: string; lease_expires_at: string }>(target, bobThere, `/tasks/${ids.claimed}`);
    const here = await rest<{ lease_expires_at: string }>(source, source.owner, `/tasks/${ids.claimed}`);
    expect({ ...claimed, lease_expires_at: null }).toEqual({ ...here, lease_expires_at: null });
    expect(Date.parse(claimed.lease_expires_at)).toBeGreaterThanOrEqual(Date.parse(here.lease_expires_at));
    expect(claimed).toMatchObject({ status: "claimed", assigned_to: "bob" });
    await rest(target, bobThere, `/tasks/${ids.claimed}/complete`, { method: "POST", body: { comment: "done on the new server" } });

    // The run goes on: publishing, its last task, completes it.
    await rest(target, aliceThere, `/tasks/${ids.publish}/claim`, { method: "POST" });
    await rest(target, aliceThere, `/tasks/${ids.publish}/complete`, { method: "POST" });
    expect(await rest<{ status: string }>(target, aliceThere, `/blueprints/runs/${ids.run}`)).toMatchObject({ status: "completed" });
  });
});

describe("a dry run", () => {
  it("answers exactly as the import then does, on an empty server and on one that holds part of the file", async () => {
    const { source } = await team();
    const text = await exportText(source);
    const lines = text.split("\n").filter((line) => line !== "");

    const empty = await server();
    const dry = await importText(empty, text, "?dry_run=true");
    expect(dry.errors).toEqual([]);
    expect(await rest<unknown[]>(empty, empty.owner, "/memory")).toEqual([]);
    expect(await importText(empty, text)).toEqual({ ...dry, dry_run: false });

    // The first half is there already: lines of the second half need records of both halves.
    const half = await server();
    const firstHalf = await importText(half, lines.slice(0, Math.floor(lines.length / 2)).join("\n"));
    expect(firstHalf.errors).toEqual([]);
    const dryRest = await importText(half, text, "?dry_run=true");
    expect(dryRest.skipped).toBeGreaterThan(2);
    expect(await importText(half, text)).toEqual({ ...dryRest, dry_run: false });

    // Lines that fail fail alike, with the same numbers and reasons.
    const broken = [...lines.slice(0, 3), "not json", ...lines.slice(3).map((line) => line.replace('"project":"web"', '"project":"nowhere"'))].join("\n");
    const other = await server();
    const dryBroken = await importText(other, broken, "?dry_run=true");
    expect(dryBroken.errors.length).toBeGreaterThan(1);
    expect(await importText(other, broken)).toEqual({ ...dryBroken, dry_run: false });
  });

  it("of a file many times larger than one request answers as `cairn import` then does, with no error", async () => {
    const small = { MAX_BODY_BYTES: "4096", MAX_CONTENT_BYTES: "2048" };
    const source = await server(small);
    const alice = await source.agent("alice");
    await rest(source, alice, "/projects", { body: { name: "Big" } });
    let previous: string | null = null;
    // More lines than one transaction of the import takes (250), and many times more bytes than one request.
    for (let index = 0; index < 130; index++) {
      const entry: { id: string } = await rest(source, alice, "/memory", { body: { content: `Fact number ${index} about the big project: ${"detail ".repeat(20)}`, project: "big", allow_duplicate: true } });
      if (previous !== null) await rest(source, alice, "/graph/edge", { body: { src: entry.id, dst: previous, rel: "relates_to" } });
      previous = entry.id;
    }
    const file = join(scratch("cairn-move-file-"), "big.jsonl");
    const exported = await cairn(process.cwd(), ["export", "--output", file], cliEnv(source, source.owner, small));
    expect(exported.code, exported.stderr).toBe(0);

    const target = await server(small);
    const dry = await cairn(process.cwd(), ["import", file, "--dry-run", "--json"], cliEnv(target, target.owner, small));
    expect(dry.code, dry.stderr).toBe(0);
    const real = await cairn(process.cwd(), ["import", file, "--json"], cliEnv(target, target.owner, small));
    expect(real.code, real.stderr).toBe(0);
    const dryAnswer = JSON.parse(dry.stdout) as ImportAnswer;
    expect(dryAnswer).toMatchObject({ imported: { projects: 1, entries: 130, edges: 129 }, errors: [] });
    expect(JSON.parse(real.stdout)).toEqual({ ...dryAnswer, dry_run: false });
  });
});
