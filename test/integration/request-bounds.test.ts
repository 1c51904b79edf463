import { describe, expect } from "vitest";
import { databasePath } from "../../src/core/paths.js";
import { AppError } from "../../src/core/errors.js";
import { compiledSchemas } from "../../src/services/blueprints/contracts.js";
import { OUTPUT_SCHEMA_LIMITS } from "../../src/services/blueprints/schema-bounds.js";
import { graphThread, MAX_WAITING_GRAPH_JOBS } from "../../src/services/graph/graph-thread.js";
import type { BlueprintRun as Run } from "../../src/wire/blueprint-runs.js";
import { onPostgres, withDatabase } from "../helpers/database.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// Issue 25, item 3 (DESIGN §4a): no request holds the event loop for more than ~100 ms of CPU.
// Each input the review found blocking is refused by its size before the heavy work, or the work
// runs on the graph worker's thread. Asserted as work done (schemas compiled, problems found,
// jobs run) and as the order things answer in, never as a time.

const it = test.extend("alice", ({ server }) => server.agent("alice"));

async function save(server: TestServer, as: Credentials, document: Record<string, unknown>) {
  return server.request<ErrorBody & { version?: number }>("/blueprints", { as, body: { project: null, ...document } });
}

const single = (name: string, outputSchema: unknown): Record<string, unknown> => ({ name, title: name, nodes: [{ id: "pick", title: "Pick", output_schema: outputSchema }] });

