import { describe, expect } from "vitest";
import type { Registration } from "../../src/wire/agents.js";
import { it, test } from "../helpers/fixtures.js";
import { request, RFC3339_MS, startTestServer, type RequestOptions, type Response, type TestServer } from "../helpers/server.js";

/** CONTRACT §2.1/§2.2: one 401 for every credential problem. */
function expectUnauthenticated(response: Response): void {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ detail: "invalid credentials", code: "UNAUTHENTICATED" });
  expect(response.headers.get("www-authenticate")).toBeTruthy();
}

function expectRegistration(response: Response<Registration>, agentId: string): void {
  expect(response.status).toBe(201);
  expect(Object.keys(response.body).sort()).toEqual(["agent_id", "api_key", "created_at", "role"]);
  expect(response.body.agent_id).toBe(agentId);
  expect(response.body.role).toBe("agent");
  expect(response.body.api_key).toMatch(/^cairn_[A-Za-z0-9_-]{43,}$/);
  expect(response.body.created_at).toMatch(RFC3339_MS);
}

/** A refused registration: the status asked for, the error shape, and never a key. */
function expectRefused(response: Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ code });
  expect(response.body).not.toHaveProperty("api_key");
  expect(response.text).not.toContain("cairn_");
}

describe("authentication with X-Agent-ID and X-API-Key", () => {
  const it = test.extend("alice", ({ server }) => server.agent("alice"));

  it("accepts valid credentials", async ({ server, alice }) => {
    const me = await server.request<{ agent_id: string }>("/agents/me", { as: alice });
    expect(me.status).toBe(200);
    expect(me.body.agent_id).toBe("alice");
  });

  it.for(["/agents", "/agents/me", "/participants", "/memory", "/events"])("%s without headers → 401", async (path, { server }) => {
    expectUnauthenticated(await server.request(path));
  });

  it("a write without headers → 401 and nothing is written", async ({ server }) => {
    expectUnauthenticated(await server.request("/memory", { body: { content: "anonymous write attempt" } }));
    const list = await server.request<{ content: string }[]>("/memory", { as: server.owner });
    expect(list.body.map((entry) => entry.content)).not.toContain("anonymous write attempt");
  });

  it("only X-Agent-ID → 401", async ({ server, alice }) => {
    expectUnauthenticated(await server.request("/agents/me", { headers: { "x-agent-id": alice.agentId } }));
  });

  it("only X-API-Key → 401", async ({ server, alice }) => {
    expectUnauthenticated(await server.request("/agents/me", { headers: { "x-api-key": alice.apiKey } }));
  });

  it("an empty key → 401", async ({ server }) => {
    expectUnauthenticated(await server.request("/agents/me", { headers: { "x-agent-id": "alice", "x-api-key": "" } }));
  });

  it("a wrong key → 401", async ({ server, alice }) => {
    expectUnauthenticated(await server.request("/agents/me", { as: { agentId: "alice", apiKey: `${alice.apiKey}x` } }));
  });

  it("another agent's key → 401", async ({ server }) => {
    expectUnauthenticated(await server.request("/agents/me", { as: { agentId: "alice", apiKey: server.owner.apiKey } }));
  });

  it("an unknown agent → 401", async ({ server, alice }) => {
    expectUnauthenticated(await server.request("/agents/me", { as: { agentId: "nobody-here", apiKey: alice.apiKey } }));
  });

  it("an unknown agent and a wrong key get identical answers", async ({ server }) => {
    const unknown = await server.request("/agents/me", { as: { agentId: "nobody-here", apiKey: "cairn_wrong-key-wrong-key" } });
    const wrongKey = await server.request("/agents/me", { as: { agentId: "alice", apiKey: "cairn_wrong-key-wrong-key" } });
    expect(unknown.status).toBe(wrongKey.status);
    expect(unknown.text).toBe(wrongKey.text);
    expect(unknown.headers.get("www-authenticate")).toBe(wrongKey.headers.get("www-authenticate"));
    expect(unknown.headers.get("content-type")).toBe(wrongKey.headers.get("content-type"));
  });

  it("a deleted agent's key → 401", async ({ server }) => {
    const doomed = await server.agent("doomed");
    expect((await server.request("/agents/me", { as: doomed, method: "DELETE" })).status).toBe(204);
    expectUnauthenticated(await server.request("/agents/me", { as: doomed }));
    expectUnauthenticated(await server.request("/memory", { as: doomed, body: { content: "from beyond" } }));
  });

  it("exempt routes answer without credentials", async ({ server }) => {
    expect((await server.request("/health")).status).toBe(200);
    expect((await server.request("/openapi.json")).status).toBe(200);
  });
});

