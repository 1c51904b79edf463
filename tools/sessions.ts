import { z } from "zod";
import { defineOperation } from "./operation.js";
import { compactContextPack, contextPack, handoff } from "../src/wire/sessions.js";
import { compactFlag, cursorParam, maxTokens } from "./schemas.js";
import { agentId, limitParam } from "../src/wire/fields.js";

const lines = z.array(z.string().max(2000)).max(100);
const packCompact = compactFlag.describe("each memory change as {id, type, age, headline, snippet?} and each claimed task as {id, title, status, priority, blocked, assigned_to, age}");

const sessionHandoff = defineOperation({
  name: "session_handoff",
  title: "Hand off at the end of a session",
  description:
    "Save where you stopped (summary, tasks in progress, next steps, entries that matter) for your next session_start.",
  kind: "create",
  http: { method: "POST", path: "/sessions/handoff" },
  input: z.strictObject({
    agent_id: agentId.optional().describe("if given, must be you"),
    host: z.string().max(200).optional().describe("where the session ran"),
    summary: z.string().min(1).max(20_000),
    in_progress: lines.optional().describe("task ids"),
    next_steps: lines.optional(),
    memory_refs: lines.optional().describe("memory entry ids"),
  }),
  output: handoff,
  errors: ["FORBIDDEN"],
  handle({ services, caller }, input) {
    return services.sessions.save(caller, input);
  },
});

const sessionStart = defineOperation({
  name: "session_start",
  title: "Start a session",
  description:
    "Start every session here: your last handoff, memory changed since you last looked, unread messages, your claimed tasks and the directives. Moves your memory cursor unless `peek`.",
  kind: "read",
  http: { method: "GET", path: "/sessions/handoff" },
  input: z.strictObject({ peek: z.boolean().optional().describe("do not move the memory cursor"), max_tokens: maxTokens, compact: packCompact }),
  output: z.union([contextPack, compactContextPack]),
  handle({ services, caller }, input) {
    return services.sessions.load(caller, caller.agentId, { peek: input.peek ?? false, maxTokens: input.max_tokens, compact: input.compact });
  },
});

const sessionLoadAgent = defineOperation({
  name: "session_load_agent",
  title: "An agent's session pack",
  description:
    "The context pack of a given agent: yourself (as session_start), or any agent for an owner, which shows only " +
    "what the owner may see and never moves that agent's cursor.",
  kind: "read",
  http: { method: "GET", path: "/sessions/handoff/:agent_id" },
  input: z.strictObject({ agent_id: agentId, peek: z.boolean().optional().describe("for yourself: do not move the memory cursor"), max_tokens: maxTokens, compact: packCompact }),
  output: z.union([contextPack, compactContextPack]),
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, input) {
    const peek = input.agent_id !== caller.agentId || (input.peek ?? false);
    return services.sessions.load(caller, input.agent_id, { peek, maxTokens: input.max_tokens, compact: input.compact });
  },
});

const sessionLatest = defineOperation({
  name: "session_latest",
  title: "Every agent's last handoff",
  description: "The last handoff of each agent, newest first: where every session stopped, in one list. Owner only.",
  kind: "list",
  roles: ["owner"],
  http: { method: "GET", path: "/sessions/handoffs" },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: handoff,
  handle({ services }, input) {
    return services.sessions.latest(input.cursor, input.limit);
  },
});

export const sessionOperations = [sessionHandoff, sessionStart, sessionLoadAgent, sessionLatest];
