import { z } from "zod";
import { compileUnit, MAX_PRUNE_PATHS, MAX_UNITS_PER_COMPILE } from "./compile.js";
import { projectId } from "./fields.js";

// What a compile sends: \`compile_run\`'s input and what \`CompileService.run\` takes, declared once.

/** The project a compile's code belongs to. */
export const compileProject = projectId.nullable().optional().describe("default your current project; null: global code");

/** A path whose anchors a compile may remove; a trailing slash names the same directory. */
const prunePath = z
  .string()
  .max(1024)
  .transform((path) => path.replace(/\/+$/, ""))
  .pipe(z.string().min(1, "must name a path"));

export const compileRequest = z.strictObject({
  project: compileProject,
  commit: z.string().min(1).max(200).regex(/^\S+$/, "must be one word").optional().describe("the commit the units were read at"),
  units: z.array(compileUnit).max(MAX_UNITS_PER_COMPILE),
  prune_paths: z.array(prunePath).max(MAX_PRUNE_PATHS).optional().describe("files (or directories) whose anchors the units replace"),
});
export type CompileRequest = z.output<typeof compileRequest>;
