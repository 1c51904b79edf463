import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { ListedAnchor } from "../../store/compile.js";
import type { Store } from "../../store/store.js";
import type { CheckItem, CompileAnchor, CompileResult, UnitKind } from "../../wire/compile.js";
import type { MemoryEntry } from "../../wire/memory.js";
import { viewpointOf, type Caller } from "../caller.js";
import type { MemoryEmbeddings } from "../memory-embeddings.js";
import { toEntry } from "../memory-records.js";
import type { MemoryWrites } from "../memory-writes.js";
import type { Quotas } from "../quotas.js";
import { decodeCursor, isKeyset, pageOf, type Page } from "../paging.js";
import { projectToRead } from "./access.js";
import { anchorKey } from "./dependencies.js";
import { CompileRun } from "./run.js";
import type { CompileRequest } from "../../wire/compile-inputs.js";

const toAnchor = (row: ListedAnchor): CompileAnchor => ({
  project: row.project,
  path: row.path,
  symbol: row.symbol,
  kind: row.kind as UnitKind,
  lang: row.lang,
  start_line: row.start_line,
  end_line: row.end_line,
  sha: row.sha,
  previous_sha: row.previous_sha,
  signature: row.signature,
  memory_id: row.memory_id,
  commit: row.git_commit,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const isAnchorCursor = (value: unknown): value is { path: string; symbol: string } =>
  typeof value === "object" && value !== null && typeof (value as { path?: unknown }).path === "string" && typeof (value as { symbol?: unknown }).symbol === "string";

/**
 * Compile (CONTRACT §18): the server side of memory grounded in code. The server never reads a
 * repository; clients send units (hashes and descriptions), the server keeps their anchors and
 * compiled entries, and marks what rests on code that changed.
 */
export class CompileService {
  private readonly compiler: CompileRun;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    writes: MemoryWrites,
    embeddings: MemoryEmbeddings,
    quotas: Quotas,
  ) {
    this.compiler = new CompileRun(store, bus, writes, embeddings, quotas);
  }

  run(caller: Caller, input: CompileRequest): Promise<CompileResult> {
    return this.compiler.run(caller, input);
  }

  /** Each unit's standing against its anchor, in the order asked; an anchor whose entry is gone counts as none. */
  async check(caller: Caller, input: { project?: string | null | undefined; units: { path: string; symbol: string; sha: string }[] }): Promise<CheckItem[]> {
    const project = await projectToRead(this.store, caller, input.project);
    const reader = this.store.reader;
    const anchors = await this.store.compile.anchorsAt(reader, project, [...new Set(input.units.map((unit) => unit.path))]);
    const rows = await this.store.memory.byPks(reader, anchors.map((anchor) => anchor.memory_pk));
    const known = new Map<string, { sha: string; memoryId: string }>();
    for (const anchor of anchors) {
      const row = rows.get(anchor.memory_pk);
      if (row && row.deleted_at === null) known.set(anchorKey(anchor.path, anchor.symbol), { sha: anchor.sha, memoryId: row.id });
    }
    return input.units.map((unit) => {
      const anchor = known.get(anchorKey(unit.path, unit.symbol));
      if (!anchor) return { path: unit.path, symbol: unit.symbol, status: "unknown", memory_id: null };
      return { path: unit.path, symbol: unit.symbol, status: anchor.sha === unit.sha ? "fresh" : "stale", memory_id: anchor.memoryId };
    });
  }

  /** A project's anchors by path then symbol; `path` one file, `path_prefix` every path starting so. */
  async anchors(
    caller: Caller,
    input: { project?: string | null | undefined; path?: string | undefined; path_prefix?: string | undefined; limit: number; cursor?: string | undefined },
  ): Promise<Page<CompileAnchor>> {
    const after = decodeCursor(input.cursor, isAnchorCursor);
    const project = await projectToRead(this.store, caller, input.project);
    const rows = await this.store.compile.list(this.store.reader, project, { path: input.path, pathPrefix: input.path_prefix }, now(), after, input.limit + 1);
    return pageOf(rows, input.limit, toAnchor, (row) => ({ path: row.path, symbol: row.symbol }));
  }

  /** A project's stale entries that the caller can see, the longest stale first. */
  async stale(caller: Caller, input: { project?: string | null | undefined; limit: number; cursor?: string | undefined }): Promise<Page<MemoryEntry>> {
    const after = decodeCursor(input.cursor, isKeyset);
    const project = await projectToRead(this.store, caller, input.project);
    const rows = await this.store.compile.stale(this.store.reader, viewpointOf(caller), project, now(), after, input.limit + 1);
    return pageOf(rows, input.limit, (row) => toEntry(row), (row) => ({ at: row.stale_since ?? "", pk: row.pk }));
  }
}
