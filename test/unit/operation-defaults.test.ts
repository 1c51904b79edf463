import { describe, expect, it } from "vitest";
import { z } from "zod";
import { catalogue } from "../../tools/catalogue.js";
import { defineOperation } from "../../tools/operation.js";

// An operation is an agent's unless it says otherwise: the few that are not name themselves.

const spec = { title: "t", description: "d", kind: "read", http: { method: "GET", path: "/t" }, input: z.strictObject({}), output: z.object({}) } as const;

describe("an operation's access", () => {
  it("is an agent's when it names none, and what it names otherwise", () => {
    // The handler is typed as an agent's: it reads its caller without a check.
    const agents = defineOperation({ ...spec, name: "test_default", output: z.object({ agent: z.string() }), handle: ({ caller }) => ({ agent: caller.agentId }) });
    expect(agents.access).toBe("agent");
    expect(defineOperation({ ...spec, name: "test_public", access: "public", handle: () => ({}) }).access).toBe("public");
  });

  it("is not an agent's for exactly the operations that register a client or answer anyone", () => {
    const others = catalogue.filter((operation) => operation.access !== "agent").map((operation) => `${operation.name}:${operation.access}`);
    expect(others.sort()).toEqual(["agent_register:registration", "agent_self_register:registration", "health:public", "onboard_script:public"]);
  });
});
