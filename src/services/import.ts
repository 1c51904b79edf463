import type { Config } from "../core/config.js";
import { AppError, forbidden, notFound } from "../core/errors.js";
import { linesOfText, type LineSource } from "../core/line-source.js";
import type { EventBus } from "../events/bus.js";
import { ConstraintViolation, type Store, type Tx } from "../store/store.js";
import type { Caller } from "./caller.js";
import { entityContent, entityEntryId } from "./import-memory-json.js";
import { ImportedRecords, type Applied, type ImportContext } from "./import-records.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import type { MemoryWrites } from "./memory-writes.js";
import { LineRefusal, parseLine, type ParsedLine } from "./transfer-lines.js";
import { noImportCounts, type ImportResult } from "../wire/transfer.js";

export interface ImportOptions {
  dryRun: boolean;
  /** Where memory.json entities go: undefined is the caller's current project, null global. */
  project?: string | null | undefined;
}

/** A line of the body by its number: what it says, or why it cannot be read. */
type Numbered = { number: number; parsed: ParsedLine } | { number: number; refusal: string };
type Readable = Extract<Numbered, { parsed: ParsedLine }>;

// Lines written per transaction: a large body commits in steps instead of holding the writer.
const BATCH = 250;

/** Thrown to roll a dry run's transaction back once every line has been tried. */
class DryRunRollback extends Error {}

/** Why a line failed, or null for a failure that is not the line's fault. */
function refusalOf(error: unknown): string | null {
  if (error instanceof LineRefusal) return error.detail;
  if (error instanceof AppError && error.status < 500) return error.detail;
  if (error instanceof ConstraintViolation) return "conflicts with a record stored here";
  return null;
}

/** The body's lines, numbered from 1 and parsed, BATCH at a time: never more of the body in memory. */
async function* batchesOf(source: LineSource): AsyncGenerator<Numbered[]> {
  let batch: Numbered[] = [];
  let number = 0;
  for await (const raw of source.lines()) {
    number++;
    const text = number === 1 ? raw.replace(/^\uFEFF/, "") : raw;
    if (text.trim() === "") continue;
    try {
      batch.push({ number, parsed: parseLine(text) });
    } catch (error) {
      if (!(error instanceof LineRefusal)) throw error;
      batch.push({ number, refusal: error.detail });
    }
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Adds a batch's outcomes to the answer; a failure that is no line's fault is thrown. */
function tally(result: ImportResult, batch: Numbered[], outcomes: Map<Numbered, PromiseSettledResult<Applied>>): void {
  for (const line of batch) {
    if ("refusal" in line) {
      result.errors.push({ line: line.number, detail: line.refusal });
      continue;
    }
    const outcome = outcomes.get(line) as PromiseSettledResult<Applied>;
    if (outcome.status === "fulfilled") {
      if (outcome.value === "skipped") result.skipped++;
      else if (outcome.value !== "nothing") result.imported[outcome.value]++;
      continue;
    }
    const detail = refusalOf(outcome.reason);
    if (detail === null) throw outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
    result.errors.push({ line: line.number, detail });
  }
}

/**
 * Re-creates exported records with their ids, authors, versions and times, and turns a memory.json
 * knowledge graph into entries and edges. The body is read line by line, in order: a line may name
 * what an earlier one created. Each line is written whole or not at all, with its event in the
 * same transaction; a line that cannot be imported is reported with its number and the rest go
 * on. A dry run runs the very same writes over the whole body inside one transaction and rolls it
 * back, so it reports what the real import would, line for line.
 */
export class ImportService {
  private readonly records: ImportedRecords;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    config: Config,
    private readonly embeddings: MemoryEmbeddings,
    writes: MemoryWrites,
  ) {
    this.records = new ImportedRecords(store, bus, config, writes);
  }

  async import(caller: Caller, body: string | LineSource, options: ImportOptions): Promise<ImportResult> {
    if (caller.role !== "owner") throw forbidden("only the owner may import");
    const { reader } = this.store;
    const project = options.project === undefined ? ((await this.store.agents.get(reader, caller.agentId))?.current_project ?? null) : options.project;
    if (project !== null && !(await this.store.projects.byId(reader, project))) throw notFound("project");
    const context: ImportContext = { caller, project };
    const source = typeof body === "string" ? linesOfText(body) : body;
    const result = options.dryRun ? await this.tryAll(context, source) : await this.writeAll(context, source);
    result.errors.sort((a, b) => a.line - b.line);
    return result;
  }

  private emptyResult(dryRun: boolean): ImportResult {
    return { imported: noImportCounts(), skipped: 0, errors: [], dry_run: dryRun };
  }

  /**
   * The dry run: every line in one transaction, each in its own savepoint, all rolled back at the
   * end. The transaction holds the store's writer while it runs (as one batch of a real import
   * does), and it embeds nothing. Run again from the first line if the store runs it again.
   */
  private async tryAll(context: ImportContext, source: LineSource): Promise<ImportResult> {
    let result = this.emptyResult(true);
    try {
      await this.store.transaction(async (tx) => {
        const attempt = this.emptyResult(true);
        for await (const batch of batchesOf(source)) tally(attempt, batch, await this.applyInOrder(tx, context, batch, new Map()));
        result = attempt;
        throw new DryRunRollback("dry run");
      });
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    return result;
  }

  /**
   * A transaction per batch, each line in a savepoint of its own, in the order of the file: a line
   * may name what an earlier one created (its project, an entry, a dependency), and on a backend
   * whose transactions overlap, lines in transactions of their own would race each other.
   */
  private async writeAll(context: ImportContext, source: LineSource): Promise<ImportResult> {
    const result = this.emptyResult(false);
    for await (const batch of batchesOf(source)) {
      const vectors = await this.embedNew(context, batch);
      tally(result, batch, await this.store.transaction((tx) => this.applyInOrder(tx, context, batch, vectors)));
    }
    return result;
  }

  private async applyInOrder(tx: Tx, context: ImportContext, batch: Numbered[], vectors: Map<Numbered, Float32Array>): Promise<Map<Numbered, PromiseSettledResult<Applied>>> {
    const outcomes = new Map<Numbered, PromiseSettledResult<Applied>>();
    for (const line of batch) {
      if (!("parsed" in line)) continue;
      try {
        outcomes.set(line, { status: "fulfilled", value: await tx.savepoint((sp) => this.records.apply(sp, context, line.parsed, vectors.get(line) ?? null)) });
      } catch (error) {
        outcomes.set(line, { status: "rejected", reason: error });
      }
    }
    return outcomes;
  }

  /** Vectors for the batch's new entries, computed before the write (embedding is slow and async). */
  private async embedNew(context: ImportContext, batch: Numbered[]): Promise<Map<Numbered, Float32Array>> {
    const wanted: [Readable, string][] = [];
    const taken = (id: string): Promise<boolean> => this.store.transfer.memoryIdTaken(this.store.reader, id);
    for (const line of batch) {
      if (!("parsed" in line)) continue;
      const { parsed } = line;
      if (parsed.kind === "entry" && parsed.line.scope === "project" && !(await taken(parsed.line.id))) wanted.push([line, parsed.line.content]);
      if (parsed.kind === "entity" && !(await taken(entityEntryId(context.project, parsed.line.name)))) wanted.push([line, entityContent(parsed.line)]);
    }
    const vectors = await Promise.all(wanted.map(([, content]) => this.embeddings.embedForBulk(content)));
    const found = new Map<Numbered, Float32Array>();
    wanted.forEach(([line], index) => {
      const vector = vectors[index];
      if (vector) found.set(line, vector);
    });
    return found;
  }
}
