import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";

describe("a fresh server", () => {
  it("answers /health without credentials", async ({ server }) => {
    const response = await server.request<{ status: string; database: string }>("/health");
    expect(response.status).toBe(200);
    expect(response.body.database).toBe("ok");
  });

  it("writes and reads back an entry over REST", async ({ server }) => {
    const agent = await server.agent("smoke-agent");
    const written = await server.request<{ id: string }>("/memory", { as: agent, body: { content: "smoke test entry" } });
    expect(written.status).toBe(201);
    const read = await server.request<{ content: string }>(`/memory/${written.body.id}`, { as: agent });
    expect(read.status).toBe(200);
    expect(read.body.content).toBe("smoke test entry");
    expect(read.headers.get("etag")).toBe('"1"');
  });
});
