import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect } from "vitest";
import { OwnerClient } from "../../src/cli/owner-client.js";
import { sendBatches } from "../../src/cli/compile/send.js";
import type { Unit } from "../../src/cli/compile/units.js";
import { test } from "../helpers/fixtures.js";
import { databaseUrlFor, onPostgres, withDatabase } from "../helpers/database.js";
import { startTestServer, tempDir, type Credentials, type ErrorBody, type Response, type TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// Issue 25, item 4: quotas that protect the team from one agent. Rate-type quotas (compile units
// and bytes per hour, the embedding backlog) answer 429 with Retry-After and pass once waited out;
// the entries a project may hold is a cap, 409 until entries are removed. Searches are embedded
// before bulk work, so one issued behind a large compile is answered while its backlog remains.

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

/** A function unit of `path`; `version` stands for its text. `filler` pads the description to a size. */
function unit(path: string, symbol: string, version = "1", filler = 0): Record<string, unknown> {
  return {
    path,
    symbol,
    kind: "function",
    lang: "typescript",
    start_line: 1,
    end_line: 9,
    sha: sha(`${path}::${symbol}@${version}`),
    description: `function ${symbol}(): void\nComputes the ${symbol} figure of the ledger.${" padding".repeat(filler)}`,
    deps: [],
  };
}

const units = (prefix: string, count: number, version = "1", filler = 0): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, index) => unit(`src/${prefix}-${Math.floor(index / 50)}.ts`, `${prefix}${index}`, version, filler));

const compile = (server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<Response<ErrorBody & { created: number; updated: number; unchanged: number }>> =>
  server.request("/compile", { as, body: { project: "ledger", ...body } });

async function ledger(server: TestServer, alice: Credentials, bob: Credentials): Promise<void> {
  expect((await server.request("/projects", { as: alice, body: { name: "ledger" } })).status).toBe(201);
  expect((await server.request("/projects/ledger/join", { as: bob, method: "POST" })).status).toBe(200);
}

/** A 429 in the RATE_LIMITED shape, with a Retry-After of at least a second. */
function expectRateLimited(response: Response<ErrorBody>): number {
  expect(response.status, response.text).toBe(429);
  expect(response.body.code).toBe("RATE_LIMITED");
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  return retryAfter;
}

/** The hour passes for `agent`'s buckets: their last refill moves an hour back. */
const anHourPasses = (server: TestServer, agent: Credentials): Promise<void> =>
  withDatabase(server.dataDir, (db) => db.run("UPDATE quota_buckets SET refilled_ms = refilled_ms - 3600000 WHERE agent_id = ?", agent.agentId));

describe("compile units per agent per hour (COMPILE_UNITS_PER_HOUR)", () => {
  it.override("serverEnv", { COMPILE_UNITS_PER_HOUR: "10" });

  it("answers 429 with Retry-After past the hour's units, for that agent only, and accepts again once the hour has passed", async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    const first = units("a", 6);
    expect((await compile(server, alice, { units: first })).status).toBe(200);
    const refused = await compile(server, alice, { units: units("b", 5) });
    const retryAfter = expectRateLimited(refused);
    // 1 unit short at 10 an hour: six minutes, give or take the second.
    expect(retryAfter).toBeGreaterThan(300);
    expect(refused.body.detail).toBe(`compile quota reached: this compile writes 5 units and COMPILE_UNITS_PER_HOUR is 10; try again in ${retryAfter} s`);
    // Units whose code did not change cost nothing; another agent has an allowance of its own.
    const again = await compile(server, alice, { units: first });
    expect(again.status, again.text).toBe(200);
    expect(again.body.unchanged).toBe(6);
    expect((await compile(server, bob, { units: units("c", 10) })).status).toBe(200);
    // Nothing of the refused request was written.
    expect((await server.request<unknown[]>("/compile/anchors?project=ledger&path_prefix=src/b-", { as: alice })).body).toHaveLength(0);

    await anHourPasses(server, alice);
    const later = await compile(server, alice, { units: units("b", 5) });
    expect(later.status, later.text).toBe(200);
    expect(later.body.created).toBe(5);
  });

  it("refuses with 413 one request that writes more than an hour's units", async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    const response = await compile(server, alice, { units: units("a", 11) });
    expect(response.status, response.text).toBe(413);
    expect(response.body.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await compile(server, alice, { units: units("a", 10) })).status).toBe(200);
  });
});