/** 59 required string properties, nothing else allowed: exactly the 300 values one output schema may hold. */
function schemaAtTheBound(): Record<string, unknown> {
  const properties = Object.fromEntries(Array.from({ length: 59 }, (_, index) => [`field${index}`, { type: "string", minLength: 1, maxLength: 16 + index }]));
  return { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
}

describe("output contracts are bounded before Ajv compiles them", () => {
  it("refuses the review's 8,000-object enum at save, naming its path, and never compiles it", async ({ server, alice }) => {
    const compiled = compiledSchemas();
    const enumValues = Array.from({ length: 8000 }, (_, index) => ({ k: index, v: "x" }));
    const response = await save(server, alice, single("huge-enum", { type: "object", properties: { pick: { enum: enumValues } }, required: ["pick"] }));
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([{ path: "nodes.0.output_schema.properties.pick.enum", message: "an enum holds at most 100 values" }]);
    expect(compiledSchemas()).toBe(compiled);
  });

  it("refuses a schema past any bound with the path of the part at fault", async ({ server, alice }) => {
    const compiled = compiledSchemas();
    const refusal = async (outputSchema: unknown) => (await save(server, alice, single("bounded", outputSchema))).body.errors;
    const deep = (levels: number): Record<string, unknown> => (levels === 0 ? { type: "string" } : { type: "object", properties: { inner: deep(levels - 1) } });
    expect(await refusal(deep(6))).toEqual([{ path: "nodes.0.output_schema.properties.inner.properties.inner.properties.inner.properties.inner.properties.inner.properties.inner", message: "nested more than 12 deep" }]);
    expect(await refusal({ type: "string", description: "x".repeat(OUTPUT_SCHEMA_LIMITS.stringChars + 1) })).toEqual([
      { path: "nodes.0.output_schema.description", message: `at most ${OUTPUT_SCHEMA_LIMITS.stringChars} characters` },
    ]);
    const wide = schemaAtTheBound();
    (wide.properties as Record<string, unknown>).one_more = { type: "string" };
    expect(await refusal(wide)).toEqual([{ path: "nodes.0.output_schema", message: expect.stringMatching(/^an output schema holds at most 300 values/) as string }]);
    expect(compiledSchemas()).toBe(compiled);
  });

  it("holds a document's schemas to 1,000 values together, compiling none past the budget", async ({ server, alice }) => {
    const compiled = compiledSchemas();
    // Five schemas of 242 values: the first four fit in 1,000 together, the fifth does not.
    const schema = (node: number) => ({ ...schemaAtTheBound(), title: `node ${node}`, required: [] });
    const nodes = Array.from({ length: 5 }, (_, index) => ({ id: `n${index}`, title: `Step ${index}`, output_schema: schema(index) }));
    const response = await save(server, alice, { name: "budget", title: "Budget", nodes });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([{ path: "nodes.4.output_schema", message: "a blueprint's output schemas hold at most 1000 values together" }]);
    expect(compiledSchemas() - compiled).toBe(4);
  });

  it("checks a 64 KiB output against a schema at the bounds with one compile, and lists every problem only when that is cheap", async ({ server, alice }) => {
    const compiled = compiledSchemas();
    expect((await save(server, alice, single("at-bound", schemaAtTheBound()))).status).toBe(201);
    expect(compiledSchemas() - compiled).toBe(1);
    const run = (await server.request<Run>("/blueprints/at-bound/instantiate", { as: alice, body: { project: null, params: {} } })).body;
    const task = run.nodes[0]?.task_id as string;
    expect((await server.request(`/tasks/${task}/claim`, { as: alice, method: "POST" })).status).toBe(200);

    // 64 KiB of unknown keys: listing every problem would cost 10,000 keys × 300 values; the first is the answer.
    const hostile = Object.fromEntries(Array.from({ length: 7000 }, (_, index) => [`z${index.toString(36)}`, 0]));
    expect(JSON.stringify(hostile).length).toBeGreaterThan(60_000);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await server.request<ErrorBody>(`/tasks/${task}/complete`, { as: alice, body: { output: hostile } });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toHaveLength(1);
    }
    expect(compiledSchemas() - compiled).toBe(1);
    // An empty output: 59 missing fields, cheap to list (50 of them shown); its every-problem validator is compiled once.
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await server.request<ErrorBody>(`/tasks/${task}/complete`, { as: alice, body: { output: {} } });
      expect(refused.body.errors).toHaveLength(50);
      expect(refused.body.errors?.[0]).toEqual({ path: "output.field0", message: "must have required property 'field0'" });
    }
    expect(compiledSchemas() - compiled).toBe(2);
    expect((await server.request<{ status: string }>(`/tasks/${task}`, { as: alice })).body.status).toBe("claimed");
  });
  it("never compiles a schema saved before the bounds: its completion is refused with the reason", async ({ server, alice }) => {
    expect((await save(server, alice, single("legacy", { type: "object" }))).status).toBe(201);
    const run = (await server.request<Run>("/blueprints/legacy/instantiate", { as: alice, body: { project: null, params: {} } })).body;
    const task = run.nodes[0]?.task_id as string;
    expect((await server.request(`/tasks/${task}/claim`, { as: alice, method: "POST" })).status).toBe(200);
    // As a server before issue 25 would have stored it.
    const huge = { type: "object", properties: { pick: { enum: Array.from({ length: 8000 }, (_, index) => ({ k: index })) } } };
    const document = JSON.stringify({ ...single("legacy", huge), project: null, description: "", params: [] });
    await withDatabase(server.dataDir, (db) => db.run("UPDATE blueprints SET document = ? WHERE name = ?", document, "legacy"));
    const compiled = compiledSchemas();
    const refused = await server.request<ErrorBody>(`/tasks/${task}/complete`, { as: alice, body: { output: { pick: { k: 1 } } } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      { path: "output_schema.properties.pick.enum", message: "the node's output schema is too large to check (an enum holds at most 100 values): save a new version of the blueprint" },
    ]);
    expect(compiledSchemas()).toBe(compiled);
  });
});

describe("blueprint documents are sized before they are parsed", () => {
  it("answers a 6,132-node document with the one problem of its size, not one per node", async ({ server, alice }) => {
    // Every node lacks its title: a parse of the nodes would report 6,132 problems.
    const nodes = Array.from({ length: 6132 }, (_, index) => ({ id: `n${index.toString(36)}`, needs: index === 0 ? [] : [`n${(index - 1).toString(36)}`] }));
    const response = await save(server, alice, { name: "many", title: "Many", nodes });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([{ path: "nodes", message: "at most 100 nodes" }]);
  });

  it("reads 4,000 unclosed {{ in each of 31 descriptions as text, and renders them as written", async ({ server, alice }) => {
    const braces = "{{".repeat(4000);
    const nodes = Array.from({ length: 31 }, (_, index) => ({ id: `b${index}`, title: `Step {{ ${index}`, description: braces, needs: index === 0 ? [] : [`b${index - 1}`] }));
    expect((await save(server, alice, { name: "braces", title: "Braces", nodes })).status).toBe(201);
    const plan = await server.request<{ tasks: { title: string; description: string }[] }>("/blueprints/braces/instantiate", { as: alice, body: { project: null, params: {}, dry_run: true } });
    expect(plan.status).toBe(200);
    expect(plan.body.tasks).toHaveLength(31);
    expect(plan.body.tasks[3]).toMatchObject({ title: "Step {{ 3", description: braces });
  });
});

