import { it, expect } from "vitest";
import { startTestServer } from "../helpers/server.js";
it("nul", async () => {
  const s = await startTestServer();
  const a = await s.agent("alice");
  for (const content of ["a\u0000b nul in content", "lone \ud800 surrogate"]) {
    const r = await s.request("/memory", { as: a, body: { content, project: null, tags: ["x\u0000y"] } });
    console.log(JSON.stringify(content), r.status, r.text.slice(0, 200));
  }
  const t = await s.request("/tasks", { as: a, body: { title: "t\u0000x", project: null } });
  console.log("task", t.status, t.text.slice(0, 200));
  const m = await s.request("/events", { as: a, body: { type: "x.y", payload: { a: "\u0000" } } });
  console.log("event", m.status, m.text.slice(0, 200));
  await s.close();
  expect(1).toBe(1);
});
