import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import type { Archivist } from "../../archivist/archivist.js";
import { MAX_PATHS_PER_COMPILE } from "../../archivist/grounding.js";
import { SYNTHESIS_ROLE } from "../../archivist/prompts.js";
import { STALE_SHOWN } from "../../archivist/synthesis.js";
import type { CompileResult } from "../../src/wire/compile.js";
import type { GraphEdge as Edge } from "../../src/wire/graph.js";
import type { LogEntry as LogLine } from "../../src/wire/logs.js";
import { llmEnv, startArchivist } from "../helpers/archivist.js";
import { test } from "../helpers/fixtures.js";
import { createProject, list, write, type MemoryEntry } from "../helpers/memory.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// CONTRACT §18 and §9: after a compile the archivist suggests `grounds` edges from a changed file's
// compiled entry to the entries that name the file, so they go stale with the code; the hourly
// synthesis doc lists the project's stale entries for their authors.

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

/** A unit of `path` (`symbol` "" for its module); `version` stands for its text, so a new version is a new sha. */
function unit(path: string, symbol = "", version = "1", fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    path,
    symbol,
    kind: symbol === "" ? "module" : "function",
    lang: "typescript",
    start_line: 1,
    end_line: 9,
    sha: sha(`${path}::${symbol}@${version}`),
    description: symbol === "" ? `module ${path}` : `function ${symbol}(): void`,
    deps: [],
    ...fields,
  };
}

