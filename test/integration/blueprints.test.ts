import { describe, expect } from "vitest";
import type { Blueprint as SavedBlueprint, BlueprintDocument } from "../../src/wire/blueprints.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// CONTRACT §17: saving and reading blueprints — versions, the checks at save, projects.

/** A saved blueprint; the wire types its document loosely, but it is the document as checked, defaults filled in. */
type Blueprint = Omit<SavedBlueprint, "document"> & { document: BlueprintDocument };

interface Refusal extends ErrorBody {
  errors?: { path: string; message: string }[];
}

const it = test
  .extend("alice", ({ server }) => server.agent("alice"))
  .extend("bob", ({ server }) => server.agent("bob"))
  .extend("carol", ({ server }) => server.agent("carol"));

const plan = (extra: Record<string, unknown> = {}) => ({
  name: "release",
  title: "Release",
  params: [{ name: "version", type: "string", required: true }],
  nodes: [
    { id: "build", title: "Build {{params.version}}" },
    { id: "ship", title: "Ship {{params.version}}", needs: ["build"] },
  ],
  ...extra,
});

const save = (server: TestServer, as: Credentials, body: Record<string, unknown>) => server.request<Blueprint & Refusal>("/blueprints", { as, body });

/** `web` of alice and bob, alice's current project; carol stays outside. */
async function web(server: TestServer, alice: Credentials, bob: Credentials): Promise<void> {
  expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
  expect((await server.request("/projects/web/join", { as: bob, method: "POST" })).status).toBe(200);
}

describe("saving a blueprint", () => {
  it("versions a name: a changed document is the next version, the same document answers the current one", async ({ server, alice }) => {
    const first = await save(server, alice, plan({ project: null }));
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ name: "release", project: null, version: 1, created_by: "alice", node_count: 2 });
    expect(first.body.document.nodes.map((node) => node.needs)).toEqual([[], ["build"]]);
    const again = await save(server, alice, plan({ project: null }));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const changed = await save(server, alice, plan({ project: null, title: "Release, reviewed" }));
    expect(changed.status).toBe(201);
    expect(changed.body.version).toBe(2);

    const current = await server.request<Blueprint[]>("/blueprints", { as: alice });
    expect(current.body.map((row) => [row.name, row.version])).toEqual([["release", 2]]);
    const versions = await server.request<Blueprint[]>("/blueprints/release?project=", { as: alice });
    expect(versions.body.map((row) => row.version)).toEqual([2, 1]);
    const events = await server.request<{ payload: Record<string, unknown> }[]>("/events?since=seq:0&type=blueprint.saved", { as: alice });
    expect(events.body.map((event) => event.payload)).toEqual([
      { blueprint_id: first.body.id, name: "release", project: null, version: 1 },
      { blueprint_id: changed.body.id, name: "release", project: null, version: 2 },
    ]);
  });

  it("answers every problem of a document in one 422, each with its path", async ({ server, alice }) => {
    const response = await save(
      server,
      alice,
      plan({
        nodes: [
          { id: "a", title: "A {{params.nope}}", needs: ["b"] },
          { id: "b", title: "B", needs: ["a"] },
          { id: "c", title: "C", needs: ["missing"], output_schema: { type: "object", $ref: "#/x" } },
        ],
      }),
    );
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { path: "nodes", message: "blueprint has a cycle: a → b → a" },
        { path: "nodes.2.needs.0", message: "unknown node missing" },
        { path: "nodes.2.output_schema.$ref", message: expect.stringMatching(/^keyword not allowed/) as string },
      ]),
    );
    expect((await save(server, alice, plan({ name: "runs" }))).body.errors).toEqual([{ path: "name", message: "runs is reserved" }]);
    expect((await server.request<Blueprint[]>("/blueprints", { as: alice })).body).toEqual([]);
  });

  it("never takes a check or node that would run SQL, a shell command or an HTTP request", async ({ server, alice }) => {
    const node = (fields: Record<string, unknown>) => plan({ project: null, nodes: [{ id: "only", title: "Only", ...fields }] });
    for (const check of [
      { kind: "sql", query: "DELETE FROM tasks" },
      { kind: "shell", command: "rm -rf /" },
      { kind: "http", url: "http://127.0.0.1:9/" },
      { kind: "memory", tag: "x", command: "curl http://example.com" },
    ]) {
      const response = await save(server, alice, node({ done_check: [check] }));
      expect(response.status, JSON.stringify(check)).toBe(422);
    }
    for (const fields of [{ run: "npm test" }, { command: "make" }, { sql: "SELECT 1" }, { url: "http://127.0.0.1:9/" }, { gate: { kind: "webhook", url: "http://127.0.0.1:9/" } }]) {
      const response = await save(server, alice, node(fields));
      expect(response.status, JSON.stringify(fields)).toBe(422);
    }
    const templated = await save(server, alice, node({ title: "{{ process.env.HOME }}" }));
    expect(templated.status).toBe(422);
  });
});

describe("blueprints and projects", () => {
  it("go into the caller's current project by default, for members only; others never see them", async ({ server, alice, bob, carol }) => {
    await web(server, alice, bob);
    const saved = await save(server, alice, plan());
    expect(saved.status).toBe(201);
    expect(saved.body.project).toBe("web");
    expect(saved.body.document.project).toBe("web");
    expect((await save(server, carol, plan({ project: "web" }))).status).toBe(403);
    // Bob is in web: he sees it, and his save under the same name is its next version.
    expect((await server.request<Blueprint[]>("/blueprints?project=web", { as: bob })).body.map((row) => row.id)).toEqual([saved.body.id]);
    expect((await save(server, bob, plan({ project: "web", title: "Bob's release" }))).body.version).toBe(2);
    expect((await server.request<Blueprint[]>("/blueprints", { as: carol })).body).toEqual([]);
    expect((await server.request("/blueprints/release?project=web", { as: carol })).status).toBe(404);
    expect((await server.request<Blueprint[]>("/blueprints/release", { as: alice })).body.map((row) => row.version)).toEqual([2, 1]);
    // The same name in another scope is another blueprint.
    expect((await save(server, carol, plan({ project: null }))).body.version).toBe(1);
  });
});
