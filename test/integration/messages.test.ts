import { describe, expect } from "vitest";
import type { Message } from "../../src/wire/messages.js";
import { test } from "../helpers/fixtures.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";

const send = async (server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<Message> => {
  const response = await server.request<Message>("/messages", { as, body });
  expect(response.status, response.text).toBe(201);
  return response.body;
};
const inbox = async (server: TestServer, as: Credentials): Promise<Message[]> =>
  (await server.request<Message[]>("/messages/inbox?limit=500", { as })).body;

describe("messages", () => {
  const it = test
    .extend("ada", ({ server }) => server.agent("ada"))
    .extend("bo", ({ server }) => server.agent("bo"))
    .extend("cy", ({ server }) => server.agent("cy"))
    .extend("di", ({ server }) => server.agent("di"));

  it("delivers a direct message to its recipient only; anyone else gets 404", async ({ server, ada, bo, cy }) => {
    const message = await send(server, ada, { to: "bo", subject: "review", body: "please review #12" });
    expect(message).toMatchObject({ from: "ada", to: "bo", project: null, read: true });
    expect((await inbox(server, bo)).map((row) => row.id)).toContain(message.id);
    const asRecipient = await server.request<Message>(`/messages/${message.id}`, { as: bo });
    expect(asRecipient.body.read).toBe(false);
    expect((await server.request(`/messages/${message.id}`, { as: cy })).status).toBe(404);
    expect((await server.request(`/messages/${message.id}/read`, { method: "POST", as: cy })).status).toBe(404);
    expect((await server.request("/messages", { as: ada, body: { to: "nobody-at-all", body: "x" } })).status).toBe(404);
  });

  it("broadcasts to every other agent, each with its own read state", async ({ server, ada, bo, cy, di }) => {
    const message = await send(server, ada, { to: "broadcast", body: "standup in 5" });
    for (const agent of [bo, cy, di]) expect((await inbox(server, agent)).map((row) => row.id)).toContain(message.id);
    expect((await inbox(server, ada)).map((row) => row.id)).not.toContain(message.id);
    const read = await server.request<Message>(`/messages/${message.id}/read`, { method: "POST", as: bo });
    expect(read.body.read).toBe(true);
    expect((await inbox(server, bo)).map((row) => row.id)).not.toContain(message.id);
    expect((await inbox(server, cy)).map((row) => row.id)).toContain(message.id);
    expect((await server.request<Message>(`/messages/${message.id}`, { as: cy })).body.read).toBe(false);
  });

  it("delivers a project message to members only, and refuses non-members' sends with 403", async ({ server, ada, bo, cy }) => {
    await server.request("/projects", { as: ada, body: { name: "ship" } });
    await server.request("/projects/ship/join", { method: "POST", as: bo });
    const message = await send(server, ada, { to: "project:ship", body: "release at noon" });
    expect(message.project).toBe("ship");
    expect((await inbox(server, bo)).map((row) => row.id)).toContain(message.id);
    expect((await inbox(server, cy)).map((row) => row.id)).not.toContain(message.id);
    expect((await server.request(`/messages/${message.id}`, { as: cy })).status).toBe(404);
    const refused = await server.request<ErrorBody>("/messages", { as: cy, body: { to: "project:ship", body: "let me in" } });
    expect(refused.status).toBe(403);
  });

  it("consumes atomically: returns the unread batch and marks exactly those read", async ({ server, ada, cy, di }) => {
    const first = await send(server, ada, { to: "di", body: "one" });
    const second = await send(server, ada, { to: "di", body: "two" });
    await server.request("/messages/inbox/read-all", { method: "POST", as: cy });
    const batch = await server.request<Message[]>("/messages/inbox/consume", { as: di, body: {} });
    expect(batch.status).toBe(200);
    const ids = batch.body.map((row) => row.id);
    expect(ids).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(batch.body.every((row) => row.read)).toBe(true);
    expect(await inbox(server, di)).toEqual([]);
  });

  it("consumes at most limit messages, the oldest, and leaves the rest unread", async ({ server, ada, bo }) => {
    const sent = [];
    for (const body of ["one", "two", "three"]) sent.push(await send(server, ada, { to: "bo", body }));
    const first = await server.request<Message[]>("/messages/inbox/consume", { as: bo, body: { limit: 1 } });
    expect(first.body.map((row) => row.id)).toEqual([sent[0]?.id]);
    expect((await inbox(server, bo)).map((row) => row.id)).toEqual([sent[1]?.id, sent[2]?.id]);
    const rest = await server.request<Message[]>("/messages/inbox/consume", { as: bo, body: { limit: 2 } });
    expect(rest.body.map((row) => row.id)).toEqual([sent[1]?.id, sent[2]?.id]);
  });

  it("replays a consume with the same Idempotency-Key, and a new key returns nothing new", async ({ server, ada, cy }) => {
    const message = await send(server, ada, { to: "cy", body: "idempotent" });
    const headers = { "Idempotency-Key": "consume-1" };
    const first = await server.request<Message[]>("/messages/inbox/consume", { as: cy, body: {}, headers });
    const again = await server.request<Message[]>("/messages/inbox/consume", { as: cy, body: {}, headers });
    expect(first.body.map((row) => row.id)).toContain(message.id);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const fresh = await server.request<Message[]>("/messages/inbox/consume", { as: cy, body: {}, headers: { "Idempotency-Key": "consume-2" } });
    expect(fresh.body).toEqual([]);
  });

  it("marks everything read with read-all, returning the count", async ({ server, ada, bo, cy }) => {
    await send(server, ada, { to: "bo", body: "a" });
    await send(server, cy, { to: "bo", body: "b" });
    const marked = await server.request<{ marked: number }>("/messages/inbox/read-all", { method: "POST", as: bo });
    expect(marked.body.marked).toBeGreaterThanOrEqual(2);
    expect(await inbox(server, bo)).toEqual([]);
  });

  it("counts unread messages without reading them, and agrees with the inbox", async ({ server }) => {
    const counted = await server.agent("counted");
    const sender = await server.agent("count-sender");
    const count = async () => (await server.request<{ unread: number }>("/messages/inbox/count", { as: counted })).body.unread;
    expect(await count()).toBe(0);
    await send(server, sender, { to: "counted", body: "one" });
    await send(server, sender, { to: "counted", body: "two" });
    expect(await count()).toBe(2);
    expect(await count()).toBe((await inbox(server, counted)).length);
    await server.request("/messages/inbox/read-all", { method: "POST", as: counted });
    expect(await count()).toBe(0);
  });

  it("threads replies and lists sent and received messages, filtered by the other party and read state", async ({ server, ada, cy, di }) => {
    const question = await send(server, cy, { to: "di", subject: "q", body: "where are the logs?" });
    const answer = await send(server, di, { to: "cy", body: "in /var/log", reply_to: question.id });
    expect(answer.reply_to).toBe(question.id);
    const withDi = await server.request<Message[]>("/messages?agent=di", { as: cy });
    expect(withDi.body.map((row) => row.id)).toEqual([answer.id, question.id]);
    const unread = await server.request<Message[]>("/messages?read=false", { as: cy });
    expect(unread.body.map((row) => row.id)).toContain(answer.id);
    expect(unread.body.map((row) => row.id)).not.toContain(question.id);
    expect((await server.request("/messages", { as: ada, body: { to: "cy", body: "x", reply_to: question.id } })).status).toBe(404);
  });

  it("tells only the sender and the recipients about a message in the event log", async ({ server, ada, bo, cy }) => {
    const message = await send(server, ada, { to: "bo", body: "private matter" });
    const seen = async (as: Credentials) =>
      (await server.request<{ payload: { message_id?: string } }[]>("/events?since=seq:0&type=message.received&limit=500", { as })).body.some(
        (event) => event.payload.message_id === message.id,
      );
    expect(await seen(ada)).toBe(true);
    expect(await seen(bo)).toBe(true);
    expect(await seen(cy)).toBe(false);
    expect(await seen(server.owner)).toBe(false);
  });
});