describe("POST /agents/register without REGISTRATION_KEY", () => {
  it("is disabled → 403, whatever key is sent", async ({ server }) => {
    expectRefused(await server.request("/agents/register", { body: { agent_id: "newbie" } }), 403, "FORBIDDEN");
    expectRefused(
      await server.request("/agents/register", { body: { agent_id: "newbie" }, headers: { "x-registration-key": "guess" } }),
      403,
      "FORBIDDEN",
    );
    expect((await server.request<{ agent_id: string }[]>("/agents", { as: server.owner })).body.map((a) => a.agent_id)).not.toContain(
      "newbie",
    );
  });
});

describe("POST /agents/register with REGISTRATION_KEY", () => {
  const registrationKey = "reg-key-0123456789";
  it.override("serverEnv", { REGISTRATION_KEY: registrationKey });
  // `null`: send no registration key header at all.
  const register = (server: TestServer, body: unknown, key: string | null = registrationKey) =>
    server.request<Registration>("/agents/register", { body, headers: key === null ? {} : { "x-registration-key": key } });

  it("a missing key → 401", async ({ server }) => {
    expectRefused(await register(server, { agent_id: "nokey" }, null), 401, "UNAUTHENTICATED");
  });

  it("a wrong key → 401", async ({ server }) => {
    const response = await register(server, { agent_id: "wrongkey" }, `${registrationKey}-nope`);
    expectRefused(response, 401, "UNAUTHENTICATED");
    expect(response.headers.get("www-authenticate")).toBeTruthy();
    expect(response.text).not.toContain(registrationKey);
  });

  it("the right key → 201 with a working cairn_ key", async ({ server }) => {
    const response = await register(server, { agent_id: "worker-1", display_name: "Worker One" });
    expectRegistration(response, "worker-1");
    const me = await server.request<{ agent_id: string; role: string; display_name: string }>("/agents/me", {
      as: { agentId: "worker-1", apiKey: response.body.api_key },
    });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ agent_id: "worker-1", role: "agent", display_name: "Worker One" });
  });

  it("keys are distinct per agent", async ({ server }) => {
    const one = await register(server, { agent_id: "distinct-a" });
    const two = await register(server, { agent_id: "distinct-b" });
    expect(one.body.api_key).not.toBe(two.body.api_key);
  });

  it.for([
    ["upper case", "Worker"],
    ["too long", "a".repeat(65)],
    ["empty", ""],
    ["leading dash", "-worker"],
    ["a space", "has space"],
    ["a dot", "a.b"],
  ])("an id with %s → 422", async ([_label, agentId], { server }) => {
    const response = await register(server, { agent_id: agentId });
    expectRefused(response, 422, "VALIDATION_FAILED");
    expect(response.body).toMatchObject({ detail: expect.any(String) as string, errors: expect.any(Array) as unknown[] });
  });

  it("the reserved id me → 422 (it would be shadowed by /agents/me)", async ({ server }) => {
    expectRefused(await register(server, { agent_id: "me" }), 422, "VALIDATION_FAILED");
  });

  it("the longest valid id (64 characters) is accepted", async ({ server }) => {
    const id = `a${"b".repeat(63)}`;
    expectRegistration(await register(server, { agent_id: id }), id);
  });

  it("a missing agent_id or an unknown field → 422", async ({ server }) => {
    expectRefused(await register(server, {}), 422, "VALIDATION_FAILED");
    expectRefused(await register(server, { agent_id: "extra-field", role: "owner" }), 422, "VALIDATION_FAILED");
  });

  it.for(["human", "archivist"])("the bootstrap id %s is taken → 409", async (id, { server }) => {
    expectRefused(await register(server, { agent_id: id }), 409, "CONFLICT");
  });

  it("an id registered before → 409 and the first key keeps working", async ({ server }) => {
    const first = await register(server, { agent_id: "twice" });
    expect(first.status).toBe(201);
    expectRefused(await register(server, { agent_id: "twice" }), 409, "CONFLICT");
    expect((await server.request("/agents/me", { as: { agentId: "twice", apiKey: first.body.api_key } })).status).toBe(200);
  });

  it("a deleted agent's id → 409", async ({ server }) => {
    const gone = await register(server, { agent_id: "gone" });
    const credentials = { agentId: "gone", apiKey: gone.body.api_key };
    expect((await server.request("/agents/me", { as: credentials, method: "DELETE" })).status).toBe(204);
    expectRefused(await register(server, { agent_id: "gone" }), 409, "CONFLICT");
  });

  it("a wrong key with a taken id is 401, not 409 (no existence oracle)", async ({ server }) => {
    expectRefused(await register(server, { agent_id: "human" }, "wrong-registration-key"), 401, "UNAUTHENTICATED");
  });
});

