import { describe, expect } from "vitest";
import { CAPTURE_ROLE } from "../../archivist/prompts.js";
import type { Capture, CaptureReceipt } from "../../src/wire/captures.js";
import { SECRET_LINES, UNTOUCHED_LINES } from "../fixtures/secrets.js";
import { llmEnv, startArchivist } from "../helpers/archivist.js";
import { test } from "../helpers/fixtures.js";
import { read, type MemoryEntry } from "../helpers/memory.js";
import type { Credentials, ErrorBody, TestServer } from "../helpers/server.js";
import { eventually } from "../helpers/wait.js";

// Issue 25: secrets are redacted where captures come in, and again in every fact the archivist
// writes from one, whatever its model echoed back. Over HTTP, on the backend the suite runs on.

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function redactedShape(text: string, secrets: string[]): RegExp {
  let pattern = escape(text);
  for (const secret of secrets) pattern = pattern.split(escape(secret)).join("\\[REDACTED:[a-z0-9_]+\\]");
  return new RegExp(`^${pattern}$`);
}

const SECRET_TEXT = SECRET_LINES.map((line) => line.text).join("\n");
const ALL_SECRETS = SECRET_LINES.flatMap((line) => line.secrets);

async function capture(server: TestServer, as: Credentials, body: Record<string, unknown>): Promise<CaptureReceipt> {
  const response = await server.request<CaptureReceipt>("/captures", { as, body });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

const mine = async (server: TestServer, as: Credentials, id: string): Promise<Capture | undefined> =>
  (await server.request<Capture[]>("/captures?mine=true&limit=200", { as })).body.find((item) => item.id === id);

const it = test.extend("alice", ({ server }) => server.agent("alice"));

describe("a capture with secrets in it", () => {
  it("is stored with every secret of the table replaced and the text around each kept, as its author and the archivist read it", async ({ server, alice }) => {
    const receipt = await capture(server, alice, { content: SECRET_TEXT, session_id: "s-secrets", project: null });
    expect(receipt.redactions).toBe(ALL_SECRETS.length);
    const queued = (await server.request<Capture[]>("/captures?limit=200", { as: server.archivist })).body.find((item) => item.id === receipt.id);
    const own = await mine(server, alice, receipt.id);
    for (const stored of [queued, own]) {
      expect(stored?.content).toMatch(redactedShape(SECRET_TEXT, ALL_SECRETS));
      for (const secret of ALL_SECRETS) expect(stored?.content).not.toContain(secret);
    }
  });

  it("leaves prose and code that only look near a secret exactly as they were", async ({ server, alice }) => {
    const text = UNTOUCHED_LINES.join("\n");
    const receipt = await capture(server, alice, { content: text, session_id: "s-prose", project: null });
    expect(receipt.redactions).toBe(0);
    expect((await mine(server, alice, receipt.id))?.content).toBe(text);
  });
});

describe("a fact the archivist writes from a capture", () => {
  const withCapture = it.extend("source", async ({ server, alice }) => {
    const { id } = await capture(server, alice, { content: "a session in which secrets were printed", session_id: "s-1", project: null });
    return { kind: "capture", capture_id: id };
  });

  const fromCapture = (server: TestServer, source: unknown, body: Record<string, unknown>) =>
    server.request<MemoryEntry & ErrorBody>("/memory", { as: server.archivist, body: { source, allow_duplicate: true, ...body } });

  withCapture("is stored redacted whatever the model echoed: every line of the table, read back by the capture's author", async ({ server, alice, source }) => {
    for (const { text, secrets } of SECRET_LINES) {
      const written = await fromCapture(server, source, { content: text });
      expect(written.status, written.text).toBe(201);
      const stored = await read(server, alice, written.body.id);
      expect(stored.body.content, text).toMatch(redactedShape(text, secrets));
      for (const secret of secrets) expect(JSON.stringify(stored.body)).not.toContain(secret);
    }
  });

  withCapture("keeps prose as it was written", async ({ server, alice, source }) => {
    for (const text of UNTOUCHED_LINES) {
      const written = await fromCapture(server, source, { content: text });
      expect(written.status, written.text).toBe(201);
      expect((await read(server, alice, written.body.id)).body.content).toBe(text);
    }
  });

  withCapture("drops a tag that is a secret and keeps the others", async ({ server, alice, source }) => {
    const token = (SECRET_LINES.find((line) => line.kind === "npm") as { secrets: string[] }).secrets[0] as string;
    const written = await fromCapture(server, source, { content: "The release job publishes with an automation token.", tags: ["capture", "release", token] });
    expect(written.status, written.text).toBe(201);
    expect((await read(server, alice, written.body.id)).body.tags).toEqual(["capture", "release"]);
  });
});

describe("the archivist digesting a capture whose model echoes a secret back", () => {
  const stripeKey = (SECRET_LINES.find((line) => line.kind === "stripe") as { secrets: string[] }).secrets[0] as string;

  test("stores the fact with the secret replaced, and the rest of it as the model wrote it", async ({ server, fake }) => {
    const fact = `Billing charges cards through Stripe with the live key ${stripeKey} from the payments service.`;
    fake.respond((call) => (call.system.endsWith(CAPTURE_ROLE) ? JSON.stringify({ facts: [{ content: fact, tags: ["billing"] }] }) : "{}"));
    const alice = await server.agent("alice");
    const archivist = await startArchivist(server, llmEnv(fake));
    try {
      const added = await capture(server, alice, { content: "we wired billing to stripe today", session_id: "s-pay", project: null });
      expect(await eventually(async () => (await mine(server, alice, added.id))?.status === "digested", 30_000)).toBe(true);
      const [id] = (await mine(server, alice, added.id))?.memory_ids ?? [];
      const stored = await read(server, alice, id as string);
      expect(stored.body.content).toBe(fact.replace(stripeKey, "[REDACTED:stripe_access_token]"));
      expect(stored.body.tags).toEqual(["capture", "session:s-pay", "billing"]);
    } finally {
      await archivist.stop();
    }
  });
});
