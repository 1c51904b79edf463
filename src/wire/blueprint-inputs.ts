import { z } from "zod";
import { projectId, storedCount } from "./fields.js";

// What a blueprint is started with: \`blueprint_instantiate\`'s input beside the blueprint's name,
// and what \`RunService.instantiate\` takes, declared once.

export const blueprintName = z.string().min(1).max(64);

export const instantiation = z.strictObject({
  project: projectId.nullable().optional().describe("default: your current project"),
  params: z.record(z.string(), z.unknown()).default({}),
  version: storedCount(1).optional().describe("default: the current version"),
  dry_run: z.boolean().optional(),
});
export type Instantiation = z.output<typeof instantiation>;
