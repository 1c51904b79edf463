import { describe, expect } from "vitest";
import { ApiError } from "../../src/client/operations.js";
import { it } from "../helpers/fixtures.js";

describe("the typed client against a running server", () => {
  it("creates, reads and lists by operation name, following the cursor page by page", async ({ server }) => {
    const client = server.client(await server.agent("typed-client"));
    const created = [];
    for (const title of ["one", "two", "three", "four", "five"]) created.push(await client.call("task_create", { title, tags: ["typed"] }));
    expect(created.map((task) => [task.title, task.status])).toEqual([
      ["one", "open"],
      ["two", "open"],
      ["three", "open"],
      ["four", "open"],
      ["five", "open"],
    ]);
    const first = created[0];
    if (!first) throw new Error("no task");
    expect((await client.call("task_get", { id: first.id })).title).toBe("one");

    const page = await client.page("task_list", { tag: "typed", limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).not.toBeNull();
    // Pages of two, followed to the end: every task once.
    const all = await client.all("task_list", { tag: "typed", limit: 2 }, 100);
    expect(all.map((task) => task.id).sort()).toEqual(created.map((task) => task.id).sort());
    // At most `max`, whatever more there is.
    expect(await client.all("task_list", { tag: "typed", limit: 2 }, 3)).toHaveLength(3);
  });

  it("answers null for what is not there, and throws the server's refusal with its body", async ({ server }) => {
    const client = server.client(await server.agent("typed-refusals"));
    expect(await client.find("task_get", { id: "00000000-0000-4000-8000-000000000000" })).toBeNull();

    const refusal = await client.call("task_create", { title: "" }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect([(refusal as ApiError).status, (refusal as ApiError).code]).toEqual([422, "VALIDATION_FAILED"]);
    expect((refusal as ApiError).body.errors).toEqual([expect.objectContaining({ path: "title" })]);

    // A header field: If-Match on the version read, refused once the entry has moved on.
    const written = await client.call("memory_write", { content: "the deploy uses blue-green switching" });
    const updated = await client.call("memory_update", { id: written.id, if_match: `"${written.version}"`, content: "the deploy uses canary releases" });
    expect(updated.version).toBe(written.version + 1);
    const stale = await client.call("memory_update", { id: written.id, if_match: `"${written.version}"`, content: "a stale edit" }).catch((error: unknown) => error);
    expect([(stale as ApiError).status, (stale as ApiError).body.current_version]).toEqual([412, updated.version]);
  });

  it("sends a text body as the file it is (an import's JSON Lines, dry run in the query)", async ({ server }) => {
    const owner = server.client(server.owner);
    const exported = await owner.call("admin_export", {});
    expect(typeof exported).toBe("string");
    const report = await owner.call("admin_import", { body: exported, dry_run: true });
    expect(report.dry_run).toBe(true);
    expect(report.errors).toEqual([]);
  });
});
