import { z } from "zod";

// What an import (admin_import) reports. The export is a stream of JSON Lines, described in tools/admin.ts.

export const importCounts = z.object({
  projects: z.number().int(),
  entries: z.number().int(),
  edges: z.number().int(),
  decisions: z.number().int(),
  tasks: z.number().int(),
});
export type ImportCounts = z.output<typeof importCounts>;

export const importResult = z
  .object({
    imported: importCounts.describe("records created (with a dry run: that would be created)"),
    skipped: z.number().int().describe("lines whose record exists here already"),
    errors: z.array(z.object({ line: z.number().int().describe("1-based line number in the body"), detail: z.string() })),
    dry_run: z.boolean(),
  })
  .meta({ id: "ImportResult" });
export type ImportResult = z.output<typeof importResult>;
