import { describe, expect } from "vitest";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import { it, test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, Response, TestServer } from "../helpers/server.js";
import { rawRequest } from "../helpers/raw.js";

/** CONTRACT §2.1: `{detail, code}` (+ `errors` on 422), lower-case detail, UPPER_SNAKE code. */
function expectError(response: Response<unknown>, status: number, code: string): ErrorBody {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = response.body as ErrorBody;
  expect(Object.keys(body).sort()).toEqual(status === 422 ? ["code", "detail", "errors"] : ["code", "detail"]);
  expect(body.code).toBe(code);
  expect(body.code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  expect(typeof body.detail).toBe("string");
  expect(body.detail).toMatch(/^[^A-Z]/);
  expect(body.detail).not.toMatch(/\.$/);
  if (status === 422) {
    expect(body.errors?.length).toBeGreaterThan(0);
    for (const problem of body.errors ?? []) {
      expect(Object.keys(problem).sort()).toEqual(["message", "path"]);
      expect(typeof problem.path).toBe("string");
    }
  }
  return body;
}

const pathsOf = (body: ErrorBody): string[] => (body.errors ?? []).map((problem) => problem.path);

describe("wire conventions", () => {
  const it = test
    .extend("agent", ({ server }) => server.agent("wire-agent"))
    .extend("other", ({ server }) => server.agent("wire-other"))
    .extend("writer", ({ server }) => server.agent("small-writer"));
  const memoryCount = async (server: TestServer, as: Credentials): Promise<number> => {
    const response = await server.request<Entry[]>(`/memory?agent=${as.agentId}&limit=500`, { as });
    expect(response.status).toBe(200);
    return response.body.length;
  };
  const expectServing = async (server: TestServer, agent: Credentials): Promise<void> => {
    expect((await server.request("/health")).status).toBe(200);
    const write = await server.request("/memory", { as: agent, body: { content: `still serving ${Math.random()}`, allow_duplicate: true } });
    expect(write.status).toBe(201);
  };

  it("keeps an idle connection 30 s and says so, so that a client reusing one never races the server closing it", async ({ server }) => {
    const response = await server.request("/health");
    expect(response.headers.get("keep-alive")).toBe("timeout=30");
  });

  describe("bad input", () => {
    it("rejects malformed JSON with 400 BAD_REQUEST", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: '{"content": "x",' });
      expectError(response, 400, "BAD_REQUEST");
    });

    it("rejects wrong types with 422 and a path per problem", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: { content: "x", tags: [1], confidence: "high" } });
      const body = expectError(response, 422, "VALIDATION_FAILED");
      expect(pathsOf(body)).toEqual(expect.arrayContaining(["tags.0", "confidence"]));
    });

    it("rejects a NUL character anywhere in the input with 422 at its path, and stores nothing", async ({ server, agent }) => {
      const content = await server.request("/memory", { as: agent, body: { content: "before\u0000after" } });
      expect(expectError(content, 422, "VALIDATION_FAILED").errors).toEqual([{ path: "content", message: "contains a NUL character (U+0000)" }]);
      const tag = await server.request("/memory", { as: agent, body: { content: "a clean note with a dirty tag", tags: ["ok", "b\u0000d"] } });
      expect(pathsOf(expectError(tag, 422, "VALIDATION_FAILED"))).toEqual(["tags.1"]);
      const nested = await server.request("/events", { as: agent, body: { type: "test.marker", payload: { deep: [{ ["k\u0000"]: 1 }] } } });
      expect(pathsOf(expectError(nested, 422, "VALIDATION_FAILED"))).toEqual(["payload.deep.0"]);
      const task = await server.request("/tasks", { as: agent, body: { title: "\u0000" } });
      expect(pathsOf(expectError(task, 422, "VALIDATION_FAILED"))).toEqual(["title"]);
      const stored = await server.request<Entry[]>("/memory?limit=500", { as: agent });
      expect(stored.body.filter((entry) => entry.content.includes("after") || entry.content.includes("dirty tag"))).toEqual([]);
      // As deep as a body may nest (64 levels), the NUL is found and named.
      const deep = `${"[".repeat(60)}"\\u0000"${"]".repeat(60)}`;
      const deeper = await server.request("/events", { as: agent, body: `{"type":"test.marker","payload":{"x":${deep}}}` });
      expect(expectError(deeper, 422, "VALIDATION_FAILED").errors?.[0]?.path).toBe(`payload.x${".0".repeat(60)}`);
    });

    it("rejects out-of-range numbers and unknown enum values with 422", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: { content: "x", confidence: 1.5, type: "rumour" } });
      const body = expectError(response, 422, "VALIDATION_FAILED");
      expect(pathsOf(body)).toEqual(expect.arrayContaining(["confidence", "type"]));
    });

    it("rejects an unknown field on POST with 422 at the field's path", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: { content: "x", colour: "red" } });
      expect(pathsOf(expectError(response, 422, "VALIDATION_FAILED"))).toEqual(["colour"]);
    });

    it("rejects unknown fields on PATCH with 422, one error per field", async ({ server, agent }) => {
      const written = await server.request<Entry>("/memory", { as: agent, body: { content: "patch target for unknown fields" } });
      expect(written.status).toBe(201);
      const response = await server.request(`/memory/${written.body.id}`, {
        as: agent,
        method: "PATCH",
        body: { colour: "red", content: "changed", size: 2 },
      });
      expect(pathsOf(expectError(response, 422, "VALIDATION_FAILED")).sort()).toEqual(["colour", "size"]);
      const read = await server.request<Entry & { version: number }>(`/memory/${written.body.id}`, { as: agent });
      expect(read.body.content).toBe("patch target for unknown fields");
      expect(read.body.version).toBe(1);
    });

    it("does not let a path parameter be smuggled in through the body", async ({ server, agent }) => {
      const written = await server.request<Entry>("/memory", { as: agent, body: { content: "smuggling target" } });
      const response = await server.request(`/memory/${written.body.id}`, { as: agent, method: "PATCH", body: { id: "00000000" } });
      expect(pathsOf(expectError(response, 422, "VALIDATION_FAILED"))).toEqual(["id"]);
    });

    it("rejects an unknown query parameter on GET with 422", async ({ server, agent }) => {
      const response = await server.request("/memory?colour=red", { as: agent });
      expect(pathsOf(expectError(response, 422, "VALIDATION_FAILED"))).toEqual(["colour"]);
    });

    it("rejects NaN and Infinity literals with 400 and keeps serving", async ({ server, agent }) => {
      for (const literal of ["NaN", "Infinity", "-Infinity"]) {
        const response = await server.request("/memory", { as: agent, body: `{"content": "x", "confidence": ${literal}}` });
        expectError(response, 400, "BAD_REQUEST");
      }
      await expectServing(server, agent);
    });

    it("rejects a 10,000-deep array body with a 4xx and keeps serving", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: "[".repeat(10_000) + "]".repeat(10_000) });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await expectServing(server, agent);
    });

    it("rejects a 10,000-deep object body with a 4xx and keeps serving", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000) });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await expectServing(server, agent);
    });

    it("rejects deep nesting inside a known field with a 4xx", async ({ server, agent }) => {
      const deep = "[".repeat(10_000) + "]".repeat(10_000);
      const response = await server.request("/memory", { as: agent, body: `{"content": "x", "tags": ${deep}}` });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await expectServing(server, agent);
    });

    it("rejects a non-JSON content type with 415", async ({ server, agent }) => {
      const response = await server.request("/memory", {
        as: agent,
        body: JSON.stringify({ content: "plain text" }),
        headers: { "content-type": "text/plain" },
      });
      expectError(response, 415, "UNSUPPORTED_MEDIA_TYPE");
    });

    it("accepts a JSON content type with a charset", async ({ server, agent }) => {
      const response = await server.request("/memory", {
        as: agent,
        body: JSON.stringify({ content: "with a charset parameter" }),
        headers: { "content-type": "application/json; charset=utf-8" },
      });
      expect(response.status).toBe(201);
    });

    it("rejects a JSON array where an object is expected with 422", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: [{ content: "x" }] });
      expectError(response, 422, "VALIDATION_FAILED");
    });

    it("rejects a JSON scalar where an object is expected with a 4xx", async ({ server, agent }) => {
      const response = await server.request("/memory", { as: agent, body: '"just a string"' });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    });

    it("ignores a body on a route that takes none", async ({ server, agent }) => {
      const written = await server.request<Entry>("/memory", { as: agent, body: { content: "to delete with a stray body" } });
      const deleted = await server.request(`/memory/${written.body.id}`, {
        as: agent,
        method: "DELETE",
        body: "this is not json {",
        headers: { "content-type": "text/plain" },
      });
      expect(deleted.status).toBe(204);
      const response = await rawRequest(`${server.url}/agents/me`, {
        method: "GET",
        headers: { "x-agent-id": agent.agentId, "x-api-key": agent.apiKey, "content-type": "application/json" },
        body: "{ not json",
      });
      expect(response.status).toBe(200);
    });
  });

  describe("a small MAX_BODY_BYTES", () => {
    it.override("serverEnv", { MAX_BODY_BYTES: "2048", MAX_CONTENT_BYTES: "1024" });

    it("rejects a larger body with 413 PAYLOAD_TOO_LARGE", async ({ server, writer }) => {
      const response = await server.request("/memory", { as: writer, body: { content: "x".repeat(3000) } });
      expectError(response, 413, "PAYLOAD_TOO_LARGE");
      expect(response.headers.get("x-request-id")).toBeTruthy();
    });

    it("rejects a larger chunked body with no Content-Length with 413", async ({ server, writer }) => {
      const chunk = new TextEncoder().encode(JSON.stringify({ content: "y".repeat(3000) }));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk);
          controller.close();
        },
      });
      const response = await fetch(`${server.url}/memory`, {
        method: "POST",
        headers: { "x-agent-id": writer.agentId, "x-api-key": writer.apiKey, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      });
      expect(response.status).toBe(413);
      expect(((await response.json()) as ErrorBody).code).toBe("PAYLOAD_TOO_LARGE");
    });

    it("accepts a body under the limit", async ({ server, writer }) => {
      const response = await server.request("/memory", { as: writer, body: { content: "x".repeat(1000) } });
      expect(response.status).toBe(201);
    });
  });

  describe("X-Request-Id", () => {
    const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

    it("is on every response: success, 404 for an unknown route, 401, 422", async ({ server, agent }) => {
      const responses = [
        await server.request("/health"),
        await server.request("/no/such/route", { as: agent }),
        await server.request("/memory"),
        await server.request("/memory?limit=0", { as: agent }),
        await server.request("/openapi.json"),
      ];
      const ids = responses.map((response) => response.headers.get("x-request-id"));
      for (const id of ids) expect(id).toMatch(VALID);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("echoes a valid incoming id", async ({ server }) => {
      const incoming = "client-req.42:retry-1";
      expect((await server.request("/health", { headers: { "x-request-id": incoming } })).headers.get("x-request-id")).toBe(incoming);
      const unauthenticated = await server.request("/memory", { headers: { "x-request-id": incoming } });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers.get("x-request-id")).toBe(incoming);
    });

    it("replaces an invalid incoming id", async ({ server }) => {
      for (const incoming of ["a".repeat(300), "has spaces in it", "semi;colon", ""]) {
        const id = (await server.request("/health", { headers: { "x-request-id": incoming } })).headers.get("x-request-id");
        expect(id).toMatch(VALID);
        expect(id).not.toBe(incoming);
      }
    });
  });

  describe("Idempotency-Key on POST /memory", () => {
    it("replays the first response for a repeat with the same body and writes nothing new", async ({ server }) => {
      const writer = await server.agent("idem-writer");
      const body = { content: "idempotent write number one", allow_duplicate: true, tags: ["a", "b"] };
      const headers = { "idempotency-key": "key-1" };
      const first = await server.request<Entry>("/memory", { as: writer, body, headers });
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const eventsBefore = await server.request<unknown[]>("/events?since=seq:0&type=memory.written&limit=500", { as: writer });

      const again = await server.request<Entry>("/memory", { as: writer, body, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);

      // Key order does not make a different request.
      const reordered = await server.request<Entry>("/memory", {
        as: writer,
        body: { tags: ["a", "b"], allow_duplicate: true, content: "idempotent write number one" },
        headers,
      });
      expect(reordered.headers.get("idempotent-replayed")).toBe("true");
      expect(reordered.body.id).toBe(first.body.id);

      expect(await memoryCount(server, writer)).toBe(1);
      const eventsAfter = await server.request<unknown[]>("/events?since=seq:0&type=memory.written&limit=500", { as: writer });
      expect(eventsAfter.body.length).toBe(eventsBefore.body.length);
    });

    it("rejects a repeat with a different body with 422 and writes nothing", async ({ server }) => {
      const writer = await server.agent("idem-changer");
      const headers = { "idempotency-key": "key-2" };
      const first = await server.request("/memory", { as: writer, body: { content: "first body", allow_duplicate: true }, headers });
      expect(first.status).toBe(201);
      const changed = await server.request("/memory", { as: writer, body: { content: "second body", allow_duplicate: true }, headers });
      expect(expectError(changed, 422, "VALIDATION_FAILED").detail).toBe("idempotency key reused with a different request");
      expect(await memoryCount(server, writer)).toBe(1);
    });

    it("keeps keys per agent", async ({ server }) => {
      const one = await server.agent("idem-one");
      const two = await server.agent("idem-two");
      const headers = { "idempotency-key": "shared-key" };
      const first = await server.request<Entry>("/memory", { as: one, body: { content: "agent one's entry", allow_duplicate: true }, headers });
      const second = await server.request<Entry>("/memory", { as: two, body: { content: "agent one's entry", allow_duplicate: true }, headers });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers.get("idempotent-replayed")).toBeNull();
      expect(second.body.id).not.toBe(first.body.id);
      const different = await server.request<Entry>("/memory", { as: two, body: { content: "something else", allow_duplicate: true }, headers: { "idempotency-key": "other" } });
      expect(different.status).toBe(201);
      expect(await memoryCount(server, one)).toBe(1);
      expect(await memoryCount(server, two)).toBe(2);
    });

    it("rejects a key longer than 200 characters with 422 and accepts 200", async ({ server }) => {
      const writer = await server.agent("idem-long");
      const long = await server.request("/memory", {
        as: writer,
        body: { content: "long key entry", allow_duplicate: true },
        headers: { "idempotency-key": "k".repeat(201) },
      });
      expect(pathsOf(expectError(long, 422, "VALIDATION_FAILED"))).toEqual(["Idempotency-Key"]);
      expect(await memoryCount(server, writer)).toBe(0);
      const longest = await server.request("/memory", {
        as: writer,
        body: { content: "longest key entry", allow_duplicate: true },
        headers: { "idempotency-key": "k".repeat(200) },
      });
      expect(longest.status).toBe(201);
    });

    it("produces one entry for concurrent identical requests with the same key", async ({ server }) => {
      const writer = await server.agent("idem-racer");
      const body = { content: "raced idempotent write", allow_duplicate: true };
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => server.request<Entry>("/memory", { as: writer, body, headers: { "idempotency-key": "race" } })),
      );
      for (const response of responses) expect(response.status).toBe(201);
      expect(new Set(responses.map((response) => response.body.id)).size).toBe(1);
      expect(responses.filter((response) => response.headers.get("idempotent-replayed") === "true")).toHaveLength(7);
      expect(await memoryCount(server, writer)).toBe(1);
    });

    it("writes again for the same body without a key", async ({ server }) => {
      const writer = await server.agent("idem-none");
      const body = { content: "no key, written twice", allow_duplicate: true };
      const first = await server.request<Entry>("/memory", { as: writer, body });
      const second = await server.request<Entry>("/memory", { as: writer, body });
      expect(second.body.id).not.toBe(first.body.id);
      expect(await memoryCount(server, writer)).toBe(2);
    });
  });

  describe("routing and credentials", () => {
    it("answers an unknown route with a 404 JSON error", async ({ server, agent }) => {
      expectError(await server.request("/no/such/route", { as: agent }), 404, "NOT_FOUND");
      expectError(await server.request("/no/such/route"), 404, "NOT_FOUND");
      expectError(await server.request("/memory/search/extra/segments", { as: agent }), 404, "NOT_FOUND");
    });

    it("answers /health without credentials", async ({ server }) => {
      const response = await server.request<{ status: string; database: string }>("/health");
      expect(response.status).toBe(200);
      expect(response.body.database).toBe("ok");
    });

    it("answers 401 with WWW-Authenticate for missing or wrong credentials", async ({ server, agent, other }) => {
      const missing = await server.request("/memory");
      expect(expectError(missing, 401, "UNAUTHENTICATED").detail).toBe("invalid credentials");
      expect(missing.headers.get("www-authenticate")).toBeTruthy();
      const wrong = await server.request("/memory", { as: { agentId: agent.agentId, apiKey: "cairn_wrong" } });
      expect(expectError(wrong, 401, "UNAUTHENTICATED").detail).toBe("invalid credentials");
      const unknown = await server.request("/memory", { as: { agentId: "nobody-here", apiKey: other.apiKey } });
      expect(expectError(unknown, 401, "UNAUTHENTICATED").detail).toBe("invalid credentials");
    });
  });
});

describe("rate limit", () => {
  it.override("serverEnv", { RATE_LIMIT_PER_MINUTE: "5" });

  it("answers the sixth request in a minute with 429 and Retry-After, per agent", async ({ server }) => {
    const busy = await server.agent("busy-agent");
    const calm = await server.agent("calm-agent");
    for (let index = 0; index < 5; index++) expect((await server.request("/agents/me", { as: busy })).status).toBe(200);
    const limited = await server.request("/agents/me", { as: busy });
    expectError(limited, 429, "RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("x-request-id")).toBeTruthy();
    // Writes count too, and refusing them writes nothing.
    expectError(await server.request("/memory", { as: busy, body: { content: "over the limit" } }), 429, "RATE_LIMITED");

    expect((await server.request("/agents/me", { as: calm })).status).toBe(200);
    const written = await server.request<unknown[]>(`/memory?agent=${busy.agentId}`, { as: calm });
    expect(written.status).toBe(200);
    expect(written.body).toEqual([]);
    expect((await server.request("/health")).status).toBe(200);
  });
});
