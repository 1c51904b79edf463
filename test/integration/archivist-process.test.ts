import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/wire/messages.js";
import { llmEnv } from "../helpers/archivist.js";
import { startFakeLlm, type FakeLlm } from "../helpers/fake-llm.js";
import { eventsOf, list, write, type EventRecord, type MemoryEntry } from "../helpers/memory.js";
import { request, startTestServer, tempDir, testEnv, type Credentials, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

/**
 * The archivist as real processes (`cairn archivist`, and the child `cairn serve` supervises):
 * the lease keeps exactly one at work, a dead holder is replaced, and a restart (graceful or not)
 * loses no write it should have looked at.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/src/cli.js");
const SUBJECT = "Possible memory conflict";
const LEASE_SECONDS = "10";
const SERVER_ENV = { DUPLICATE_THRESHOLD: "0.99" };
const MERGED = "The staging database password rotates monthly; it is kept in the vault.";

// Pairwise unrelated under the hash embedder; each pair is one sentence written by two agents (similarity 1.0).
const TOPICS = [
  "The staging database password rotates every thirty days and lives in the vault.",
  "Deploys to production happen on Tuesdays once the weekly code freeze lifts.",
  "Billing API requests are limited to one hundred per second for each tenant.",
  "Nightly backups of the analytics warehouse are copied to cold storage in Frankfurt.",
  "The mobile client caches feature flags for ten minutes before refreshing them.",
  "Search indexing workers retry failed documents three times with exponential backoff.",
  "Customer support tickets tagged urgent page the on-call engineer immediately.",
  "Image thumbnails are generated lazily by the media service on first request.",
  "Kafka topics for audit trails keep their messages for ninety days.",
];

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Proc {
  child: ChildProcess;
  pid: number;
  output: { stdout: string; stderr: string };
  exit: Promise<Run>;
}

interface Pair {
  a: MemoryEntry;
  b: MemoryEntry;
}

const children: ChildProcess[] = [];
/** Processes found by pid (the archivists `serve` spawns), killed too should a test fail. */
const strays: number[] = [];
const servers: TestServer[] = [];
const fakes: FakeLlm[] = [];
const dirs: string[] = [];

afterEach(async () => {
  const exits = children.splice(0).map((child) => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill("SIGKILL");
    return exited;
  });
  for (const pid of strays.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  await Promise.all(exits);
  for (const server of servers.splice(0)) await server.close();
  for (const fake of fakes.splice(0)) await fake.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = tempDir("cairn-archivist-proc-");
  dirs.push(dir);
  return dir;
}

function launch(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  const exit = new Promise<Run>((done, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => done({ code, signal }));
  });
  if (child.pid === undefined) throw new Error(`could not spawn cairn ${args.join(" ")}`);
  return { child, pid: child.pid, output, exit };
}

async function newServer(): Promise<TestServer> {
  const server = await startTestServer(SERVER_ENV);
  servers.push(server);
  return server;
}

/** `cairn archivist` against `server` as the archivist agent, naming itself `holder` on the lease. */
function archivist(server: TestServer, holder: string, env: Record<string, string> = {}): Proc {
  return launch(
    ["archivist"],
    testEnv(dataDir(), {
      CAIRN_URL: server.url,
      CAIRN_AGENT_ID: "archivist",
      CAIRN_API_KEY: server.archivist.apiKey,
      ARCHIVIST_LEASE_SECONDS: LEASE_SECONDS,
      ARCHIVIST_HOLDER: holder,
      ARCHIVIST_LLM_PROVIDER: "none",
      LOG_LEVEL: "error",
      ...env,
    }),
  );
}

const running = (proc: Proc): boolean => proc.child.exitCode === null && proc.child.signalCode === null;

async function killed(proc: Proc, signal: NodeJS.Signals): Promise<Run> {
  proc.child.kill(signal);
  return proc.exit;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Live (not zombie) processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const table = execFileSync("ps", ["-A", "-o", "pid=,ppid=,stat="], { encoding: "utf8" });
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, stat]) => Number(ppid) === pid && !stat?.startsWith("Z"))
    .map(([child]) => Number(child));
}

const holdersOf = (events: EventRecord[]): unknown[] => events.map((event) => event.payload.holder);
const startedHolders = async (server: TestServer): Promise<unknown[]> => holdersOf(await eventsOf(server, "archivist.started"));

/** One topic written by alice and by bob: a conflicting pair in global memory. */
async function writePair(server: TestServer, alice: Credentials, bob: Credentials, topic: number): Promise<Pair> {
  const content = TOPICS[topic] as string;
  const a = await write(server, alice, { content, project: null });
  const b = await write(server, bob, { content, project: null });
  return { a, b };
}

