import type { Config } from "../core/config.js";
import { AppError, forbidden, notFound } from "../core/errors.js";
import type { EventBus } from "../events/bus.js";
import { ConstraintViolation, type Store, type Tx } from "../store/store.js";
import type { Caller } from "./caller.js";
import { entityContent, entityEntryId } from "./import-memory-json.js";
import { ImportedRecords, type Applied, type ImportContext } from "./import-records.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import type { MemoryWrites } from "./memory-writes.js";
import { LineRefusal, parseLine, type ParsedLine } from "./transfer-lines.js";
import type { ImportResult } from "../wire/transfer.js";

export interface ImportOptions {
  dryRun: boolean;
  /** Where memory.json entities go: undefined is the caller's current project, null global. */
  project?: string | null | undefined;
}

interface Numbered {
  number: number;
  parsed: ParsedLine;
}

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

/**
 * Re-creates exported records with their ids, authors, versions and times, and turns a memory.json
 * knowledge graph into entries and edges. Each line is written whole or not at all, with its
 * event in the same transaction; a line that cannot be imported is reported with its number and
 * the rest go on. A dry run does all of it inside one transaction and rolls it back.
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

  async import(caller: Caller, text: string, options: ImportOptions): Promise<ImportResult> {
    if (caller.role !== "owner") throw forbidden("only the owner may import");
    const { reader } = this.store;
    const project = options.project === undefined ? ((await this.store.agents.get(reader, caller.agentId))?.current_project ?? null) : options.project;
    if (project !== null && !(await this.store.projects.byId(reader, project))) throw notFound("project");
    const context: ImportContext = { caller, project };
    const result: ImportResult = { imported: { projects: 0, entries: 0, edges: 0, decisions: 0, tasks: 0 }, skipped: 0, errors: [], dry_run: options.dryRun };
    const lines: Numbered[] = [];
    text
      .replace(/^\uFEFF/, "")
      .split("\n")
      .forEach((raw, index) => {
        if (raw.trim() === "") return;
        try {
          lines.push({ number: index + 1, parsed: parseLine(raw) });
        } catch (error) {
          if (!(error instanceof LineRefusal)) throw error;
          result.errors.push({ line: index + 1, detail: error.detail });
        }
      });
    const outcomes = options.dryRun ? await this.tryAll(context, lines) : await this.writeAll(context, lines);
    lines.forEach((line, index) => {
      const outcome = outcomes[index] as PromiseSettledResult<Applied>;
      if (outcome.status === "fulfilled") {
        if (outcome.value === "skipped") result.skipped++;
        else if (outcome.value !== "nothing") result.imported[outcome.value]++;
        return;
      }
      const detail = refusalOf(outcome.reason);
      if (detail === null) throw outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
      result.errors.push({ line: line.number, detail });
    });
    result.errors.sort((a, b) => a.line - b.line);
    return result;
  }

  /** The dry run: every line in one transaction, each in its own savepoint, all rolled back at the end. */
  private async tryAll(context: ImportContext, lines: Numbered[]): Promise<PromiseSettledResult<Applied>[]> {
    let outcomes: PromiseSettledResult<Applied>[] = [];
    try {
      await this.store.transaction(async (tx) => {
        outcomes = await this.applyInOrder(tx, context, lines, new Map());
        throw new DryRunRollback("dry run");
      });
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    return outcomes;
  }

  /**
   * A transaction per batch, each line in a savepoint of its own, in the order of the file: a line
   * may name what an earlier one created (its project, an entry, a dependency), and on a backend
   * whose transactions overlap, lines in transactions of their own would race each other.
   */
  private async writeAll(context: ImportContext, lines: Numbered[]): Promise<PromiseSettledResult<Applied>[]> {
    const outcomes: PromiseSettledResult<Applied>[] = [];
    for (let start = 0; start < lines.length; start += BATCH) {
      const batch = lines.slice(start, start + BATCH);
      const vectors = await this.embedNew(context, batch);
      outcomes.push(...(await this.store.transaction((tx) => this.applyInOrder(tx, context, batch, vectors))));
    }
    return outcomes;
  }

  private async applyInOrder(tx: Tx, context: ImportContext, lines: Numbered[], vectors: Map<Numbered, Float32Array>): Promise<PromiseSettledResult<Applied>[]> {
    const outcomes: PromiseSettledResult<Applied>[] = [];
    for (const line of lines) {
      try {
        outcomes.push({ status: "fulfilled", value: await tx.savepoint((sp) => this.records.apply(sp, context, line.parsed, vectors.get(line) ?? null)) });
      } catch (error) {
        outcomes.push({ status: "rejected", reason: error });
      }
    }
    return outcomes;
  }

  /** Vectors for the batch's new entries, computed before the write (embedding is slow and async). */
  private async embedNew(context: ImportContext, batch: Numbered[]): Promise<Map<Numbered, Float32Array>> {
    const wanted: [Numbered, string][] = [];
    const taken = (id: string): Promise<boolean> => this.store.transfer.memoryIdTaken(this.store.reader, id);
    for (const line of batch) {
      const { parsed } = line;
      if (parsed.kind === "entry" && parsed.line.scope === "project" && parsed.line.type !== "compiled" && !(await taken(parsed.line.id))) wanted.push([line, parsed.line.content]);
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
