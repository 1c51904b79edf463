import { z } from "zod";
import { defineOperation, reply } from "./operation.js";
import { blueprint, blueprintDocument } from "../src/wire/blueprints.js";
import { cursorParam, limitParam, projectId } from "./schemas.js";

export const blueprintSave = defineOperation({
  name: "blueprint_save",
  title: "Save a blueprint",
  description:
    "Save a named plan: a graph of task templates (`nodes` with `needs`), with `params`, fan-out over a list " +
    "(`foreach`), output contracts (`output_schema`, `done_check`), gates and failure policies. The same name " +
    "again saves a new version; the same document again returns the current one. Every problem of the document " +
    "is reported at once, each with its path.",
  kind: "create",
  access: "agent",
  http: { method: "POST", path: "/blueprints", otherStatuses: [{ status: 200, description: "an identical document: the current version" }] },
  input: blueprintDocument,
  output: blueprint,
  errors: ["FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
  async handle({ services, caller }, input) {
    const { blueprint: saved, created } = await services.blueprints.save(caller, input);
    return created ? saved : reply(saved, { status: 200 });
  },
});

export const blueprintList = defineOperation({
  name: "blueprint_list",
  title: "List blueprints",
  description: "The current version of each blueprint you can see, by project then name.",
  kind: "list",
  access: "agent",
  http: { method: "GET", path: "/blueprints" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("only this project's; null (or empty) for global ones"),
    name: z.string().min(1).max(64).optional(),
    limit: limitParam(200, 50),
    cursor: cursorParam,
  }),
  output: blueprint,
  handle({ services, caller }, input) {
    return services.blueprints.list(caller, input);
  },
});

export const blueprintGet = defineOperation({
  name: "blueprint_get",
  title: "A blueprint's versions",
  description: "Every version of one blueprint, newest first. `project` omitted: your current project; null (or empty): global.",
  kind: "read",
  access: "agent",
  http: { method: "GET", path: "/blueprints/:name" },
  input: z.strictObject({ name: z.string().min(1).max(64), project: projectId.nullable().optional() }),
  output: z.array(blueprint),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.blueprints.versions(caller, input.name, input.project);
  },
});

export const blueprintOperations = [blueprintSave, blueprintList, blueprintGet];
