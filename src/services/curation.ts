import { isCopy, refuseCopyChange } from "./mesh/copies.js";
import { AppError, invalid, notFound } from "../core/errors.js";
import { now } from "../core/time.js";
import type { MemoryRow } from "../store/memory.js";
import type { Reader, Store, Tx } from "../store/store.js";
import { viewpointOf, type Caller } from "./caller.js";
import type { MemoryEmbeddings } from "./memory-embeddings.js";
import { redactEntryFields } from "./memory-redaction.js";
import { newMemoryRow, round6, toEntry, vectorMetaOf } from "./memory-records.js";
import type { MemoryWrites } from "./memory-writes.js";
import type { MessageService } from "./messages.js";
import type { ConfidenceUpdate, MergeResult } from "../wire/archivist.js";
import type { MemoryType } from "../wire/memory.js";

/** The types the archivist may merge, decay and promote (the seed's lifecycle table: memory and doc). */
const CURATED_TYPES: readonly MemoryType[] = ["memory", "doc"];

// The sources' tags together may outnumber what one write may carry (the 32 of `tags` in
// tools/schemas.ts); the merged entry keeps the first that many, as a write would have to.
const MAX_TAGS = 32;

export interface MergeSource {
  id: string;
  /** The version the archivist read: a source changed since is not merged (409). */
  version: number;
}

export interface MergeInput {
  sources: MergeSource[];
  content: string;
  tags?: string[] | undefined;
  confidence?: number | undefined;
  /** Message each source's author in the same transaction, so no merge goes untold. */
  notify?: { subject: string; note: string } | undefined;
}

/**
 * What only the archivist does to entries: merging conflicting ones into a new entry, and decaying
 * confidence. Directives and compiled entries are refused here whatever the caller asks: no
 * automated process changes a directive, and compile alone changes a compiled entry.
 */
export class CurationService {
  constructor(
    private readonly store: Store,
    private readonly writes: MemoryWrites,
    private readonly messages: MessageService,
    private readonly embeddings: MemoryEmbeddings,
    private readonly maxContentBytes: number,
  ) {}

  private async live(r: Reader, caller: Caller, id: string): Promise<MemoryRow | undefined> {
    return (await this.store.memory.findLive(r, viewpointOf(caller), now(), { id }))[0];
  }

  /** Sets confidence without a version bump; entries gone since are skipped; a directive refuses the whole batch. */
  async setConfidence(caller: Caller, updates: { id: string; confidence: number }[]): Promise<ConfidenceUpdate> {
    return this.store.transaction(async (tx) => {
      let updated = 0;
      for (const [index, update] of updates.entries()) {
        const row = await this.live(tx, caller, update.id);
        // A peer's copy decays only where it was written (CONTRACT §16): skipped like an entry gone since.
        if (!row || isCopy(row)) continue;
        if (row.type === "directive") throw invalid(`updates.${index}.id`, "a directive's confidence is fixed at 1");
        // A compiled entry states what the code is, not how sure anyone is (§18: never decayed).
        if (row.type === "compiled") throw invalid(`updates.${index}.id`, "a compiled entry's confidence is fixed at 1");
        const confidence = round6(update.confidence);
        if (confidence === row.confidence) continue;
        await this.store.memory.patch(tx, row.pk, { confidence });
        const changed = { ...row, confidence };
        if (row.embedding_model !== null) await this.store.vectors.updateMeta(tx, row.pk, vectorMetaOf(changed));
        await this.writes.emitChange(tx, "memory.updated", caller.agentId, changed, { reason: "decay", confidence });
        updated++;
      }
      return { updated };
    });
  }

  private async checkSources(r: Reader, caller: Caller, sources: MergeSource[]): Promise<MemoryRow[]> {
    const rows: MemoryRow[] = [];
    for (const [index, source] of sources.entries()) {
      const row = await this.live(r, caller, source.id);
      if (!row) throw notFound("memory entry");
      refuseCopyChange(row);
      if (!CURATED_TYPES.includes(row.type)) throw invalid(`sources.${index}.id`, `${row.type} entries are never merged`);
      if (row.version !== source.version) throw new AppError("CONFLICT", "a source entry changed since it was read", { extra: { id: row.id, current_version: row.version } });
      rows.push(row);
    }
    const first = rows[0] as MemoryRow;
    if (rows.some((row) => row.project !== first.project || row.scope !== first.scope)) {
      throw invalid("sources", "sources must share one project and scope");
    }
    return rows;
  }

  /**
   * One transaction: the merged entry is written (by the caller, with the sources as parents, in
   * their project and scope) and each source is soft-deleted with `superseded_by` set. Either all
   * of it happens or none, so a crash never leaves a fact in neither place.
   */
  async merge(caller: Caller, asked: MergeInput): Promise<MergeResult> {
    // A model wrote the merged text: a secret it echoed or rebuilt goes, as from every entry.
    const { fields: input } = await redactEntryFields(asked, this.maxContentBytes);
    const ids = input.sources.map((source) => source.id);
    if (new Set(ids).size !== ids.length) throw invalid("sources", "each source once");
    await this.checkSources(this.store.reader, caller, input.sources);
    const vector = await this.embeddings.embedForWrite(input.content);
    return this.store.transaction(async (tx) => {
      // Checked again inside the transaction: a source may have changed while the content was embedded.
      const rows = await this.checkSources(tx, caller, input.sources);
      const first = rows[0] as MemoryRow;
      const tags = [...new Set(input.tags ?? rows.flatMap((row) => JSON.parse(row.tags) as string[]))].slice(0, MAX_TAGS);
      const fields = {
        type: rows.some((row) => row.type === "doc") ? ("doc" as const) : ("memory" as const),
        project: first.project,
        scope: first.scope,
        content: input.content,
        confidence: input.confidence ?? Math.max(...rows.map((row) => row.confidence)),
        parents: ids,
        tags,
        expiresAt: null,
        // The merge is the next version of what its sources said.
        version: Math.max(...rows.map((row) => row.version)) + 1,
      };
      const merged = await this.writes.create(tx, caller.agentId, newMemoryRow(caller.agentId, fields, now()), tags, vector);
      for (const source of rows) await this.writes.softDelete(tx, caller.agentId, source, "merged", merged.id);
      if (input.notify) await this.tellAuthors(tx, caller, rows, merged.id, input.notify);
      return { entry: toEntry(merged), superseded: ids };
    });
  }

  /** One message to each author of the sources (other than the caller): the note, then what happened to their entries. */
  private async tellAuthors(tx: Tx, caller: Caller, sources: MemoryRow[], mergedId: string, notify: { subject: string; note: string }): Promise<void> {
    const merged = sources.map((source) => `${source.id} (by ${source.agent_id})`).join(" and ");
    for (const author of new Set(sources.map((source) => source.agent_id))) {
      if (author === caller.agentId) continue;
      const theirs = sources.filter((source) => source.agent_id === author).map((source) => source.id);
      const body = [
        notify.note,
        `The archivist merged ${merged} into ${mergedId}.`,
        `Your ${theirs.length === 1 ? `entry ${theirs[0]} is` : `entries ${theirs.join(", ")} are`} superseded; read ${mergedId} for the combined version.`,
      ]
        .filter((part) => part !== "")
        .join(" ");
      try {
        await this.messages.deliver(tx, caller, { to: author, subject: notify.subject, body });
      } catch (error) {
        // An author deleted since writing has no inbox; the merge stands all the same.
        if (!(error instanceof AppError && error.code === "NOT_FOUND")) throw error;
      }
    }
  }
}
