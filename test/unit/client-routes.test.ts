import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { apiErrorOf, wireRequest, type AnswerOf, type ListItemOf, type OperationClient } from "../../src/client/operations.js";
import type { MemoryEntry } from "../../src/wire/memory.js";
import type { CompactTask, Task } from "../../src/wire/tasks.js";
import { routesSource, ROUTES_PATH } from "../generate/routes.js";

const search = (path: string): Record<string, string> => Object.fromEntries(new URL(path, "http://x").searchParams);

describe("the clients' route table (src/client/routes.ts)", () => {
  it("matches the catalogue (`npm run generate` writes it)", () => {
    expect(readFileSync(ROUTES_PATH, "utf8")).toBe(routesSource());
  });
});

describe("wireRequest: an operation's input as the gateway reads it", () => {
  it("puts a GET's fields in the query string: null as empty, booleans as words", () => {
    const request = wireRequest("memory_list", { project: null, tag: "a", include_embedding: true, limit: 5 });
    expect(request.method).toBe("GET");
    expect(request.path.startsWith("/memory?")).toBe(true);
    expect(search(request.path)).toEqual({ project: "", tag: "a", include_embedding: "true", limit: "5" });
    expect(request.body).toBeUndefined();
  });

  it("joins a list with commas, as the gateway splits it", () => {
    expect(search(wireRequest("memory_related", { id: "x", rels: ["grounds", "relates_to"] }).path)).toEqual({ rels: "grounds,relates_to" });
  });

  it("escapes path parameters and leaves them out of the query", () => {
    expect(wireRequest("memory_get", { id: "a/b c" }).path).toBe("/memory/a%2Fb%20c");
    expect(() => wireRequest("memory_get", {} as { id: string })).toThrow(/id is a path parameter/);
  });

  it("sends header fields as headers and the rest as a JSON body", () => {
    const request = wireRequest("memory_update", { id: "abc", if_match: '"3"', content: "new text" });
    expect(request).toEqual({
      method: "PATCH",
      path: "/memory/abc",
      headers: { "if-match": '"3"', "content-type": "application/json" },
      body: JSON.stringify({ content: "new text" }),
    });
  });

  it("keeps a POST's query fields out of its body", () => {
    const request = wireRequest("feed_subscribe", { url: "https://example.org/feed.xml", verify: false });
    expect(request.path).toBe("/feeds?verify=false");
    expect(JSON.parse(request.body ?? "{}")).toEqual({ url: "https://example.org/feed.xml" });
  });

  it("sends a text body as itself, with its media type, and the other fields in the query", () => {
    const request = wireRequest("admin_import", { body: '{"kind":"agent"}\n', dry_run: true });
    expect(request).toEqual({ method: "POST", path: "/admin/import?dry_run=true", headers: { "content-type": "application/x-ndjson" }, body: '{"kind":"agent"}\n' });
  });

  it("checks names and fields against the catalogue at compile time", () => {
    // @ts-expect-error: no operation has this name
    expect(() => wireRequest("task_creat", { title: "x" })).toThrow();
    // @ts-expect-error: task_create has no field "titel"
    wireRequest("task_create", { title: "x", titel: "y" });
    expectTypeOf<AnswerOf<"task_create", false>>().toEqualTypeOf<Task>();
    const unsent = (client: OperationClient) => {
      // @ts-expect-error: task_get has no compact form to ask for
      void client.call("task_get", { id: "abcdef", compact: true });
      return client.call("task_list", { compact: true });
    };
    expectTypeOf(unsent).returns.resolves.toEqualTypeOf<(Task | CompactTask)[]>();
    expectTypeOf<ListItemOf<"task_list", true>>().toEqualTypeOf<Task | CompactTask>();
    expectTypeOf<ListItemOf<"task_list", false>>().toEqualTypeOf<Task>();
    expectTypeOf<ListItemOf<"memory_list", false>>().toEqualTypeOf<MemoryEntry>();
  });
});

describe("apiErrorOf", () => {
  it("reads the server's refusal, its Retry-After and the rest of its body", () => {
    const error = apiErrorOf(412, JSON.stringify({ detail: "version mismatch", code: "PRECONDITION_FAILED", current_version: 4 }), "3");
    expect([error.status, error.code, error.detail, error.retryAfterMs, error.body.current_version]).toEqual([412, "PRECONDITION_FAILED", "version mismatch", 3000, 4]);
  });

  it("keeps the start of a body that is not the server's", () => {
    const error = apiErrorOf(502, "<html>bad gateway</html>", null);
    expect([error.code, error.detail, error.retryAfterMs]).toEqual(["UNKNOWN", "<html>bad gateway</html>", undefined]);
  });
});