/**
 * `entries` shared entries of `project` and five `supports` edges from each, written straight to
 * the database (thousands of API calls would only slow the test down); then one write through the
 * API, so the selection's change stamp moves past them.
 */
async function bigGraph(server: TestServer, as: Credentials, project: string, entries: number): Promise<void> {
  const at = new Date().toISOString();
  const uuid = onPostgres ? "'00000000-0000-4000-8000-' || lpad(i::text, 12, '0')" : "'00000000-0000-4000-8000-' || printf('%012d', i)";
  await withDatabase(server.dataDir, async (db) => {
    await db.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO memory (id, type, agent_id, project, scope, content, content_key, confidence, created_at, updated_at, embedding_model)
       SELECT ${uuid}, 'memory', ?, ?, 'project', 'Fact number ' || i, 'bulk-' || i, 0.5, ?, ?, 'hash-512' FROM n`,
      entries, as.agentId, project, at, at,
    );
    const first = await db.get<{ pk: unknown }>("SELECT min(pk) AS pk FROM memory WHERE content_key LIKE 'bulk-%'");
    await db.run(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO graph_edges (id, src_pk, dst_pk, rel, project, agent_id, created_at, updated_at)
       SELECT 'edge-' || i, ? + i / 5, ? + (i / 5 + 1 + (i % 5) * 7) % ?, 'supports', ?, ?, ?, ? FROM n`,
      entries * 5 - 1, Number(first?.pk), Number(first?.pk), entries, project, as.agentId, at, at,
    );
  });
  const written = await server.request("/memory", { as, body: { content: "The last fact, written through the API.", project } });
  expect(written.status).toBe(201);
}

describe("the knowledge graph is ranked off the server's thread", () => {
  it("answers /health while a 30,000-entry, 150,000-edge selection is being ranked, and ranks it once", async ({ server, alice }) => {
    expect((await server.request("/projects", { as: alice, body: { name: "big" } })).status).toBe(201);
    await bigGraph(server, alice, "big", 30_000);
    const jobs = graphThread.finished;
    const order: string[] = [];
    const central = server.request<{ id: string; rank: number }[]>("/memory/central?project=big&limit=5", { as: alice }).then((response) => {
      order.push("central");
      return response;
    });
    // Once the ranking has started on the worker, the server's own thread is free to answer.
    while (!graphThread.active) await new Promise((resolve) => setImmediate(resolve));
    const health = await server.request("/health");
    order.push("health");
    expect(health.status).toBe(200);
    const ranked = await central;
    expect(ranked.status, ranked.text).toBe(200);
    expect(order).toEqual(["health", "central"]);
    expect(ranked.body.map((entry) => entry.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(graphThread.finished - jobs).toBe(1);
    // Nothing changed: the cached ranks answer, with no job.
    expect((await server.request("/memory/central?project=big&limit=5", { as: alice })).body).toEqual(ranked.body);
    expect(graphThread.finished - jobs).toBe(1);
  });

  it("refuses with 503 and Retry-After when too many rankings wait, rather than queueing more", async ({ server, alice }) => {
    expect((await server.request("/projects", { as: alice, body: { name: "queue" } })).status).toBe(201);
    // Rankings of some weight: the queue must still be full when the request below reaches it,
    // after its own round trips (an empty project's jobs were done by then on PostgreSQL).
    await bigGraph(server, alice, "queue", 1_000);
    const source = { databaseUrl: server.config.DATABASE_URL, file: databasePath(server.dataDir) };
    const job = { kind: "rank" as const, selection: { projects: ["queue"], global: false }, nowIso: new Date().toISOString(), keep: { entries: 10, edges: 10 } };
    // One job runs and MAX_WAITING_GRAPH_JOBS wait: the queue is full.
    const queued = Array.from({ length: MAX_WAITING_GRAPH_JOBS + 1 }, () => graphThread.run(source, job));
    const refused = await graphThread.run(source, job).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "UNAVAILABLE", retryAfter: 5 });
    const response = await server.request<ErrorBody>("/memory/central?project=queue", { as: alice });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(response.body.code).toBe("UNAVAILABLE");
    for (const ranking of await Promise.all(queued)) {
      expect(ranking.entries).toBe(1_001);
      expect(ranking.top).toHaveLength(10);
    }
    expect((await server.request("/memory/central?project=queue", { as: alice })).status).toBe(200);
  });
});
