import { createReadStream, createWriteStream } from "node:fs";
import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import { parseArgs } from "node:util";
import { splitLines } from "../core/line-source.js";
import { configOrExit } from "./common.js";
import { exportHelp, importHelp } from "./help.js";
import { OwnerClient, ownerIdentity } from "./owner-client.js";
import { print, printError, UsageError } from "./output.js";

const JSON_LINES = "application/x-ndjson";

/** `cairn export`: the server's export, streamed to standard output or to `--output`. */
export async function exportCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { project: { type: "string" }, since: { type: "string" }, output: { type: "string", short: "o" } },
  });
  if (positionals.length > 0) throw new UsageError(exportHelp);
  const client = new OwnerClient(ownerIdentity(configOrExit()));
  const query = new URLSearchParams();
  if (values.project !== undefined) query.set("project", values.project);
  if (values.since !== undefined) query.set("since", values.since);
  const response = await client.check(await client.request(`/admin/export${query.size > 0 ? `?${query.toString()}` : ""}`));
  if (!response.body) throw new Error("the server sent no export");
  let lines = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const byte of chunk) if (byte === 0x0a) lines++;
      done(null, chunk);
    },
  });
  // The export holds everything shared: a file of it is as private as the database.
  const target: Writable = values.output === undefined ? process.stdout : createWriteStream(values.output, { mode: 0o600 });
  try {
    await pipeline(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), counter, target);
  } catch (error) {
    // A reader that stops early (`cairn export | head`) is not a failure of the export.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw new Error(`the export stopped before its end: ${error instanceof Error ? error.message : String(error)}`);
  }
  printError(`exported ${lines} lines${values.output === undefined ? "" : ` to ${values.output}`}`);
}

/** The kinds of record an import counts, in the order of an export file. */
const KINDS = [
  ["projects", "project", "projects"],
  ["agents", "agent", "agents"],
  ["entries", "entry", "entries"],
  ["edges", "edge", "edges"],
  ["decisions", "decision", "decisions"],
  ["blueprints", "blueprint version", "blueprint versions"],
  ["tasks", "task", "tasks"],
  ["runs", "run", "runs"],
  ["messages", "message", "messages"],
  ["handoffs", "handoff", "handoffs"],
] as const;

interface ImportAnswer {
  imported: Partial<Record<(typeof KINDS)[number][0], number>>;
  skipped: number;
  errors: { line: number; detail: string }[];
  dry_run: boolean;
}

/** Text is sent in pieces of about this size: one write per line would cost a chunk each. */
const PIECE = 64 * 1024;

/**
 * The file's lines as the request body, in pieces. A line longer than `budget` (MAX_BODY_BYTES,
 * which the server holds each line to) is reported in `errors` and sent as an empty line, so the
 * server's line numbers stay the file's and the other lines are imported.
 */
async function* bodyOf(input: AsyncIterable<Uint8Array>, budget: number, errors: ImportAnswer["errors"]): AsyncGenerator<string> {
  let piece = "";
  let number = 0;
  for await (const line of splitLines(input)) {
    number++;
    if (Buffer.byteLength(line, "utf8") > budget) {
      errors.push({ line: number, detail: `line is larger than MAX_BODY_BYTES (${budget} bytes)` });
      piece += "\n";
    } else {
      piece += `${line}\n`;
    }
    if (piece.length >= PIECE) {
      yield piece;
      piece = "";
    }
  }
  if (piece !== "") yield piece;
}

const counted = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** `cairn import FILE`: a Cairn export or a memory.json, through the server's import. */
export async function importCommand(args: string[]): Promise<boolean> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { "dry-run": { type: "boolean", default: false }, project: { type: "string" }, json: { type: "boolean", default: false } },
  });
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError(importHelp);
  const config = configOrExit();
  const client = new OwnerClient(ownerIdentity(config));
  const query = new URLSearchParams();
  if (values["dry-run"]) query.set("dry_run", "true");
  if (values.project !== undefined) query.set("project", values.project);

  let input: AsyncIterable<Uint8Array> = process.stdin;
  if (file !== "-") {
    const stream = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      stream.once("error", (error: Error) => reject(new UsageError(`cannot read ${file}: ${error.message}`)));
      stream.once("open", () => resolve());
    });
    input = stream;
  }
  // One request for the whole file: a dry run must see every line to report what the import would.
  const refused: ImportAnswer["errors"] = [];
  const path = `/admin/import${query.size > 0 ? `?${query.toString()}` : ""}`;
  const answer = (await (await client.check(await client.upload(path, bodyOf(input, config.MAX_BODY_BYTES, refused), JSON_LINES))).json()) as ImportAnswer;
  const result: ImportAnswer = { ...answer, errors: [...answer.errors, ...refused] };
  result.errors.sort((a, b) => a.line - b.line);
  if (values.json) {
    print(JSON.stringify(result, null, 2));
  } else {
    const counts = KINDS.map(([key, one, many]) => counted(result.imported[key] ?? 0, one, many)).join(", ");
    print(
      `${result.dry_run ? "would import" : "imported"} ${counts}; ` +
        `skipped ${result.skipped} that exist; ${counted(result.errors.length, "error")}${result.dry_run ? " (dry run: nothing was written)" : ""}`,
    );
    for (const error of result.errors) printError(`line ${error.line}: ${error.detail}`);
  }
  return result.errors.length === 0;
}