async function compile(server: TestServer, as: Credentials, project: string | null, units: Record<string, unknown>[]): Promise<CompileResult> {
  const response = await server.request<CompileResult>("/compile", { as, body: { project, units } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

const logs = async (server: TestServer, action: string): Promise<LogLine[]> =>
  (await server.request<LogLine[]>(`/logs?action=${action}&limit=100`, { as: server.owner })).body;

/** Waits for the archivist's `count`-th grounding run and returns its log, newest first. */
async function groundingRuns(server: TestServer, count: number): Promise<LogLine[]> {
  expect(await eventually(async () => (await logs(server, "grounding")).length >= count, 30_000)).toBe(true);
  return logs(server, "grounding");
}

/** The `grounds` edges leaving a compiled entry, as `as` sees them. */
async function grounds(server: TestServer, as: Credentials, compiledId: string): Promise<Edge[]> {
  const response = await server.request<{ edges: { out: Edge[] } }>(`/graph/${compiledId}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body.edges.out.filter((edge) => edge.rel === "grounds");
}

/** The `grounds` edges reaching an entry, as `as` sees them. */
async function groundedBy(server: TestServer, as: Credentials, id: string): Promise<Edge[]> {
  const response = await server.request<{ edges: { in: Edge[] } }>(`/graph/${id}`, { as });
  expect(response.status, response.text).toBe(200);
  return response.body.edges.in.filter((edge) => edge.rel === "grounds");
}

const stale = async (server: TestServer, as: Credentials, project: string): Promise<MemoryEntry[]> =>
  (await server.request<MemoryEntry[]>(`/compile/stale?project=${project}&limit=500`, { as })).body;

const BUNDLER = "The bundler is configured in src/build.ts; it reads TARGET from the environment.";
const RELEASE = "Release checklist: bump the version, run ./src/build.ts with TARGET=prod, then tag the commit.";

describe("grounding suggestions after a compile", () => {
  /** alice owns atlas (bob is a member) and borealis; the archivist runs without a model. */
  const it = test.extend("world", async ({ server }, { onCleanup }) => {
    const alice = await server.agent("alice");
    const bob = await server.agent("bob");
    await createProject(server, alice, "atlas");
    await server.request("/projects/atlas/join", { as: bob, method: "POST" });
    await createProject(server, alice, "borealis");
    const archivist: Archivist = await startArchivist(server);
    onCleanup(() => archivist.stop());
    return { archivist, alice, bob };
  });

  it("links the entries that name a changed file from the file's compiled entry, and no others", async ({ server, world }) => {
    const { alice, bob } = world;
    const bundler = await write(server, bob, { project: "atlas", content: BUNDLER });
    const release = await write(server, alice, { project: "atlas", type: "doc", content: RELEASE });
    const otherFile = await write(server, bob, { project: "atlas", content: "The splash screen lives in src/build.tsx, next to the bundler." });
    const wordsOnly = await write(server, bob, { project: "atlas", content: "To build the src tree, run the ts compiler twice." });
    const directive = await write(server, server.owner, { project: "atlas", type: "directive", content: "Never change src/build.ts without a review." });
    const otherProject = await write(server, alice, { project: "borealis", content: "Borealis has its own src/build.ts for the docs site." });
    const mine = await write(server, bob, { project: "atlas", scope: "agent", content: "My own notes on src/build.ts: it is slow." });

    const result = await compile(server, alice, "atlas", [unit("src/build.ts"), unit("src/build.ts", "main"), unit("src/cli.ts")]);
    const [buildModule, main, cliModule] = result.memory_ids as [string, string, string];
    const [run] = await groundingRuns(server, 1);

    const edges = await grounds(server, bob, buildModule);
    expect(edges.map((edge) => edge.dst).sort()).toEqual([bundler.id, release.id].sort());
    for (const edge of edges) expect(edge).toMatchObject({ agent_id: "archivist", note: "suggested by the archivist: mentions src/build.ts" });
    // From the module's entry only: not from a symbol's, and nothing for a file no entry names.
    expect(await grounds(server, bob, main)).toEqual([]);
    expect(await grounds(server, bob, cliModule)).toEqual([]);
    for (const untouched of [otherFile, wordsOnly, directive, otherProject]) expect(await groundedBy(server, server.owner, untouched.id)).toEqual([]);
    expect(await groundedBy(server, bob, mine.id)).toEqual([]);
    expect(run?.details).toMatchObject({ compiles: 1, paths: 2, edges: 2, alreadyGrounded: 0, refused: 0 });
  });

  it("makes what it linked go stale when the file changes, and links nothing twice", async ({ server, world }) => {
    const { alice, bob } = world;
    const bundler = await write(server, bob, { project: "atlas", content: BUNDLER });
    const first = await compile(server, alice, "atlas", [unit("src/build.ts"), unit("src/build.ts", "main")]);
    const buildModule = first.memory_ids[0] as string;
    await groundingRuns(server, 1);
    expect((await grounds(server, bob, buildModule)).map((edge) => edge.dst)).toEqual([bundler.id]);

    // The module's shape changed (a new import, say): what it grounds is stale until bob looks again.
    const second = await compile(server, alice, "atlas", [unit("src/build.ts", "", "2")]);
    expect(second.invalidated).toEqual([bundler.id]);
    const [marked] = await stale(server, bob, "atlas");
    expect(marked).toMatchObject({ id: bundler.id, stale_reason: { path: "src/build.ts", symbol: "", old_sha: sha("src/build.ts::@1"), new_sha: sha("src/build.ts::@2") } });

    const [run] = await groundingRuns(server, 2);
    expect(run?.details).toMatchObject({ compiles: 1, paths: 1, edges: 0, alreadyGrounded: 1 });
    expect(await grounds(server, bob, buildModule)).toHaveLength(1);
  });

  it("leaves an entry alone that its author grounded on the file's code, and links one written since the last compile", async ({ server, world }) => {
    const { alice, bob } = world;
    const first = await compile(server, alice, "atlas", [unit("src/build.ts"), unit("src/build.ts", "main")]);
    const [buildModule, main] = first.memory_ids as [string, string];
    await groundingRuns(server, 1);
    // Written after that compile: the next compile of the file finds them.
    const own = await write(server, bob, { project: "atlas", content: "main() in src/build.ts exits 2 when TARGET is unknown." });
    expect((await server.request("/graph/edge", { as: bob, body: { src: main, dst: own.id, rel: "grounds" } })).status).toBe(201);
    const later = await write(server, alice, { project: "atlas", content: BUNDLER });

    await compile(server, alice, "atlas", [unit("src/build.ts", "main", "2")]);
    const [run] = await groundingRuns(server, 2);
    expect(run?.details).toMatchObject({ paths: 1, edges: 1, alreadyGrounded: 1 });
    expect((await grounds(server, bob, buildModule)).map((edge) => edge.dst)).toEqual([later.id]);
    expect((await grounds(server, bob, main)).map((edge) => [edge.dst, edge.agent_id])).toEqual([[own.id, "bob"]]);
  });

  it("grounds global entries from global code, and no project's", async ({ server, world }) => {
    const { alice, bob } = world;
    const everyone = await write(server, bob, { project: null, content: BUNDLER });
    const atlas = await write(server, bob, { project: "atlas", content: BUNDLER.replace("bundler", "atlas bundler") });
    const result = await compile(server, alice, null, [unit("src/build.ts")]);
    await groundingRuns(server, 1);
    expect((await grounds(server, bob, result.memory_ids[0] as string)).map((edge) => edge.dst)).toEqual([everyone.id]);
    expect(await groundedBy(server, bob, atlas.id)).toEqual([]);
  });

  it(`looks at the first ${MAX_PATHS_PER_COMPILE} files of a compile and no more`, async ({ server, world }) => {
    const { alice, bob } = world;
    const files = Array.from({ length: MAX_PATHS_PER_COMPILE + 5 }, (_, index) => `lib/part${String(index).padStart(2, "0")}.ts`);
    const firstFile = await write(server, bob, { project: "atlas", content: `The first part, ${files[0]}, sets the defaults.` });
    const lastFile = await write(server, bob, { project: "atlas", content: `The last part, ${files.at(-1)}, cleans up.` });
    const result = await compile(server, alice, "atlas", files.map((path) => unit(path)));
    const [run] = await groundingRuns(server, 1);
    expect(run?.details).toMatchObject({ compiles: 1, paths: MAX_PATHS_PER_COMPILE, skippedPaths: 5, edges: 1 });
    expect((await grounds(server, bob, result.memory_ids[0] as string)).map((edge) => edge.dst)).toEqual([firstFile.id]);
    expect(await groundedBy(server, bob, lastFile.id)).toEqual([]);
  });

  it("grounds a compile made while no archivist ran once the next one starts", async ({ server, world }) => {
    const { archivist, alice, bob } = world;
    await archivist.stop();
    const bundler = await write(server, bob, { project: "atlas", content: BUNDLER });
    const result = await compile(server, alice, "atlas", [unit("src/build.ts")]);

    const next = await startArchivist(server);
    try {
      await groundingRuns(server, 1);
      expect((await grounds(server, bob, result.memory_ids[0] as string)).map((edge) => edge.dst)).toEqual([bundler.id]);
    } finally {
      await next.stop();
    }
  });
});

describe("stale entries in the synthesis doc", () => {
  /** alice owns atlas (bob is a member); the archivist runs with the fake as its model. */
  const it = test.extend("world", async ({ server, fake }, { onCleanup }) => {
    const alice = await server.agent("alice");
    const bob = await server.agent("bob");
    await createProject(server, alice, "atlas");
    await server.request("/projects/atlas/join", { as: bob, method: "POST" });
    fake.respond((call) => (call.system.endsWith(SYNTHESIS_ROLE) ? JSON.stringify({ summary: "Bundling notes." }) : "{}"));
    const archivist: Archivist = await startArchivist(server, llmEnv(fake));
    onCleanup(() => archivist.stop());
    return { archivist, alice, bob };
  });
  it.override("serverEnv", { DUPLICATE_THRESHOLD: "0.99" });

  it("lists the longest stale first with the code that changed and since when, and counts the rest", async ({ server, world }) => {
    const { archivist, alice, bob } = world;
    // cli.ts's run uses main: its compiled entry is marked too, but it is compile's to clear, not an author's.
    const first = await compile(server, alice, "atlas", [unit("src/build.ts"), unit("src/build.ts", "main"), unit("src/cli.ts", "run", "1", { deps: [{ kind: "symbol", name: "src/build.ts::main" }] })]);
    const [, main, run] = first.memory_ids as [string, string, string];
    const notes: MemoryEntry[] = [];
    for (let step = 1; step <= STALE_SHOWN + 2; step++) {
      const note = await write(server, bob, { project: "atlas", content: `Bundling step ${step} runs after the type check.\nDetails follow.` });
      expect((await server.request("/graph/edge", { as: bob, body: { src: main, dst: note.id, rel: "grounds" } })).status).toBe(201);
      notes.push(note);
    }
    const second = await compile(server, alice, "atlas", [unit("src/build.ts", "main", "2")]);
    expect(second.invalidated).toContain(run);
    const marked = await stale(server, bob, "atlas");
    expect(marked).toHaveLength(STALE_SHOWN + 3);

    const report = await archivist.runPass();
    const doc = (await list(server, bob, "project=atlas&type=doc&tag=synthesis")).find((entry) => report?.docs.includes(entry.id));
    const lines = (doc?.content ?? "").split("\n");
    expect(lines.filter((line) => line.startsWith("### "))).toEqual(["### Recommended Actions", "### Suggested Directives", "### Stale Entries"]);
    const section = lines.slice(lines.indexOf("### Stale Entries"));
    expect(section).toContain(
      `${STALE_SHOWN + 2} entries are about code that changed after they were written. Each author should check theirs and update it (or delete it); the longest stale first:`,
    );
    const listed = section.filter((line) => line.startsWith("- "));
    expect(listed).toHaveLength(STALE_SHOWN);
    const since = (marked.find((entry) => entry.id === notes[0]?.id)?.stale_since ?? "").slice(0, 16).replace("T", " ");
    const byId = new Map(notes.map((note) => [note.id, note]));
    for (const line of listed) {
      const id = /^- `([0-9a-f-]{36})` /.exec(line)?.[1] ?? "";
      const step = byId.get(id)?.content.split("\n")[0];
      expect(line).toBe(`- \`${id}\` (bob) ${step} — \`src/build.ts::main\` changed, stale since ${since} UTC`);
    }
    expect(section.join("\n")).not.toContain(run);
    expect(section).toContain("…and 2 more (`GET /compile/stale`).");

    // The doc names src/build.ts, but it is the archivist's own: only an author clears a mark, so it is never grounded.
    await compile(server, alice, "atlas", [unit("src/build.ts", "main", "3")]);
    expect(await eventually(async () => (await logs(server, "grounding")).reduce((sum, line) => sum + Number(line.details.compiles), 0) >= 3, 30_000)).toBe(true);
    expect(await groundedBy(server, bob, doc?.id as string)).toEqual([]);
  });

  it("has no stale section when nothing in the project is stale, and never shows the model compiled entries", async ({ server, fake, world }) => {
    const { archivist, alice, bob } = world;
    const compiled = await compile(server, alice, "atlas", [unit("src/build.ts"), unit("src/build.ts", "main")]);
    const note = await write(server, bob, { project: "atlas", content: BUNDLER });
    const report = await archivist.runPass();
    const doc = (await list(server, bob, "project=atlas&type=doc&tag=synthesis")).find((entry) => report?.docs.includes(entry.id));
    expect(doc?.content).toContain("Bundling notes.");
    expect(doc?.content).not.toContain("### Stale Entries");
    const shown = fake.calls.filter((call) => call.system.endsWith(SYNTHESIS_ROLE)).map((call) => call.user);
    expect(shown.join("\n")).toContain(note.id);
    for (const id of compiled.memory_ids) expect(shown.join("\n")).not.toContain(id);
  });
});
