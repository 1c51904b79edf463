import { z } from "zod";
import { isLineSource, type LineSource } from "../src/core/line-source.js";
import { importResult } from "../src/wire/transfer.js";
import { defineOperation, reply } from "./operation.js";
import { projectId } from "../src/wire/fields.js";
import { timestampInput } from "../src/wire/timestamp.js";

/** The media type of exports and import bodies: one JSON object per line. */
const JSON_LINES = "application/x-ndjson";

const LINE_KINDS =
  "Lines, each one JSON object with a `kind`, in this order: a `header` (format, instance, url, server_version, " +
  "exported_at, project, since); a `project` line per project (id, name, description, owner, created_at, members); " +
  "an `agent` line per agent (agent_id, display_name, role, created_at, last_seen_at, current_project, deleted_at; " +
  "never a key); an `entry` line per shared memory entry (every field of the entry, no embedding; a compiled entry " +
  "with its `anchor`); an `edge` line per graph edge; a `decision` line per decision (a superseded decision before " +
  "the one that superseded it); a `blueprint` line per blueprint version; a `task` line per task (every field " +
  "except `blocked`, plus `reserved`, its `comments` and its recorded `outcomes`; dependencies before the tasks " +
  "that need them); a `run` line per blueprint run (its nodes name their tasks); a `message` line per message (with " +
  "each recipient's read state); a `handoff` line per session handoff.";

/** A body that is a stream of text: what the export hands its transport instead of JSON. */
const lineStream = z
  .custom<AsyncIterable<string>>((value) => typeof (value as AsyncIterable<string> | null)?.[Symbol.asyncIterator] === "function")
  .meta({ type: "string", contentMediaType: JSON_LINES, description: LINE_KINDS });

/** The import's body: kept in a file as it arrives (REST), or a string. */
const importBody = z.custom<string | LineSource>((value) => typeof value === "string" || isLineSource(value), "expected the body's text");

const adminExport = defineOperation({
  name: "admin_export",
  title: "Export as JSON Lines",
  description:
    "Owner only: everything a team shares, as JSON Lines, for a backup you can read or a move to another server: " +
    "projects and their members, agents (never keys), memory entries (compiled ones with their anchors), graph " +
    "edges, decisions, blueprints, tasks, blueprint runs, messages with their read state, and handoffs. Private " +
    "entries are never exported, nor edges touching one. `project` keeps one project's records (empty: only global " +
    "ones, agents and handoffs included); `since` keeps records changed after that time. The answer is streamed as it " +
    "is read, so it may be of any size.",
  kind: "read",
  roles: ["owner"],
  http: {
    method: "GET",
    path: "/admin/export",
    contentType: JSON_LINES,
    responseHeaders: { "Content-Disposition": "a file name for the export: cairn-export-<time>.jsonl" },
  },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("only this project's records; empty or null: only global ones"),
    since: timestampInput.optional().describe("only records changed after this time"),
  }),
  output: lineStream,
  errors: ["NOT_FOUND", "FORBIDDEN"],
  async handle({ services, caller }, input) {
    const lines = await services.exporter.export(caller, { project: input.project, since: input.since });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return reply(lines, { headers: { "Content-Disposition": `attachment; filename="cairn-export-${stamp}.jsonl"` } });
  },
});

const adminImport = defineOperation({
  name: "admin_import",
  title: "Import JSON Lines",
  description:
    "Owner only: re-creates the records of an export, keeping their ids, authors, versions and times, and " +
    "embedding entries again with this server's model. A record whose id exists here is skipped; a line that " +
    "cannot be imported is reported with its number and the reason, and the other lines still are (each line " +
    "whole or not at all, in the order of the file). Imported agents have no key until an owner gives them one. It " +
    "also reads the MCP reference memory server's memory.json: each entity becomes a memory entry of its name, type " +
    "and observations in `project` (default: your current project; empty: global), each relation a relates_to edge " +
    "whose note is the relation type. `dry_run` runs the same import over the whole body and rolls it back: its " +
    "answer is the real import's. The body may be of any size; each line is at most MAX_BODY_BYTES.",
  kind: "action",
  roles: ["owner"],
  http: { method: "POST", path: "/admin/import", spooledBody: true },
  input: z.strictObject({
    dry_run: z.boolean().default(false).describe("import every line and roll it all back: the answer is what the import would do"),
    project: projectId.nullable().optional().describe("where memory.json entities go; empty or null: global; default your current project"),
    body: importBody.meta({
      type: "string",
      contentMediaType: JSON_LINES,
      description: `the file to import: an export, or a memory.json of {"type":"entity",name,entityType,observations} and {"type":"relation",from,to,relationType} lines. ${LINE_KINDS}`,
    }),
  }),
  output: importResult,
  errors: ["NOT_FOUND", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.importer.import(caller, input.body, { dryRun: input.dry_run, project: input.project });
  },
});

export const adminOperations = [adminExport, adminImport];