async function conflictMessages(server: TestServer, as: Credentials): Promise<Message[]> {
  const response = await server.request<Message[]>("/messages/inbox?limit=500", { as });
  expect(response.status).toBe(200);
  return response.body.filter((message) => message.subject === SUBJECT);
}

/** How many conflict reports `as` got that name both entries of `pair`. */
async function reportsOf(server: TestServer, as: Credentials, pair: Pair): Promise<number> {
  return (await conflictMessages(server, as)).filter((message) => message.body.includes(pair.a.id) && message.body.includes(pair.b.id)).length;
}

/** Every pair has been reported to both authors (at least once). */
async function allReported(server: TestServer, authors: Credentials[], pairs: Pair[]): Promise<boolean> {
  for (const author of authors) for (const pair of pairs) if ((await reportsOf(server, author, pair)) === 0) return false;
  return true;
}

/** The stream cursor the archivist saved: every write up to it has been checked and reported. */
async function savedCursor(server: TestServer): Promise<number | null> {
  const response = await server.request<{ value: unknown }>("/archivist/state/stream_cursor", { as: server.archivist });
  return response.status === 200 && typeof response.body.value === "number" ? response.body.value : null;
}

/** Resolves once the working archivist has saved a cursor at or past the last write: it has nothing left to do. */
async function settled(server: TestServer): Promise<boolean> {
  const last = (await eventsOf(server, "memory.written")).at(-1)?.seq ?? 0;
  return eventually(async () => ((await savedCursor(server)) ?? -1) >= last, 10_000);
}

/** Each pair was reported to each author exactly once, and no conflict report names anything else. */
async function expectReportedOnce(server: TestServer, authors: Credentials[], pairs: Pair[]): Promise<void> {
  for (const author of authors) {
    for (const pair of pairs) expect(await reportsOf(server, author, pair), `${author.agentId}: ${pair.a.content}`).toBe(1);
    expect(await conflictMessages(server, author)).toHaveLength(pairs.length);
  }
}

async function authors(server: TestServer): Promise<[Credentials, Credentials]> {
  return [await server.agent("alice"), await server.agent("bob")];
}

