import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect } from "vitest";
import { it } from "../helpers/fixtures.js";

const run = promisify(execFile);
const README = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");

/** The README's shell blocks of its "Over HTTP" section, as a new user would paste them. */
function httpExamples(): string[] {
  const section = README.slice(README.indexOf("### Over HTTP"), README.indexOf("## Configuration"));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

describe("the README's HTTP examples", () => {
  it.skipIf(!existsSync("/usr/bin/curl") || !existsSync("/bin/bash"))("run as written against a server, one after another", async ({ server }) => {
    const builder = await server.agent("builder");
    const port = new URL(server.url).port;
    // Everything but the live stream, which never ends; the server's port for the default one.
    const script = httpExamples()
      .join("\n")
      .split("\n")
      .filter((line) => !line.includes("/events/stream"))
      .join("\n")
      .replaceAll("localhost:8470", `127.0.0.1:${port}`);
    const { stdout } = await run("/bin/bash", ["-euo", "pipefail", "-c", script], { env: { PATH: "/usr/bin:/bin", KEY: builder.apiKey } });
    expect(stdout).not.toMatch(/"code":"[A-Z_]+"/);
    const tasks = await server.request<{ id: string; title: string; status: string; result: unknown }[]>("/tasks?limit=500", { as: builder });
    expect(tasks.body.find((task) => task.title === "Fix the coupon rounding")).toMatchObject({ status: "completed", result: { pr: 412 } });
    const task = tasks.body.find((candidate) => candidate.title === "Fix the coupon rounding") as { id: string };
    const decisions = await server.request<{ decision: string; task_id: string }[]>("/decisions?q=rounding", { as: builder });
    expect(decisions.body).toEqual([expect.objectContaining({ decision: "Round coupons half-up", task_id: task.id })]);
    const pack = await server.request<{ last_handoff: { summary: string } }>("/sessions/handoff?peek=true", { as: builder });
    expect(pack.body.last_handoff.summary).toBe("coupons done");
  });
});