describe("cairn compile past a quota", () => {
  // One unit a second: a request of two waits about two seconds once the hour is spent.
  it.override("serverEnv", { COMPILE_UNITS_PER_HOUR: "3600" });

  it("waits out the Retry-After of a 429 and sends the request again", async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    expect((await compile(server, alice, { units: units("a", 1) })).status).toBe(200);
    await withDatabase(server.dataDir, (db) => db.run("UPDATE quota_buckets SET tokens = 0 WHERE agent_id = ? AND quota = 'compile_units'", alice.agentId));
    const waits: { seconds: number; reason: string }[] = [];
    const client = new OwnerClient({ url: server.url, agentId: alice.agentId, apiKey: alice.apiKey });
    const result = await sendBatches(client, "ledger", undefined, [{ units: units("b", 2) as unknown as Unit[], prune_paths: [] }], (seconds, reason) => waits.push({ seconds, reason }));
    expect(result.created).toBe(2);
    expect(waits).toHaveLength(1);
    expect(waits[0]?.seconds).toBeLessThanOrEqual(2);
    expect(waits[0]?.reason).toContain("COMPILE_UNITS_PER_HOUR");
  });
});

describe("compile bytes per agent per hour (COMPILE_BYTES_PER_HOUR)", () => {
  it.override("serverEnv", { COMPILE_BYTES_PER_HOUR: "4000" });

  it("answers 429 with Retry-After once the hour's bytes are written, and charges neither bucket for a refused request", async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    // About 1,000 bytes of compiled entry each.
    expect((await compile(server, alice, { units: units("a", 3, "1", 110) })).status).toBe(200);
    const refused = await compile(server, alice, { units: units("b", 2, "1", 110) });
    expectRateLimited(refused);
    expect(refused.body.detail).toContain("COMPILE_BYTES_PER_HOUR");
    const charged = await withDatabase(server.dataDir, (db) =>
      db.all<{ quota: string; tokens: number }>("SELECT quota, tokens FROM quota_buckets WHERE agent_id = ? ORDER BY quota", alice.agentId),
    );
    // The units bucket kept what the refused request would have taken from it.
    expect(charged.map((row) => row.quota)).toEqual(["compile_bytes", "compile_units"]);
    expect(Number(charged[1]?.tokens)).toBeGreaterThan(20_000 - 3 - 0.5);
    // Small units still fit.
    expect((await compile(server, alice, { units: units("c", 1) })).status).toBe(200);
    await anHourPasses(server, alice);
    expect((await compile(server, alice, { units: units("b", 2, "1", 110) })).status).toBe(200);
  });
});

describe("entries per project (MAX_ENTRIES_PER_PROJECT)", () => {
  it.override("serverEnv", { MAX_ENTRIES_PER_PROJECT: "5" });

  it("refuses with 409 a write that would pass the cap, by POST /memory, PATCH or compile, until entries are deleted", async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    const notes = [
      "Invoices are archived every night at two",
      "The refund window is thirty days from delivery",
      "Currency conversion uses the morning rate",
      "Chargebacks go to the disputes queue first",
      "Quarterly close freezes journal edits on Friday",
    ];
    const written: string[] = [];
    for (const content of notes) {
      const response = await server.request<{ id: string }>("/memory", { as: alice, body: { content, project: "ledger" } });
      expect(response.status, response.text).toBe(201);
      written.push(response.body.id);
    }
    const full = await server.request<ErrorBody>("/memory", { as: bob, body: { content: "one note too many for the ledger", project: "ledger" } });
    expect(full.status, full.text).toBe(409);
    expect(full.body.code).toBe("CONFLICT");
    expect(full.body.detail).toBe("project ledger is full: it holds 5 entries, this write adds 1, and MAX_ENTRIES_PER_PROJECT is 5; delete or prune entries first");
    // A duplicate adds nothing: it reinforces the entry it repeats.
    const duplicate = await server.request<{ duplicate_of?: string }>("/memory", { as: alice, body: { content: notes[0], project: "ledger" } });
    expect(duplicate.status, duplicate.text).toBe(200);
    expect(duplicate.body.duplicate_of).toBe(written[0]);
    const compiled = await compile(server, alice, { units: units("a", 2) });
    expect(compiled.status, compiled.text).toBe(409);
    // Other projects and global memory have room of their own; moving an entry into the full one is a write into it.
    const elsewhere = await server.request<{ id: string }>("/memory", { as: alice, body: { content: "a global note", project: null } });
    expect(elsewhere.status).toBe(201);
    expect((await server.request(`/memory/${elsewhere.body.id}`, { as: alice, method: "PATCH", body: { project: "ledger" } })).status).toBe(409);

    expect((await server.request(`/memory/${written[4]}`, { as: alice, method: "DELETE" })).status).toBe(204);
    expect((await server.request("/memory", { as: bob, body: { content: "one note too many for the ledger", project: "ledger" } })).status).toBe(201);
  });
});