describe("two archivist processes share one lease", () => {
  it("only the holder works; when it is killed the other takes over within the TTL and works", async () => {
    const server = await newServer();
    const [alice, bob] = await authors(server);
    const procs = { "lease-a": archivist(server, "lease-a"), "lease-b": archivist(server, "lease-b") };

    expect(await eventually(async () => (await startedHolders(server)).length > 0, 15_000)).toBe(true);
    const first = (await startedHolders(server))[0] as keyof typeof procs;
    expect(Object.keys(procs)).toContain(first);
    const second = first === "lease-a" ? "lease-b" : "lease-a";

    const pair1 = await writePair(server, alice, bob, 0);
    expect(await eventually(() => allReported(server, [alice, bob], [pair1]), 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    // Both ran all along, yet one started work and one report went to each author.
    expect(running(procs[first]), procs[first].output.stderr).toBe(true);
    expect(running(procs[second]), procs[second].output.stderr).toBe(true);
    expect(await startedHolders(server)).toEqual([first]);
    await expectReportedOnce(server, [alice, bob], [pair1]);
    // A third holder asking is refused and told who holds it (the holder renews well within the TTL).
    const probe = await server.request<{ granted: boolean; holder: string }>("/archivist/lease", {
      as: server.archivist,
      body: { holder: "probe", ttl_seconds: 10 },
    });
    expect(probe.status).toBe(200);
    expect(probe.body).toMatchObject({ granted: false, holder: first });

    // The holder dies without releasing: the other waits out the TTL, then takes over.
    expect((await killed(procs[first], "SIGKILL")).signal).toBe("SIGKILL");
    // Written while the dead holder's lease runs out: the successor picks it up from the saved cursor.
    const orphaned = await writePair(server, alice, bob, 1);
    expect(await eventually(async () => (await startedHolders(server)).length === 2, 15_000)).toBe(true);
    expect(await startedHolders(server)).toEqual([first, second]);
    const handovers = holdersOf(await eventsOf(server, "archivist.lease"));
    expect(handovers).toEqual([first, second]);

    const pair3 = await writePair(server, alice, bob, 2);
    expect(await eventually(() => allReported(server, [alice, bob], [orphaned, pair3]), 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    await expectReportedOnce(server, [alice, bob], [pair1, orphaned, pair3]);
    expect(running(procs[second]), procs[second].output.stderr).toBe(true);
  });

  it("with a model: a conflicting pair costs one model call and makes one merged entry", async () => {
    const fake = await startFakeLlm();
    fakes.push(fake);
    fake.respond(() => JSON.stringify({ action: "merge", content: MERGED }));
    const server = await newServer();
    const [alice, bob] = await authors(server);
    const procs = [archivist(server, "model-a", llmEnv(fake)), archivist(server, "model-b", llmEnv(fake))];
    expect(await eventually(async () => (await startedHolders(server)).length > 0, 15_000)).toBe(true);

    const pair = await writePair(server, alice, bob, 0);
    const merged = async (): Promise<MemoryEntry[]> => (await list(server, server.owner, "agent=archivist")).filter((entry) => entry.content === MERGED);
    expect(await eventually(async () => (await merged()).length > 0, 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    for (const proc of procs) expect(running(proc), proc.output.stderr).toBe(true);
    expect(await startedHolders(server)).toHaveLength(1);
    expect(fake.calls).toHaveLength(1);
    const [entry] = await merged();
    expect(await merged()).toHaveLength(1);
    expect([...(entry as MemoryEntry).parents].sort()).toEqual([pair.a.id, pair.b.id].sort());
  });
});

describe("an archivist restarted while writes continue loses none of them", () => {
  it("SIGTERM: it saves its cursor and releases the lease; a successor reports every pair written meanwhile", async () => {
    const server = await newServer();
    const [alice, bob] = await authors(server);
    const before = archivist(server, "restart-1");
    expect(await eventually(async () => (await startedHolders(server)).length === 1, 15_000)).toBe(true);
    const pair1 = await writePair(server, alice, bob, 0);
    expect(await eventually(() => allReported(server, [alice, bob], [pair1]), 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    const cursor = await savedCursor(server);

    const run = await killed(before, "SIGTERM");
    expect(run.code, before.output.stderr).toBe(0);
    // Stopped cleanly: the cursor still covers pair 1, and the lease was given up.
    expect(await savedCursor(server)).toBeGreaterThanOrEqual(cursor ?? Infinity);
    expect((await eventsOf(server, "archivist.lease")).at(-1)?.payload).toMatchObject({ holder: null, previous: "restart-1" });

    const missed = [await writePair(server, alice, bob, 1), await writePair(server, alice, bob, 2), await writePair(server, alice, bob, 3)];
    const after = archivist(server, "restart-2");
    // Released, so a new holder need not wait out the TTL.
    expect(await eventually(async () => (await startedHolders(server)).length === 2, 5000)).toBe(true);
    const pair5 = await writePair(server, alice, bob, 4);
    expect(await eventually(() => allReported(server, [alice, bob], [...missed, pair5]), 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    await expectReportedOnce(server, [alice, bob], [pair1, ...missed, pair5]);
    expect(await startedHolders(server)).toEqual(["restart-1", "restart-2"]);
    expect(running(after), after.output.stderr).toBe(true);
  });

  it("SIGKILL: the same holder takes its lease back at once, resumes from the last saved cursor, and reports each pair once", async () => {
    const server = await newServer();
    const [alice, bob] = await authors(server);
    const before = archivist(server, "crashy");
    expect(await eventually(async () => (await startedHolders(server)).length === 1, 15_000)).toBe(true);
    const pair1 = await writePair(server, alice, bob, 0);
    expect(await eventually(() => allReported(server, [alice, bob], [pair1]), 10_000)).toBe(true);
    const pair2 = await writePair(server, alice, bob, 1);
    // Killed with pair 2 just written: perhaps not yet seen, perhaps reported with the cursor unsaved.
    expect((await killed(before, "SIGKILL")).signal).toBe("SIGKILL");

    const missed = [await writePair(server, alice, bob, 2), await writePair(server, alice, bob, 3)];
    const after = archivist(server, "crashy");
    // The lease is still live, but it is this holder's: no wait for the TTL.
    expect(await eventually(async () => (await startedHolders(server)).length === 2, 5000)).toBe(true);
    expect(await startedHolders(server)).toEqual(["crashy", "crashy"]);
    expect(await eventually(() => allReported(server, [alice, bob], [pair2, ...missed]), 10_000)).toBe(true);
    expect(await settled(server)).toBe(true);
    await expectReportedOnce(server, [alice, bob], [pair1, pair2, ...missed]);
    expect(running(after), after.output.stderr).toBe(true);
  });
});

describe("cairn serve supervises the archivist", () => {
  interface Served extends Proc {
    url: string;
    owner: Credentials;
  }

  /** Spawns `cairn serve` and waits for its first line, `cairn http://127.0.0.1:PORT`. */
  async function serve(env: Record<string, string>): Promise<Served> {
    const dir = dataDir();
    const proc = launch(["serve"], testEnv(dir, { ARCHIVIST_LLM_PROVIDER: "none", ARCHIVIST_LEASE_SECONDS: LEASE_SECONDS, ...env }));
    const printed = await eventually(() => /^cairn http:\/\/\S+\n/.test(proc.output.stdout) || !running(proc), 30_000);
    const url = /^cairn (http:\/\/\S+)\n/.exec(proc.output.stdout)?.[1];
    if (!printed || url === undefined) throw new Error(`serve printed no URL: ${proc.output.stdout} ${proc.output.stderr}`);
    const credentials = JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8")) as { agents: Record<string, { agent_id: string; api_key: string }> };
    const owner = credentials.agents.human;
    if (!owner) throw new Error("no owner in credentials.json");
    return { ...proc, url, owner: { agentId: owner.agent_id, apiKey: owner.api_key } };
  }

  async function selfRegister(served: Served, agentId: string): Promise<Credentials> {
    const response = await request<{ agent_id: string; api_key: string }>(served.url, "/agents/self-register", { body: { agent_id: agentId } });
    expect(response.status).toBe(201);
    return { agentId: response.body.agent_id, apiKey: response.body.api_key };
  }

  async function started(served: Served): Promise<EventRecord[]> {
    const response = await request<EventRecord[]>(served.url, "/events?since=seq:0&limit=500&type=archivist.started", { as: served.owner });
    expect(response.status).toBe(200);
    return response.body;
  }

  /** The one archivist child `serve` runs (its pid is remembered so it is killed should the test fail). */
  function archivistChild(served: Served): number | undefined {
    const pids = childrenOf(served.pid);
    strays.push(...pids);
    return pids.length === 1 ? pids[0] : undefined;
  }

  it("ARCHIVIST=on: starts it, restarts it when it dies, and stops it with the server", async () => {
    const served = await serve({ ARCHIVIST: "on" });
    expect(await eventually(async () => (await started(served)).length === 1, 15_000), served.output.stderr).toBe(true);
    const [first] = await started(served);
    expect(first?.agent_id).toBe("archivist");
    expect(first?.payload).toMatchObject({ holder: expect.stringMatching(new RegExp(`^serve:.+:${served.pid}$`)) as unknown, llm: false });
    const child = archivistChild(served);
    expect(child).toBeDefined();

    process.kill(child as number, "SIGKILL");
    // Restarted after the first backoff step (1 s) under the same holder name, so it takes the lease back at once.
    expect(await eventually(async () => (await started(served)).length === 2, 8000), served.output.stderr).toBe(true);
    const [, second] = await started(served);
    expect(second?.payload.holder).toBe(first?.payload.holder);
    let restarted: number | undefined;
    expect(await eventually(() => (restarted = archivistChild(served)) !== undefined)).toBe(true);
    expect(restarted).not.toBe(child);
    // The restarted archivist works: a conflicting pair written through this server is reported.
    const [alice, bob] = [await selfRegister(served, "alice"), await selfRegister(served, "bob")];
    const content = TOPICS[0] as string;
    const ids: string[] = [];
    for (const as of [alice, bob]) {
      const written = await request<MemoryEntry>(served.url, "/memory", { as, body: { content, project: null, allow_duplicate: true } });
      expect(written.status).toBe(201);
      ids.push(written.body.id);
    }
    const reported = async (as: Credentials): Promise<boolean> =>
      (await request<Message[]>(served.url, "/messages/inbox?limit=500", { as })).body.some(
        (message) => message.subject === SUBJECT && ids.every((id) => message.body.includes(id)),
      );
    expect(await eventually(async () => (await reported(alice)) && (await reported(bob)), 10_000)).toBe(true);
    expect(running(served)).toBe(true);

    const run = await killed(served, "SIGTERM");
    expect(run.code, served.output.stderr).toBe(0);
    expect(await eventually(() => !alive(restarted as number), 5000)).toBe(true);
  });

  it("ARCHIVIST=off: no archivist child and no archivist.started", async () => {
    const served = await serve({ ARCHIVIST: "off" });
    // serve starts the archivist, when it does, before it prints its banner, and the banner says so:
    // once the banner's last line is out, an archivist would be there to see.
    expect(await eventually(() => /^ {2}credentials {4}\S+$/m.test(served.output.stdout), 10_000), served.output.stdout).toBe(true);
    expect(served.output.stdout).not.toMatch(/^ {2}archivist {6}on/m);
    expect(childrenOf(served.pid)).toEqual([]);
    expect(await started(served)).toEqual([]);
    const run = await killed(served, "SIGTERM");
    expect(run.code, served.output.stderr).toBe(0);
  });
});
