import { z } from "zod";

// What an import (admin_import) reports. The export is a stream of JSON Lines, described in tools/admin.ts.

const importCounts = z.object({
  projects: z.number().int().describe("projects, with their members"),
  agents: z.number().int().describe("agents, without keys: an owner gives each a key"),
  entries: z.number().int().describe("memory entries, a compiled entry with its anchor"),
  edges: z.number().int(),
  decisions: z.number().int(),
  blueprints: z.number().int().describe("blueprint versions"),
  tasks: z.number().int(),
  runs: z.number().int().describe("blueprint runs, with their nodes"),
  messages: z.number().int().describe("messages, with each recipient's read state"),
  handoffs: z.number().int().describe("session handoffs"),
});
export type ImportCounts = z.output<typeof importCounts>;

/** Nothing imported yet: every kind at zero. */
export const noImportCounts = (): ImportCounts => ({
  projects: 0,
  agents: 0,
  entries: 0,
  edges: 0,
  decisions: 0,
  blueprints: 0,
  tasks: 0,
  runs: 0,
  messages: 0,
  handoffs: 0,
});

export const importResult = z
  .object({
    imported: importCounts.describe("records created (with a dry run: that would be created)"),
    skipped: z.number().int().describe("lines whose record exists here already"),
    errors: z.array(z.object({ line: z.number().int().describe("1-based line number in the body"), detail: z.string() })),
    dry_run: z.boolean(),
  })
  .meta({ id: "ImportResult" });
export type ImportResult = z.output<typeof importResult>;
