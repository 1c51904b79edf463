import { z } from "zod";
import { defineOperation } from "./operation.js";
import { checkItem, compileAnchor, compileResult, MAX_UNITS_PER_CHECK, unitPath, unitSha } from "../src/wire/compile.js";
import { memoryEntry } from "../src/wire/memory.js";
import { cursorParam } from "./schemas.js";
import { compileProject as project, compileRequest } from "../src/wire/compile-inputs.js";
import { limitParam, projectId } from "../src/wire/fields.js";


const compileRun = defineOperation({
  name: "compile_run",
  title: "Compile code into memory",
  description:
    "Record code as memory: for each unit (a module, function, class… with the sha of its text and a generated " +
    "description, never the source) one anchor and one compiled entry, written again only when the sha changed. " +
    "Entries grounded by changed code, and compiled entries that depend on it, are marked stale. Anchors under " +
    "`prune_paths` that the units do not name are removed with their entries. `cairn compile` sends these. A unit's " +
    "description and signature are stored as sent: they are the client's claim about its code, never checked against it. " +
    "Refused for a while past your hourly compile quota or while many of your entries wait to be embedded (the refusal " +
    "says how long to wait), and refused when the project holds its most entries.",
  kind: "action",
  destructive: true,
  http: { method: "POST", path: "/compile" },
  input: compileRequest,
  output: compileResult,
  errors: ["FORBIDDEN", "NOT_FOUND", "CONFLICT", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.compile.run(caller, input);
  },
});

const compileCheck = defineOperation({
  name: "compile_check",
  title: "Check code against its anchors",
  // Listed in the standard tool set, so every word here is in every session's prompt.
  description:
    "For each piece of code: fresh, stale (its sha changed) or unknown (never compiled), with its compiled entry's id.",
  kind: "read",
  http: { method: "POST", path: "/compile/check" },
  input: z.strictObject({
    project: projectId.nullable().optional(),
    units: z.array(z.strictObject({ path: z.string().min(1).max(1024), symbol: z.string().max(512), sha: unitSha })).max(MAX_UNITS_PER_CHECK),
  }),
  output: z.array(checkItem),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.compile.check(caller, input);
  },
});

const compileAnchors = defineOperation({
  name: "compile_anchors",
  title: "List compiled code",
  description: "The anchors of a project's compiled code, by path then symbol: each with its sha, lines and compiled entry.",
  kind: "list",
  http: { method: "GET", path: "/compile/anchors" },
  input: z.strictObject({
    project,
    path: unitPath.optional().describe("one file's anchors"),
    path_prefix: z.string().min(1).max(1024).optional().describe("anchors whose path starts with this text"),
    limit: limitParam(500, 100),
    cursor: cursorParam,
  }),
  output: compileAnchor,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.compile.anchors(caller, input);
  },
});

const compileStale = defineOperation({
  name: "compile_stale",
  title: "Entries about changed code",
  description:
    "Entries whose code changed since they were written (compile marked them stale), the longest stale first, each " +
    "with `stale_reason`: which code, from which sha to which. Update one (as its author) once it holds again.",
  kind: "list",
  http: { method: "GET", path: "/compile/stale" },
  input: z.strictObject({ project, limit: limitParam(500, 50), cursor: cursorParam }),
  output: memoryEntry,
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    return services.compile.stale(caller, input);
  },
});

export const compileOperations = [compileRun, compileCheck, compileAnchors, compileStale];
