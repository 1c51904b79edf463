import { z } from "zod";
import { defineOperation } from "./operation.js";
import { project, projectClearCounts, projectMember } from "../src/wire/projects.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";

const projectParam = { id: projectId };

const projectCreate = defineOperation({
  name: "project_create",
  title: "Create a project",
  description:
    "Create a project and join it (it becomes your current project). Its id is the lower-cased slug of the name. " +
    "Memory, tasks and messages of a project are visible to its members only.",
  kind: "create",
  http: { method: "POST", path: "/projects" },
  input: z.strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(2000).optional(),
  }),
  output: project,
  errors: ["CONFLICT"],
  handle({ services, caller }, input) {
    return services.projects.create(caller, input);
  },
});

const projectList = defineOperation({
  name: "project_list",
  title: "List projects",
  description: "Every project, by id. Any agent may join one.",
  kind: "list",
  http: { method: "GET", path: "/projects" },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: project,
  handle({ services }, input) {
    return services.projects.list(input.cursor, input.limit);
  },
});

const projectMine = defineOperation({
  name: "project_mine",
  title: "Your projects",
  description: "The projects you are a member of.",
  kind: "list",
  http: { method: "GET", path: "/projects/mine" },
  input: z.strictObject({ limit: limitParam(500, 50), cursor: cursorParam }),
  output: project,
  handle({ services, caller }, input) {
    return services.projects.list(input.cursor, input.limit, caller.agentId);
  },
});

const projectJoin = defineOperation({
  name: "project_join",
  title: "Join a project",
  description:
    "Join a project; it becomes your current one, where writes naming no project go.",
  kind: "action",
  http: { method: "POST", path: "/projects/:id/join" },
  input: z.strictObject(projectParam),
  output: project,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.projects.join(caller, input.id);
  },
});

const projectLeave = defineOperation({
  name: "project_leave",
  title: "Leave a project",
  description: "Leave a project; its memory, tasks and messages are no longer visible to you.",
  kind: "delete",
  http: { method: "DELETE", path: "/projects/:id/leave" },
  input: z.strictObject(projectParam),
  output: undefined,
  errors: ["NOT_FOUND"],
  async handle({ services, caller }, input) {
    await services.projects.leave(caller, input.id);
  },
});

const projectMembers = defineOperation({
  name: "project_members",
  title: "Who is in a project",
  description:
    "The agents that joined the project, by id. Only its members (and the owner and archivist roles, which see every project without joining) may ask.",
  kind: "read",
  http: { method: "GET", path: "/projects/:id/members" },
  input: z.strictObject(projectParam),
  output: z.array(projectMember),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.projects.members(caller, input.id);
  },
});

const projectClear = defineOperation({
  name: "project_clear",
  title: "Clear a project",
  description:
    "Project owner only: soft-delete the project's shared memory (each with a memory.deleted event), and delete " +
    "its tasks, messages and decisions, as chosen. Returns how many of each.",
  kind: "delete",
  http: { method: "POST", path: "/projects/:id/clear", status: 200 },
  input: z.strictObject({
    ...projectParam,
    memory: z.boolean().optional(),
    tasks: z.boolean().optional(),
    messages: z.boolean().optional(),
    decisions: z.boolean().optional().describe("decisions are append-only: only a clear that asks removes them"),
  }),
  output: projectClearCounts,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  handle({ services, caller }, { id, ...what }) {
    return services.projects.clear(caller, id, what);
  },
});

export const projectOperations = [projectCreate, projectList, projectMine, projectJoin, projectLeave, projectMembers, projectClear];
