import { z } from "zod";
import { defineOperation } from "./operation.js";
import { agentPerformance as performanceRecord, agentRecord, agentSelf, keyRotation, registration } from "../src/wire/agents.js";
import { cursorParam } from "./schemas.js";
import { agentId, limitParam } from "../src/wire/fields.js";

const registerInput = z.strictObject({
  agent_id: agentId,
  display_name: z.string().trim().min(1).max(100).optional(),
});
const changeInput = {
  agent_id: agentId.optional().describe("new id: every record naming the old id is rewritten"),
  display_name: z.string().trim().min(1).max(100).nullable().optional(),
};

const agentRegister = defineOperation({
  name: "agent_register",
  title: "Register an agent",
  description: "Create an agent with the registration key (header x-registration-key). The new key is returned once.",
  kind: "create",
  access: "registration",
  http: { method: "POST", path: "/agents/register" },
  input: registerInput,
  output: registration,
  errors: ["FORBIDDEN", "CONFLICT"],
  handle({ services, registrationKey, address }, input) {
    return services.agents.register(input, registrationKey, address);
  },
});

const agentSelfRegister = defineOperation({
  name: "agent_self_register",
  title: "Register yourself",
  description:
    "Create an agent for yourself. Needs the registration key when one is configured; without one it is open " +
    "only while the server listens on loopback. A taken id is 409: an existing agent's key is never returned.",
  kind: "create",
  access: "registration",
  http: { method: "POST", path: "/agents/self-register" },
  input: registerInput,
  output: registration,
  errors: ["FORBIDDEN", "CONFLICT"],
  handle({ services, registrationKey, address }, input) {
    return services.agents.selfRegister(input, registrationKey, address);
  },
});

const agentList = defineOperation({
  name: "agent_list",
  title: "List agents",
  description: "Every agent with presence: last_seen_at, and online when seen in the last 5 minutes.",
  kind: "list",
  http: { method: "GET", path: "/agents", aliases: ["/participants"] },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: agentRecord,
  handle({ services, caller }, input) {
    return services.agents.list(caller, input.cursor, input.limit);
  },
});

const agentMe = defineOperation({
  name: "agent_me",
  title: "Your agent record",
  description: "Your own record, with your projects and whether you may write directives.",
  kind: "read",
  http: { method: "GET", path: "/agents/me" },
  input: z.strictObject({}),
  output: agentSelf,
  handle({ services, caller }) {
    return services.agents.me(caller);
  },
});

const agentUpdateMe = defineOperation({
  name: "agent_update_me",
  title: "Rename yourself",
  description: "Change your id (everything you wrote moves with you) or display name.",
  kind: "update",
  http: { method: "PATCH", path: "/agents/me" },
  input: z.strictObject(changeInput),
  output: agentRecord,
  errors: ["CONFLICT"],
  handle({ services, caller }, input) {
    return services.agents.update(caller, caller.agentId, input);
  },
});

const agentDeleteMe = defineOperation({
  name: "agent_delete_me",
  title: "Delete yourself",
  description: "Delete your agent. What you wrote stays, attributed to your id; the id is never reissued.",
  kind: "delete",
  http: { method: "DELETE", path: "/agents/me" },
  input: z.strictObject({}),
  output: undefined,
  async handle({ services, caller }) {
    await services.agents.remove(caller, caller.agentId);
  },
});

const ownerOnly = ["owner"] as const;

const agentUpdate = defineOperation({
  name: "agent_update",
  title: "Rename an agent",
  description: "Owner only: change any agent's id or display name.",
  kind: "update",
  roles: ownerOnly,
  http: { method: "PATCH", path: "/agents/:id" },
  input: z.strictObject({ id: agentId.describe("the agent to change"), ...changeInput }),
  output: agentRecord,
  errors: ["NOT_FOUND", "CONFLICT"],
  handle({ services, caller }, { id, ...change }) {
    return services.agents.update(caller, id, change);
  },
});

const agentDelete = defineOperation({
  name: "agent_delete",
  title: "Delete an agent",
  description: "Owner only: delete any agent. Its records stay; its id is never reissued.",
  kind: "delete",
  roles: ownerOnly,
  http: { method: "DELETE", path: "/agents/:id" },
  input: z.strictObject({ id: agentId }),
  output: undefined,
  errors: ["NOT_FOUND"],
  async handle({ services, caller }, input) {
    await services.agents.remove(caller, input.id);
  },
});

const agentRotateKey = defineOperation({
  name: "agent_rotate_key",
  title: "Rotate an agent's key",
  description: "Issue a new API key for yourself (or, as owner, any agent). The old key stops working at once.",
  kind: "action",
  destructive: true,
  http: { method: "POST", path: "/agents/:id/rotate-key" },
  input: z.strictObject({ id: agentId }),
  output: keyRotation,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, input) {
    return services.agents.rotateKey(caller, input.id);
  },
});

const agentPerformance = defineOperation({
  name: "agent_performance",
  title: "Task outcomes per agent",
  description: "For each agent, and per tag: tasks completed and failed, success rate and median claim-to-outcome time. `tag` narrows to one tag.",
  kind: "read",
  http: { method: "GET", path: "/agents/performance" },
  input: z.strictObject({ tag: z.string().min(1).max(64).optional() }),
  output: z.array(performanceRecord),
  handle({ services, caller }, input) {
    return services.performance(caller, input.tag);
  },
});

export const agentOperations = [
  agentPerformance,
  agentRegister,
  agentSelfRegister,
  agentList,
  agentMe,
  agentUpdateMe,
  agentDeleteMe,
  agentUpdate,
  agentDelete,
  agentRotateKey,
];
