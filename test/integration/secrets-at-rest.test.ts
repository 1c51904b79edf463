import { describe, expect } from "vitest";
import type { EventRecord } from "../../src/wire/events.js";
import type { CompactWriteResult, MemoryWriteResult } from "../../src/wire/memory.js";
import { SECRET_LINES, UNTOUCHED_LINES } from "../fixtures/secrets.js";
import { test } from "../helpers/fixtures.js";
import { patch, read, searchHits } from "../helpers/memory.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

// Secrets an agent writes into shared memory or a custom event are replaced before they are
// stored (docs/decisions.md, "Secrets in memory, events and the audit log"): every reader, search,
// feed, peer and export would otherwise hand them on. Over HTTP, on the backend the suite runs on.

const SECRET_TEXT = SECRET_LINES.map((line) => line.text).join("\n");
const ALL_SECRETS = SECRET_LINES.flatMap((line) => line.secrets);
const secretOf = (kind: string): string => (SECRET_LINES.find((line) => line.kind === kind) as { secrets: string[] }).secrets[0] as string;

const writeMemory = (server: TestServer, as: Credentials, body: Record<string, unknown>) =>
  server.request<MemoryWriteResult & ErrorBody>("/memory", { as, body: { allow_duplicate: true, ...body } });

const it = test.extend("alice", ({ server }) => server.agent("alice"));

describe("a memory entry with secrets in it", () => {
  it("is stored with every secret of the table replaced, and the answer counts them", async ({ server, alice }) => {
    const written = await writeMemory(server, alice, { content: SECRET_TEXT, project: null });
    expect(written.status, written.text).toBe(201);
    expect(written.body.redactions).toBe(ALL_SECRETS.length);
    const stored = await read(server, alice, written.body.id);
    for (const secret of ALL_SECRETS) expect(JSON.stringify(stored.body)).not.toContain(secret);
    expect(stored.body.content).toContain("[REDACTED:");
    expect(written.body.content).toBe(stored.body.content);
  });

  it("keeps prose and code that only look near a secret as they were, with no count in the answer", async ({ server, alice }) => {
    const written = await writeMemory(server, alice, { content: UNTOUCHED_LINES.join("\n"), project: null });
    expect(written.status, written.text).toBe(201);
    expect(written.body).not.toHaveProperty("redactions");
    expect((await read(server, alice, written.body.id)).body.content).toBe(UNTOUCHED_LINES.join("\n"));
  });

  it("counts them in the compact answer too, drops a tag that is a secret, and is found by its words but not by the secret", async ({ server, alice }) => {
    const key = secretOf("stripe");
    const token = secretOf("npm");
    const content = `Billing charges cards through Stripe with the live key ${key} from the payments service.`;
    const written = await server.request<CompactWriteResult>("/memory", { as: alice, body: { content, tags: ["billing", token], project: null, compact: true } });
    expect(written.status, written.text).toBe(201);
    expect(written.body.redactions).toBe(2);
    const stored = await read(server, alice, written.body.id);
    expect(stored.body.content).toBe(content.replace(key, "[REDACTED:stripe_access_token]"));
    expect(stored.body.tags).toEqual(["billing"]);
    const bob = await server.agent("bob");
    expect((await searchHits(server, bob, "Stripe live key payments service")).map((hit) => hit.id)).toContain(written.body.id);
    expect((await searchHits(server, bob, key)).map((hit) => hit.content).join("\n")).not.toContain(key);
  });

  it("is a duplicate of the same text written before, both stored the same way", async ({ server, alice }) => {
    const content = `The deploy bot signs in with ${secretOf("github")} on every release.`;
    const first = await server.request<MemoryWriteResult>("/memory", { as: alice, body: { content, project: null } });
    const again = await server.request<MemoryWriteResult>("/memory", { as: alice, body: { content, project: null } });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.duplicate_of).toBe(first.body.id);
    expect(again.body.redactions).toBe(1);
  });

  it("has a secret a change brings replaced as well", async ({ server, alice }) => {
    const written = await writeMemory(server, alice, { content: "The staging database is reached through the bastion.", project: null });
    const url = "postgres://app:Tr0ub4dor-and-3@db.staging.internal:5432/app";
    const changed = await patch(server, alice, written.body.id, { content: `The staging database is ${url}.`, tags: ["db", secretOf("stripe")] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.content).toBe("The staging database is postgres://app:[REDACTED:url_password]@db.staging.internal:5432/app.");
    expect(changed.body.tags).toEqual(["db"]);
    expect((await read(server, alice, written.body.id)).body.content).not.toContain("Tr0ub4dor-and-3");
  });
});

describe("an entry the archivist merges", () => {
  it("is stored without a secret its model echoed, and without a tag that is one", async ({ server, alice }) => {
    const key = secretOf("openai");
    const sources = [];
    for (const content of ["The embeddings job calls the provider's API.", "The embeddings job runs nightly against the provider."]) {
      sources.push({ id: (await writeMemory(server, alice, { content, project: null })).body.id, version: 1 });
    }
    const merged = await server.request<{ entry: MemoryWriteResult }>("/archivist/merge", {
      as: server.archivist,
      body: { sources, content: `The embeddings job runs nightly and calls the provider with ${key}.`, tags: ["embeddings", secretOf("npm")] },
    });
    expect(merged.status, merged.text).toBe(201);
    expect(merged.body.entry.content).toMatch(/^The embeddings job runs nightly and calls the provider with \[REDACTED:[a-z_]+\]\.$/);
    expect(merged.body.entry.tags).toEqual(["embeddings"]);
  });
});

describe("a custom event with secrets in its payload", () => {
  it("is stored and delivered with each string's secrets replaced, keys and other values as they were", async ({ server, alice }) => {
    const key = secretOf("stripe");
    const payload = { service: "billing", note: `rotated to ${key}`, attempts: 2, nested: { headers: [`Authorization: Bearer ${secretOf("github")}`, "accept: json"] } };
    const emitted = await server.request<EventRecord>("/events", { as: alice, body: { type: "deploy.finished", payload } });
    expect(emitted.status, emitted.text).toBe(201);
    const listed = (await server.request<EventRecord[]>("/events?since=seq:0&type=deploy.finished", { as: alice })).body;
    for (const event of [emitted.body, listed.find((item) => item.id === emitted.body.id)]) {
      expect(event?.payload).toEqual({
        service: "billing",
        note: "rotated to [REDACTED:stripe_access_token]",
        attempts: 2,
        nested: { headers: [expect.stringMatching(/^Authorization: Bearer \[REDACTED:[a-z_]+\]$/) as string, "accept: json"] },
      });
    }
  });
});

describe("an entry whose redaction would make it longer than the server takes", () => {
  const small = test.extend("alice", ({ server }) => server.agent("alice"));
  small.override("serverEnv", { MAX_CONTENT_BYTES: "200" });

  small("is refused as too large, not stored longer than the limit", async ({ server, alice }) => {
    // Short passwords each become `[REDACTED:assignment]`, longer than they were: 197 bytes become 340.
    const content = Array.from({ length: 11 }, (_, index) => `password=Ab3dE9x${index % 10}`).join(" ");
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(200);
    const written = await writeMemory(server, alice, { content, project: null });
    expect(written.status, written.text).toBe(413);
    expect(written.body.code).toBe("PAYLOAD_TOO_LARGE");
  });
});
