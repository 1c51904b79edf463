import { z } from "zod";
import { defineOperation, reply } from "./operation.js";
import { blueprint, blueprintDocument } from "../src/wire/blueprints.js";
import { blueprintName, instantiation } from "../src/wire/blueprint-inputs.js";
import { blueprintRun, runPlan, runStatus } from "../src/wire/blueprint-runs.js";
import { cursorParam } from "./schemas.js";
import { limitParam, projectId } from "../src/wire/fields.js";

const blueprintSave = defineOperation({
  name: "blueprint_save",
  title: "Save a blueprint",
  description:
    "Save a named plan: a graph of task templates (`nodes` with `needs`), with `params`, fan-out over a list " +
    "(`foreach`), output contracts (`output_schema`, `done_check`), gates and failure policies. The same name " +
    "again saves a new version; the same document again returns the current one. Every problem of the document " +
    "is reported at once, each with its path.",
  kind: "create",
  http: { method: "POST", path: "/blueprints", otherStatuses: [{ status: 200, description: "an identical document: the current version" }] },
  input: blueprintDocument,
  output: blueprint,
  errors: ["FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
  async handle({ services, caller }, input) {
    const { blueprint: saved, created } = await services.blueprints.save(caller, input);
    return created ? saved : reply(saved, { status: 200 });
  },
});

const blueprintList = defineOperation({
  name: "blueprint_list",
  title: "List blueprints",
  description: "The current version of each blueprint you can see, by project then name.",
  kind: "list",
  http: { method: "GET", path: "/blueprints" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("only this project's; null (or empty) for global ones"),
    name: z.string().min(1).max(64).optional(),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: blueprint,
  handle({ services, caller }, input) {
    return services.blueprints.list(caller, input);
  },
});

const blueprintGet = defineOperation({
  name: "blueprint_get",
  title: "A blueprint's versions",
  description: "Every version of one blueprint, newest first. `project` omitted: your current project; null (or empty): global.",
  kind: "read",
  http: { method: "GET", path: "/blueprints/:name" },
  input: z.strictObject({ name: z.string().min(1).max(64), project: projectId.nullable().optional() }),
  output: z.array(blueprint),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.blueprints.versions(caller, input.name, input.project);
  },
});

const runId = z.uuid();

const blueprintInstantiate = defineOperation({
  name: "blueprint_instantiate",
  title: "Run a blueprint",
  description:
    "Turn a blueprint into tasks, each waiting on the tasks it needs. `dry_run`: show them, create nothing.",
  kind: "create",
  http: { method: "POST", path: "/blueprints/:name/instantiate", otherStatuses: [{ status: 200, description: "dry_run: the tasks it would create" }] },
  input: z.strictObject({ name: blueprintName, ...instantiation.shape }),
  output: z.union([blueprintRun, runPlan]),
  errors: ["FORBIDDEN", "NOT_FOUND"],
  async handle({ services, caller }, { name, ...input }) {
    const result = await services.runs.instantiate(caller, name, input);
    return "run" in result ? result.run : reply(result.plan, { status: 200 });
  },
});

const blueprintRunList = defineOperation({
  name: "blueprint_run_list",
  title: "List blueprint runs",
  description: "Runs you can see, newest first.",
  kind: "list",
  http: { method: "GET", path: "/blueprints/runs" },
  input: z.strictObject({
    blueprint: blueprintName.optional().describe("only runs of this blueprint"),
    project: projectId.nullable().optional(),
    status: runStatus.optional(),
    limit: limitParam(100, 20),
    cursor: cursorParam,
  }),
  output: blueprintRun,
  handle({ services, caller }, input) {
    return services.runs.list(caller, input);
  },
});

const blueprintRunGet = defineOperation({
  name: "blueprint_run_get",
  title: "A blueprint run",
  description: "A run's status and each node's task, status, item and attempt.",
  kind: "read",
  http: { method: "GET", path: "/blueprints/runs/:run_id" },
  input: z.strictObject({ run_id: runId }),
  output: blueprintRun,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.runs.get(caller, input.run_id);
  },
});

const blueprintRunCancel = defineOperation({
  name: "blueprint_run_cancel",
  title: "Cancel a blueprint run",
  description: "Stop a running run (its creator or an owner): its unfinished tasks fail with the comment `run cancelled`.",
  kind: "update",
  http: { method: "POST", path: "/blueprints/runs/:run_id/cancel" },
  input: z.strictObject({ run_id: runId }),
  output: blueprintRun,
  errors: ["FORBIDDEN", "NOT_FOUND", "CONFLICT"],
  handle({ services, caller }, input) {
    return services.runs.cancel(caller, input.run_id);
  },
});

// The run routes come before `/blueprints/:name`, whose `runs` is a reserved name.
export const blueprintOperations = [blueprintSave, blueprintList, blueprintRunList, blueprintRunGet, blueprintRunCancel, blueprintInstantiate, blueprintGet];