describe("POST /agents/self-register on a loopback HOST without a registration key", () => {
  const selfRegister = (server: TestServer, body: unknown) => server.request<Registration>("/agents/self-register", { body });

  it("is open → 201 with a working key", async ({ server }) => {
    const response = await selfRegister(server, { agent_id: "solo" });
    expectRegistration(response, "solo");
    expect((await server.request("/agents/me", { as: { agentId: "solo", apiKey: response.body.api_key } })).status).toBe(200);
  });

  it("an invalid id → 422", async ({ server }) => {
    expectRefused(await selfRegister(server, { agent_id: "NotValid" }), 422, "VALIDATION_FAILED");
  });

  it.for(["human", "archivist"])("never returns the key of an existing agent (%s) → 409", async (id, { server }) => {
    expectRefused(await selfRegister(server, { agent_id: id }), 409, "CONFLICT");
  });

  it("a self-registered id cannot be taken over → 409", async ({ server }) => {
    const first = await selfRegister(server, { agent_id: "mine" });
    expect(first.status).toBe(201);
    const again = await selfRegister(server, { agent_id: "mine" });
    expectRefused(again, 409, "CONFLICT");
    expect(again.text).not.toContain(first.body.api_key);
  });
});

describe("POST /agents/self-register with REGISTRATION_KEY", () => {
  const registrationKey = "self-reg-key-0123456789";
  it.override("serverEnv", { REGISTRATION_KEY: registrationKey });

  it("without the key → 401", async ({ server }) => {
    expectRefused(await server.request("/agents/self-register", { body: { agent_id: "sneaky" } }), 401, "UNAUTHENTICATED");
  });

  it("with a wrong key → 401", async ({ server }) => {
    expectRefused(
      await server.request("/agents/self-register", { body: { agent_id: "sneaky" }, headers: { "x-registration-key": "nope" } }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("with the key → 201", async ({ server }) => {
    const response = await server.request<Registration>("/agents/self-register", {
      body: { agent_id: "keyed" },
      headers: { "x-registration-key": registrationKey },
    });
    expectRegistration(response, "keyed");
  });

  it("with the key and a taken id → 409, no key", async ({ server }) => {
    expectRefused(
      await server.request("/agents/self-register", { body: { agent_id: "human" }, headers: { "x-registration-key": registrationKey } }),
      409,
      "CONFLICT",
    );
  });
});

describe("POST /agents/self-register on a non-loopback HOST", () => {
  // Bound to every interface, reached here over loopback: 0.0.0.0 is not a name the server answers to.
  const viaLoopback =
    (server: TestServer) =>
    <T = unknown>(path: string, options?: RequestOptions): Promise<Response<T>> =>
      request<T>(`http://127.0.0.1:${server.server.port}`, path, options);

  it("without a registration key → 403", async () => {
    const server = await startTestServer({ HOST: "0.0.0.0" });
    try {
      const send = viaLoopback(server);
      expectRefused(await send("/agents/self-register", { body: { agent_id: "remote" } }), 403, "FORBIDDEN");
      const agents = await send<{ agent_id: string }[]>("/agents", { as: server.owner });
      expect(agents.body.map((agent) => agent.agent_id)).not.toContain("remote");
    } finally {
      await server.close();
    }
  });

  it("with a registration key configured, the key opens it", async () => {
    const server = await startTestServer({ HOST: "0.0.0.0", REGISTRATION_KEY: "remote-key-0123456789" });
    try {
      const send = viaLoopback(server);
      expectRefused(await send("/agents/self-register", { body: { agent_id: "remote" } }), 401, "UNAUTHENTICATED");
      const response = await send<Registration>("/agents/self-register", {
        body: { agent_id: "remote" },
        headers: { "x-registration-key": "remote-key-0123456789" },
      });
      expectRegistration(response, "remote");
    } finally {
      await server.close();
    }
  });
});

describe("roles", () => {
  const viewer = { agentId: "watcher", apiKey: "watcher-static-key-0123" };
  it.override("serverEnv", { AGENT_KEYS: `${viewer.agentId}:${viewer.apiKey}:viewer` });

  it("a viewer can read but not write", async ({ server }) => {
    const author = await server.agent("author");
    const written = await server.request<{ id: string }>("/memory", { as: author, body: { content: "readable by viewers" } });
    expect(written.status).toBe(201);
    const list = await server.request<{ id: string }[]>("/memory", { as: viewer });
    expect(list.status).toBe(200);
    expect(list.body.map((entry) => entry.id)).toContain(written.body.id);
    expect((await server.request(`/memory/${written.body.id}`, { as: viewer })).status).toBe(200);

    const write = await server.request("/memory", { as: viewer, body: { content: "a viewer write" } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: "FORBIDDEN" });
    expect((await server.request(`/memory/${written.body.id}`, { as: viewer, method: "DELETE" })).status).toBe(403);
    expect((await server.request("/agents/me", { as: viewer, method: "PATCH", body: { display_name: "V" } })).status).toBe(403);
    expect((await server.request<{ id: string }[]>("/memory", { as: author })).body.map((e) => e.id)).toHaveLength(1);
  });
});
