import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import { Readable, Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import { parseArgs } from "node:util";
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

interface ImportAnswer {
  imported: Record<"projects" | "entries" | "edges" | "decisions" | "tasks", number>;
  skipped: number;
  errors: { line: number; detail: string }[];
  dry_run: boolean;
}

/**
 * Sends a file in requests of whole lines, each within MAX_BODY_BYTES, one after another, so any
 * size of file imports. A request the server still finds too large is halved and sent again.
 */
class ChunkedImport {
  readonly total: ImportAnswer;

  constructor(
    private readonly client: OwnerClient,
    private readonly query: string,
    dryRun: boolean,
  ) {
    this.total = { imported: { projects: 0, entries: 0, edges: 0, decisions: 0, tasks: 0 }, skipped: 0, errors: [], dry_run: dryRun };
  }

  /** `lines` begin at line number `first` of the file. */
  async send(lines: string[], first: number): Promise<void> {
    if (lines.length === 0) return;
    const response = await this.client.request(`/admin/import${this.query}`, { method: "POST", body: lines.join("\n"), contentType: JSON_LINES });
    if (response.status === 413) {
      await response.body?.cancel();
      if (lines.length === 1) {
        this.total.errors.push({ line: first, detail: "line is larger than the server accepts (MAX_BODY_BYTES)" });
        return;
      }
      const half = Math.ceil(lines.length / 2);
      await this.send(lines.slice(0, half), first);
      await this.send(lines.slice(half), first + half);
      return;
    }
    const answer = (await (await this.client.check(response)).json()) as ImportAnswer;
    for (const key of Object.keys(this.total.imported) as (keyof ImportAnswer["imported"])[]) this.total.imported[key] += answer.imported[key];
    this.total.skipped += answer.skipped;
    for (const error of answer.errors) this.total.errors.push({ line: error.line + first - 1, detail: error.detail });
  }
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
  const importer = new ChunkedImport(client, query.size > 0 ? `?${query.toString()}` : "", values["dry-run"]);

  let input: NodeJS.ReadableStream = process.stdin;
  if (file !== "-") {
    const stream = createReadStream(file);
    await new Promise<void>((resolve, reject) => {
      stream.once("error", (error: Error) => reject(new UsageError(`cannot read ${file}: ${error.message}`)));
      stream.once("open", () => resolve());
    });
    input = stream;
  }
  // Each line is counted with its separator, so a request of whole lines stays within the limit.
  const budget = config.MAX_BODY_BYTES;
  let chunk: string[] = [];
  let bytes = 0;
  let first = 1;
  let number = 0;
  for await (const read of createInterface({ input, crlfDelay: Infinity })) {
    number++;
    let line = read;
    if (Buffer.byteLength(line, "utf8") + 1 > budget) {
      importer.total.errors.push({ line: number, detail: `line is larger than MAX_BODY_BYTES (${budget} bytes)` });
      // An empty line in its place keeps the numbering of the lines after it.
      line = "";
    }
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (bytes + size > budget) {
      await importer.send(chunk, first);
      first += chunk.length;
      chunk = [];
      bytes = 0;
    }
    chunk.push(line);
    bytes += size;
  }
  await importer.send(chunk, first);

  const result = importer.total;
  result.errors.sort((a, b) => a.line - b.line);
  if (values.json) {
    print(JSON.stringify(result, null, 2));
  } else {
    const { imported } = result;
    print(
      `${result.dry_run ? "would import" : "imported"} ${counted(imported.projects, "project")}, ${counted(imported.entries, "entry", "entries")}, ` +
        `${counted(imported.edges, "edge")}, ${counted(imported.decisions, "decision")}, ${counted(imported.tasks, "task")}; ` +
        `skipped ${result.skipped} that exist; ${counted(result.errors.length, "error")}${result.dry_run ? " (dry run: nothing was written)" : ""}`,
    );
    for (const error of result.errors) printError(`line ${error.line}: ${error.detail}`);
  }
  return result.errors.length === 0;
}
