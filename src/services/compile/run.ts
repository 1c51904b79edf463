import { invalid } from "../../core/errors.js";
import { now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { AnchorRow } from "../../store/compile.js";
import type { MemoryRow } from "../../store/memory.js";
import type { Reader, Store, Tx } from "../../store/store.js";
import type { CompileResult, CompileUnit } from "../../wire/compile.js";
import type { Caller } from "../caller.js";
import type { MemoryEmbeddings } from "../memory-embeddings.js";
import type { MemoryWrites } from "../memory-writes.js";
import type { Quotas } from "../quotas.js";
import { projectToWrite } from "./access.js";
import { anchorKey, DependencyLinks, type Dependent, type Placed } from "./dependencies.js";
import { CompiledEntries, compiledContent } from "./entries.js";
import { carryShaChanges, markedFor, markedForEveryone, type ShaChange } from "./staleness.js";
import { locks } from "../locks.js";
import type { CompileRequest } from "../../wire/compile-inputs.js";

/** What a unit's anchor says beside its sha, kept up to date even when the code did not change. */
const placement = (unit: CompileUnit) => ({ kind: unit.kind, lang: unit.lang, start_line: unit.start_line, end_line: unit.end_line, signature: unit.signature ?? null });

const moved = (anchor: AnchorRow, unit: CompileUnit): boolean =>
  Object.entries(placement(unit)).some(([field, value]) => anchor[field as keyof ReturnType<typeof placement>] !== value);

const liveRow = (row: MemoryRow | undefined): MemoryRow | undefined => (row && row.deleted_at === null ? row : undefined);

/** Refuses a request that names one piece of code twice: which of the two would the anchor hold? */
function checkDistinct(units: readonly CompileUnit[]): void {
  const seen = new Set<string>();
  units.forEach((unit, index) => {
    const key = anchorKey(unit.path, unit.symbol);
    if (seen.has(key)) throw invalid(`units.${index}`, "the same path and symbol twice");
    seen.add(key);
  });
}

/** At most this many entries of one compile are embedded before it answers. */
const INLINE_EMBEDDINGS = 64;

/**
 * POST /compile (CONTRACT §18): one anchor per piece of code and one `compiled` entry per anchor,
 * written only when the code's sha changed, then the edges, the staleness and the prune — all in
 * one transaction, one compile of a project at a time.
 */
export class CompileRun {
  private readonly entries: CompiledEntries;
  private readonly links: DependencyLinks;

  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly writes: MemoryWrites,
    private readonly embeddings: MemoryEmbeddings,
    private readonly quotas: Quotas,
  ) {
    this.entries = new CompiledEntries(store, writes, embeddings);
    this.links = new DependencyLinks(store);
  }

  async run(caller: Caller, input: CompileRequest): Promise<CompileResult> {
    const project = await projectToWrite(this.store, caller, input.project);
    checkDistinct(input.units);
    const paths = [...new Set(input.units.map((unit) => unit.path))];
    // Embedding waits for a model; the transaction must not. What the stored anchors say will be
    // written is embedded first; anything else (a compile that raced this one) the backfill embeds.
    const stored = await this.current(this.store.reader, project, paths, (pks) => this.store.memory.byPks(this.store.reader, pks));
    const toWrite = input.units.filter((unit) => {
      const anchor = stored.anchors.get(anchorKey(unit.path, unit.symbol));
      return !anchor || anchor.sha !== unit.sha || !stored.live.has(anchor.memory_pk);
    });
    const contents = toWrite.map(compiledContent);
    // A commit's few changes are searchable as soon as the answer comes; a whole repository's
    // thousands are embedded by the backfill after the commit, so the client is not kept waiting
    // for the model (about 20 ms of CPU per entry).
    const inline = toWrite.length <= INLINE_EMBEDDINGS;
    await this.quotas.admitCompile(caller.agentId, project, {
      units: toWrite.length,
      bytes: contents.reduce((sum, content) => sum + Buffer.byteLength(content, "utf8"), 0),
      created: toWrite.filter((unit) => {
        const anchor = stored.anchors.get(anchorKey(unit.path, unit.symbol));
        return !anchor || !stored.live.has(anchor.memory_pk);
      }).length,
      bulk: !inline,
    });
    const vectors = inline ? await this.entries.embedAll(contents) : new Map<string, Float32Array | null>();
    let unembedded = false;
    const result = await this.store.transaction(async (tx) => {
      await tx.lock(locks.compile(project));
      const at = now();
      const commit = input.commit ?? null;
      // The entries locked: a delete of one commits first, and this compile sees it gone.
      const { anchors, live } = await this.current(tx, project, paths, (pks) => this.store.memory.lockByPks(tx, pks));
      const placed = new Map<string, Placed>();
      for (const [key, anchor] of anchors) {
        const row = live.get(anchor.memory_pk);
        if (row) placed.set(key, { entryPk: row.pk, entryId: row.id });
      }
      const counts = { created: 0, updated: 0, unchanged: 0 };
      const memoryIds: string[] = [];
      const dependents: Dependent[] = [];
      const changes: ShaChange[] = [];
      const rewritten = new Set<string>();
      for (const unit of input.units) {
        const key = anchorKey(unit.path, unit.symbol);
        const anchor = anchors.get(key);
        const row = anchor ? live.get(anchor.memory_pk) : undefined;
        if (anchor && row && anchor.sha === unit.sha) {
          counts.unchanged++;
          memoryIds.push(row.id);
          if (moved(anchor, unit)) await this.store.compile.update(tx, anchor.pk, { ...placement(unit), updated_at: at });
          continue;
        }
        const content = compiledContent(unit);
        const vector = vectors.get(content) ?? null;
        if (vector === null) unembedded = true;
        let entry: MemoryRow;
        if (anchor && row) {
          entry = await this.entries.rewrite(tx, caller.agentId, row, unit, commit, vector, at);
          counts.updated++;
          rewritten.add(entry.id);
          changes.push({ entryId: entry.id, path: unit.path, symbol: unit.symbol, oldSha: anchor.sha, newSha: unit.sha });
        } else {
          entry = await this.entries.create(tx, caller.agentId, project, unit, commit, vector, at);
          counts.created++;
        }
        const fields = { ...placement(unit), sha: unit.sha, memory_pk: entry.pk, git_commit: commit, updated_at: at };
        if (anchor) {
          await this.store.compile.update(tx, anchor.pk, { ...fields, previous_sha: anchor.sha === unit.sha ? anchor.previous_sha : anchor.sha });
        } else {
          await this.store.compile.insert(tx, { project, path: unit.path, symbol: unit.symbol, ...fields, previous_sha: null, created_at: at });
        }
        placed.set(key, { entryPk: entry.pk, entryId: entry.id });
        dependents.push({ entryPk: entry.pk, entryId: entry.id, path: unit.path, symbol: unit.symbol, names: unit.deps.filter((dep) => dep.kind === "symbol").map((dep) => dep.name) });
        memoryIds.push(entry.id);
      }
      await this.links.link(tx, caller.agentId, project, dependents, placed, at);
      const marked = await carryShaChanges(this.store, this.writes, tx, caller.agentId, changes, rewritten, at);
      const invalidated = (await markedFor(this.store, tx, caller, marked)).map((row) => row.id);
      const sent = new Set(input.units.map((unit) => anchorKey(unit.path, unit.symbol)));
      const removed = await this.prune(tx, caller.agentId, project, input.prune_paths ?? [], sent);
      await this.bus.emit(tx, {
        type: "compile.completed",
        agentId: caller.agentId,
        project,
        payload: { project, created: counts.created, updated: counts.updated, removed, invalidated_count: markedForEveryone(marked, project), commit },
      });
      return { project, anchors: await this.store.compile.count(tx, project), ...counts, removed, invalidated, memory_ids: memoryIds };
    });
    if (unembedded) void this.embeddings.backfill();
    return result;
  }

  /** The anchors at `paths`, by key, and the live entries among theirs, by row key. */
  private async current(
    r: Reader,
    project: string | null,
    paths: readonly string[],
    entries: (pks: number[]) => Promise<Map<number, MemoryRow>>,
  ): Promise<{ anchors: Map<string, AnchorRow>; live: Map<number, MemoryRow> }> {
    const found = await this.store.compile.anchorsAt(r, project, paths);
    const rows = await entries(found.map((anchor) => anchor.memory_pk));
    const live = new Map<number, MemoryRow>();
    for (const [pk, row] of rows) if (liveRow(row)) live.set(pk, row);
    return { anchors: new Map(found.map((anchor) => [anchorKey(anchor.path, anchor.symbol), anchor])), live };
  }

  /** Removes the anchors at or under `paths` that this compile did not send, with their entries. */
  private async prune(tx: Tx, actor: string, project: string | null, paths: readonly string[], sent: ReadonlySet<string>): Promise<number> {
    if (paths.length === 0) return 0;
    const gone = (await this.store.compile.anchorsUnder(tx, project, paths)).filter((anchor) => !sent.has(anchorKey(anchor.path, anchor.symbol)));
    const rows = await this.store.memory.lockByPks(tx, gone.map((anchor) => anchor.memory_pk));
    for (const anchor of gone) {
      const row = liveRow(rows.get(anchor.memory_pk));
      if (row) await this.writes.softDelete(tx, actor, row, "pruned");
    }
    await this.store.compile.remove(tx, gone.map((anchor) => anchor.pk));
    return gone.length;
  }
}