describe("a search behind a compile's embedding backlog", () => {
  it("is answered with its vector before a 2,000-unit compile's backlog has drained", { timeout: 60_000 }, async ({ server, alice, bob }) => {
    await ledger(server, alice, bob);
    expect((await server.request("/memory", { as: bob, body: { content: "Refunds settle through the ledger reconciliation job", project: "ledger" } })).status).toBe(201);
    const compiled = await compile(server, alice, { units: units("bulk", 2000) });
    expect(compiled.status, compiled.text).toBe(200);
    expect(compiled.body.created).toBe(2000);

    const search = await server.request<{ content: string }[]>("/memory/search?q=refunds%20reconciliation&project=ledger", { as: bob });
    const waiting = await withDatabase(server.dataDir, (db) =>
      db.get<{ n: number }>("SELECT count(*) AS n FROM memory WHERE type = 'compiled' AND embedding_model IS NULL AND deleted_at IS NULL"),
    );
    expect(search.status).toBe(200);
    expect(search.headers.get("x-search-mode")).toBe("hybrid");
    expect(search.body[0]?.content).toContain("Refunds settle");
    // Counted after the answer, so at least this many were still waiting when it came.
    expect(Number(waiting?.n)).toBeGreaterThan(0);
  });
});

describe("an agent's embedding backlog (EMBEDDING_BACKLOG_PER_AGENT)", () => {
  const dataDir = tempDir();
  const noModel = mkdtempSync(join(tmpdir(), "cairn-no-model-"));
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(noModel, { recursive: true, force: true });
  });
  const env = { DATA_DIR: dataDir, EMBEDDING_BACKLOG_PER_AGENT: "100" };

  test("refuses an agent's bulk compile with 429 while its unembedded entries reach the bound, and accepts it once the backfill has caught up", { timeout: 60_000 }, async () => {
    // No model: what is written waits for one, as a backlog would wait for a busy model.
    const before = await startTestServer({ ...env, EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: noModel });
    let alice: Credentials;
    try {
      alice = await before.agent("alice");
      const bob = await before.agent("bob");
      await ledger(before, alice, bob);
      expect((await compile(before, alice, { units: units("a", 120) })).status).toBe(200);
      const refused = await compile(before, alice, { units: units("b", 70) });
      expectRateLimited(refused);
      expect(refused.body.detail).toBe("120 of your entries are waiting to be embedded (EMBEDDING_BACKLOG_PER_AGENT is 100); try again in 60 s");
      // A commit's few units are not bulk work; another agent's backlog is its own.
      expect((await compile(before, alice, { units: units("c", 3) })).status).toBe(200);
      expect((await compile(before, bob, { units: units("d", 70) })).status).toBe(200);
    } finally {
      await before.close();
    }

    const after = await startTestServer(env);
    try {
      const caughtUp = await eventually(async () => (await compile(after, alice, { units: units("b", 70) })).status === 200, 30_000);
      expect(caughtUp).toBe(true);
    } finally {
      await after.close();
    }
  });
});

describe.runIf(onPostgres)("quotas across servers on one database", () => {
  test("count an agent's compile units once, whichever server its requests reach", async () => {
    const firstDir = tempDir();
    const secondDir = tempDir();
    const env = { COMPILE_UNITS_PER_HOUR: "10" };
    const one = await startTestServer({ ...env, DATA_DIR: firstDir });
    // The second server gets the first one's keys, as docs/operations.md tells an operator to do.
    copyFileSync(join(firstDir, "credentials.json"), join(secondDir, "credentials.json"));
    copyFileSync(join(firstDir, "secret.key"), join(secondDir, "secret.key"));
    const two = await startTestServer({ ...env, DATA_DIR: secondDir, DATABASE_URL: databaseUrlFor(firstDir) as string });
    try {
      const alice = await one.agent("alice");
      const bob = await one.agent("bob");
      await ledger(one, alice, bob);
      expect((await compile(one, alice, { units: units("a", 6) })).status).toBe(200);
      expectRateLimited(await compile(two, alice, { units: units("b", 5) }));
      expect((await compile(two, alice, { units: units("b", 4) })).status).toBe(200);
    } finally {
      await two.close();
      await one.close();
      rmSync(firstDir, { recursive: true, force: true });
      rmSync(secondDir, { recursive: true, force: true });
    }
  });
});
