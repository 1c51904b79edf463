import { describe, expect } from "vitest";
import type { Capture, CaptureReceipt, DigestReport } from "../../src/wire/captures.js";
import { test } from "../helpers/fixtures.js";
import { type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";
import { emitSentinel, openStream, receivedBefore } from "../helpers/stream.js";

// CONTRACT §13: session text queued for the archivist, private to its author and the archivist.

const add = (server: TestServer, as: Credentials, body: Record<string, unknown>) => server.request<CaptureReceipt & ErrorBody>("/captures", { as, body });

async function added(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<CaptureReceipt> {
  const response = await add(server, as, body);
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const queue = async (server: TestServer, query = ""): Promise<Capture[]> => {
  const response = await server.request<Capture[]>(`/captures${query}`, { as: server.archivist });
  expect(response.status, response.text).toBe(200);
  return response.body;
};

const digest = (server: TestServer, as: Credentials, body: unknown) => server.request<DigestReport & ErrorBody>("/captures/digest", { as, body });

const it = test.extend("alice", ({ server }) => server.agent("alice")).extend("bob", ({ server }) => server.agent("bob"));

describe("adding a capture", () => {
  it("stores the text redacted, counts the secrets, and answers with a receipt that expires after ttl_hours", async ({ server, alice }) => {
    const key = `cairn_${"k7Q".repeat(15).slice(0, 43)}`;
    const receipt = await added(server, alice, { content: `we deployed; the key was ${key} and password=hunter2`, session_id: "s-1", host: "claude-code", project: null, ttl_hours: 2 });
    expect(receipt).toMatchObject({ project: null, session_id: "s-1", redactions: 2 });
    expect(Date.parse(receipt.expires_at) - Date.parse(receipt.created_at)).toBe(2 * 3600_000);
    const [stored] = await queue(server);
    expect(stored).toMatchObject({ id: receipt.id, agent_id: "alice", host: "claude-code", status: "pending", attempts: 0, memory_ids: [] });
    expect(stored?.content).toBe("we deployed; the key was [REDACTED:cairn_key] and password=[REDACTED:assignment]");
    expect(stored?.bytes).toBe(Buffer.byteLength(stored?.content ?? "", "utf8"));
    expect(JSON.stringify(stored)).not.toContain(key);
  });

  it("answers the same text from the same agent and session within a day with the first capture and 200", async ({ server, alice, bob }) => {
    const first = await added(server, alice, { content: "same words twice", session_id: "s-2", project: null });
    const again = await add(server, alice, { content: "same words twice", session_id: "s-2", project: null });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.id, duplicate_of: first.id });
    // Another session, or another agent, is another capture.
    expect((await add(server, alice, { content: "same words twice", session_id: "s-3", project: null })).status).toBe(201);
    expect((await add(server, bob, { content: "same words twice", session_id: "s-2", project: null })).status).toBe(201);
    expect((await queue(server)).length).toBe(3);
  });

  it("refuses text over CAPTURE_MAX_BYTES with 413, a project the agent may not write to as memory writes do, and bad fields with 422", async ({ server, alice, bob }) => {
    expect((await add(server, alice, { content: "x".repeat(65_537), project: null })).status).toBe(413);
    expect((await server.request("/projects", { as: alice, body: { name: "web" } })).status).toBe(201);
    // Not a member, or no such project: one answer either way, the one a memory write gets.
    for (const project of ["web", "nowhere"]) {
      const refused = await add(server, bob, { content: "not mine to write", project });
      const asMemory = await server.request("/memory", { as: bob, body: { content: "not mine to write", project } });
      expect(refused.status, project).toBe(asMemory.status);
      expect(refused.status).toBe(403);
    }
    for (const body of [{ content: "" }, { content: "x", ttl_hours: 0 }, { content: "x", ttl_hours: 721 }, { content: "x", session_id: "s".repeat(129) }, { content: "x", colour: "red" }]) {
      expect((await add(server, alice, body)).status, JSON.stringify(body).slice(0, 60)).toBe(422);
    }
    expect(await queue(server)).toEqual([]);
  });
});

describe("who reads captures", () => {
  it("is its author (mine=true) and the archivist; not another agent, not the owner", async ({ server, alice, bob }) => {
    const receipt = await added(server, alice, { content: "alice's session notes", project: null });
    const mine = await server.request<Capture[]>("/captures?mine=true", { as: alice });
    expect(mine.body.map((capture) => capture.id)).toEqual([receipt.id]);
    expect((await server.request<Capture[]>("/captures?mine=true", { as: bob })).body).toEqual([]);
    expect((await server.request("/captures", { as: bob })).status).toBe(403);
    expect((await server.request("/captures", { as: server.owner })).status).toBe(403);
    expect((await server.request<Capture[]>("/captures?mine=true", { as: server.owner })).body).toEqual([]);
    expect((await queue(server)).map((capture) => capture.id)).toEqual([receipt.id]);
  });

  it("tells its author and the archivist that it arrived and was digested, and nobody else", async ({ server, alice, bob }) => {
    const streams = [alice, bob, server.owner, server.archivist].map((as) => openStream(server, as));
    try {
      await Promise.all(streams.map((stream) => stream.opened));
      const receipt = await added(server, alice, { content: "notes worth keeping", session_id: "s-9", project: null });
      const entry = await server.request<{ id: string }>("/memory", { as: server.archivist, body: { content: "a fact from alice's session", project: null } });
      expect((await digest(server, server.archivist, { results: [{ id: receipt.id, outcome: "digested", memory_ids: [entry.body.id] }] })).status).toBe(200);
      const sentinel = await emitSentinel(server, server.owner);
      const seen = await Promise.all(streams.map(async (stream) => (await receivedBefore(stream, sentinel)).filter((event) => event.type.startsWith("capture."))));
      const [toAlice, toBob, toOwner, toArchivist] = seen;
      const expected = [
        { type: "capture.added", payload: { capture_id: receipt.id, project: null, session_id: "s-9", bytes: receipt.bytes } },
        { type: "capture.digested", payload: { capture_id: receipt.id, outcome: "digested", memory_ids: [entry.body.id] } },
      ];
      expect(toAlice).toMatchObject(expected);
      expect(toArchivist).toMatchObject(expected);
      expect(toBob).toEqual([]);
      expect(toOwner).toEqual([]);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});

describe("digesting captures", () => {
  it("lists pending captures oldest first, and a digested one no more", async ({ server, alice }) => {
    const first = await added(server, alice, { content: "first session", project: null });
    const second = await added(server, alice, { content: "second session", project: null });
    expect((await queue(server)).map((capture) => capture.id)).toEqual([first.id, second.id]);
    const report = await digest(server, server.archivist, { ids: [first.id] });
    expect(report.body).toEqual({ digested: 1, failed: 0, dead: 0, unknown: [] });
    expect((await queue(server)).map((capture) => capture.id)).toEqual([second.id]);
    const [own] = (await server.request<Capture[]>("/captures?mine=true", { as: alice })).body.filter((capture) => capture.id === first.id);
    expect(own).toMatchObject({ status: "digested", digested_at: expect.any(String) as string });
  });

  it("counts failures, and after CAPTURE_MAX_ATTEMPTS the capture is dead and never listed again", async ({ server, alice }) => {
    const receipt = await added(server, alice, { content: "hard to digest", project: null });
    const fail = () => digest(server, server.archivist, { results: [{ id: receipt.id, outcome: "failed", error: "the model timed out" }] });
    expect((await fail()).body).toEqual({ digested: 0, failed: 1, dead: 0, unknown: [] });
    expect((await fail()).body).toEqual({ digested: 0, failed: 1, dead: 0, unknown: [] });
    expect((await queue(server)).map((capture) => capture.attempts)).toEqual([2]);
    expect((await fail()).body).toEqual({ digested: 0, failed: 0, dead: 1, unknown: [] });
    expect(await queue(server)).toEqual([]);
    expect((await fail()).body).toEqual({ digested: 0, failed: 0, dead: 0, unknown: [receipt.id] });
    const [own] = (await server.request<Capture[]>("/captures?mine=true", { as: alice })).body;
    expect(own).toMatchObject({ status: "dead", attempts: 3 });
  });

  it("reports ids that are no pending capture as unknown, and settles a capture once per report", async ({ server, alice }) => {
    const receipt = await added(server, alice, { content: "settled once", project: null });
    const report = await digest(server, server.archivist, {
      results: [
        { id: receipt.id, outcome: "failed" },
        { id: receipt.id, outcome: "digested" },
        { id: "00000000-0000-4000-8000-000000000000", outcome: "digested" },
      ],
    });
    expect(report.body).toEqual({ digested: 0, failed: 1, dead: 0, unknown: [receipt.id, "00000000-0000-4000-8000-000000000000"] });
  });

  it("is the archivist's alone, and takes results or ids, not both", async ({ server, alice }) => {
    const receipt = await added(server, alice, { content: "for the archivist", project: null });
    expect((await digest(server, alice, { ids: [receipt.id] })).status).toBe(403);
    expect((await digest(server, server.owner, { ids: [receipt.id] })).status).toBe(403);
    expect((await digest(server, server.archivist, { ids: [receipt.id], results: [{ id: receipt.id, outcome: "digested" }] })).status).toBe(422);
    expect((await digest(server, server.archivist, {})).status).toBe(422);
    expect((await queue(server)).map((capture) => capture.id)).toEqual([receipt.id]);
  });
});
