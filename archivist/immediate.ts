import { z } from "zod";
import type { Logger } from "../src/core/log.js";
import type { EventRecord } from "../src/wire/events.js";
import type { MemoryEntry, SearchHit } from "../src/wire/memory.js";
import { ApiError } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";
import { loadDirectives, preamble, projectNames } from "./directives.js";
import { BudgetExhausted, type BudgetedModel } from "./llm/index.js";
import { dataBlock, MERGE_ROLE, parseJsonReply, systemPrompt } from "./prompts.js";

/** The types the archivist merges (the seed's lifecycle table): never directives, compiled or skill entries. */
export const MERGEABLE = new Set(["memory", "doc"]);
/** Characters of content used as the similarity query (the model reads fewer tokens than this anyway). */
const QUERY_CHARS = 2000;
const MERGE_REPLY_TOKENS = 1500;
const DIRECTIVE_CACHE_MS = 30_000;
const MAX_TAGS = 32;

const mergeReply = z.discriminatedUnion("action", [
  z.object({ action: z.literal("merge"), content: z.string().trim().min(1).max(60_000), tags: z.array(z.string().trim().min(1).max(64)).max(32).optional() }),
  z.object({ action: z.literal("keep_both"), reason: z.string().max(2000).optional() }),
]);

/** What conflict detection reads of a `memory.written` event; its payload's fields are checked, not trusted. */
export type WrittenEvent = Pick<EventRecord, "seq" | "agent_id" | "payload">;

export interface ConflictPair {
  entry: MemoryEntry;
  other: SearchHit;
}

export interface ImmediateCounts {
  checked: number;
  conflicts: number;
  merged: number;
  kept: number;
  reported: number;
  failed: number;
}

/**
 * Immediate mode: a `memory.written` by another agent is compared with the visible entries of the
 * same project and scope; a pair at or above the conflict threshold is merged by the model, or,
 * without one, reported to both authors and recorded — never merged.
 */
export class ConflictWatcher {
  readonly counts: ImmediateCounts = { checked: 0, conflicts: 0, merged: 0, kept: 0, reported: 0, failed: 0 };
  private readonly directiveCache = new Map<string, { at: number; text: string }>();

  constructor(
    private readonly client: CairnClient,
    private readonly model: BudgetedModel | null,
    private readonly threshold: number,
    private readonly log: Logger,
  ) {}

  /** The conflicting pair this write makes, if any (fast: two reads). */
  async detect(event: WrittenEvent): Promise<ConflictPair | null> {
    const self = this.client.agentId;
    if (event.agent_id === self || typeof event.payload.memory_id !== "string") return null;
    if (!MERGEABLE.has(String(event.payload.type))) return null;
    const entry = await this.client.find("memory_get", { id: event.payload.memory_id });
    if (!entry || entry.agent_id === self || !MERGEABLE.has(entry.type)) return null;
    this.counts.checked++;
    const hits = await this.client.call("memory_search", {
      q: entry.content.slice(0, QUERY_CHARS),
      project: entry.project,
      limit: 10,
      max_distance: 1 - this.threshold + 1e-9,
    });
    const candidates = hits
      .filter(
        (hit) =>
          hit.id !== entry.id &&
          MERGEABLE.has(hit.type) &&
          hit.agent_id !== self &&
          hit.project === entry.project &&
          hit.scope === entry.scope &&
          hit.similarity !== null &&
          hit.similarity >= this.threshold,
      )
      .sort((a, b) => (b.similarity ?? 0) - (a.similarity ?? 0));
    const other = candidates[0];
    if (!other) return null;
    this.counts.conflicts++;
    return { entry, other };
  }

  /** Merges the pair with the model, or reports it. Never throws for a pair that went away meanwhile. */
  async resolve(pair: ConflictPair): Promise<void> {
    try {
      // Both writes of a pair can find each other before either is merged; the second finds its
      // sources superseded by then, and asking the model again would spend tokens on a dead pair.
      if (!(await this.unchanged(pair))) {
        this.log.info("conflict pair changed before it was merged", { ids: [pair.other.id, pair.entry.id] });
        return;
      }
      if (!this.model) return await this.report(pair, "no language model is configured");
      let reply: z.output<typeof mergeReply>;
      try {
        reply = await this.ask(pair);
      } catch (error) {
        if (error instanceof BudgetExhausted) return await this.report(pair, "the archivist's hourly token budget is spent");
        throw error;
      }
      if (reply.action === "keep_both") {
        this.counts.kept++;
        await this.link(pair, `similar, kept apart: ${reply.reason ?? "the model saw no conflict"}`);
        await this.client.log("info", "merge.kept", "a similar pair was kept apart", { ids: [pair.other.id, pair.entry.id], reason: reply.reason ?? null });
        return;
      }
      const merged = await this.client.call("archivist_merge", {
        sources: [
          { id: pair.other.id, version: pair.other.version },
          { id: pair.entry.id, version: pair.entry.version },
        ],
        content: reply.content,
        // The sources' tags stay findable on the merged entry; the model may add its own.
        tags: [...new Set([...pair.other.tags, ...pair.entry.tags, ...(reply.tags ?? [])])].slice(0, MAX_TAGS),
        // The server tells both authors in the merge's own transaction: no merge goes untold.
        notify: { subject: "Memory entries merged", note: `Two entries overlapped (similarity ${similarity(pair)}).` },
      });
      this.counts.merged++;
      await this.client.log("info", "merge", "merged a conflicting pair", { sources: [pair.other.id, pair.entry.id], merged: merged.entry.id });
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 409)) {
        // A source changed or went away since it was read: its author has moved on; nothing to merge.
        this.log.info("conflict pair changed before it was merged", { ids: [pair.other.id, pair.entry.id], status: error.status });
        return;
      }
      this.counts.failed++;
      this.log.warn("conflict merge failed", { ids: [pair.other.id, pair.entry.id], error });
      await this.client.log("warn", "merge.failed", error instanceof Error ? error.message : String(error), { ids: [pair.other.id, pair.entry.id] }).catch(() => undefined);
    }
  }

  /** Whether both entries are still live at the versions detection read. */
  private async unchanged(pair: ConflictPair): Promise<boolean> {
    const [entry, other] = await Promise.all([pair.entry, pair.other].map((source) => this.client.find("memory_get", { id: source.id })));
    return entry?.version === pair.entry.version && other?.version === pair.other.version;
  }

  private async ask(pair: ConflictPair): Promise<z.output<typeof mergeReply>> {
    const model = this.model as BudgetedModel;
    const completion = await model.complete({
      system: systemPrompt(await this.preambleFor(pair.entry.project), MERGE_ROLE),
      user: dataBlock([pair.other, pair.entry]),
      maxTokens: MERGE_REPLY_TOKENS,
    });
    const parsed = mergeReply.safeParse(parseJsonReply(completion.text));
    if (!parsed.success) throw new Error("the model's merge reply does not match the allowed shape");
    return parsed.data;
  }

  private async preambleFor(project: string | null): Promise<string> {
    const key = project ?? "";
    const cached = this.directiveCache.get(key);
    if (cached && Date.now() - cached.at < DIRECTIVE_CACHE_MS) return cached.text;
    const text = preamble(await loadDirectives(this.client, project), [], await projectNames(this.client));
    this.directiveCache.set(key, { at: Date.now(), text });
    return text;
  }

  private async report(pair: ConflictPair, why: string): Promise<void> {
    // A pair already linked was reported before (by this process or one before a restart).
    if (await this.linked(pair)) return;
    this.counts.reported++;
    // Authors first, the edge (which marks the pair as reported) after; a crash in between resends
    // under the same idempotency key, so each author hears of the pair once.
    const ids = [pair.entry.id, pair.other.id].sort().join(":");
    const body = [
      `Entries ${pair.other.id} (by ${pair.other.agent_id}) and ${pair.entry.id} (by ${pair.entry.agent_id}) in ${pair.entry.project ?? "global"} memory`,
      `are nearly the same (similarity ${similarity(pair)}) and may repeat or contradict each other. They were not merged (${why}).`,
      "Please check them, and update or delete the one that is wrong or redundant.",
    ].join(" ");
    for (const author of new Set([pair.other.agent_id, pair.entry.agent_id])) {
      if (author !== this.client.agentId) await this.client.message(author, "Possible memory conflict", body, `conflict-report:${ids}:${author}`);
    }
    await this.link(pair, `possible conflict (similarity ${similarity(pair)}); not merged: ${why}`);
    await this.client.log("info", "conflict.reported", "reported a possible conflict to both authors", { ids: [pair.other.id, pair.entry.id], why });
  }

  private async linked(pair: ConflictPair): Promise<boolean> {
    const node = await this.client.find("graph_node", { node_id: pair.entry.id });
    return node !== null && [...node.edges.in, ...node.edges.out].some((edge) => edge.src === pair.other.id || edge.dst === pair.other.id);
  }

  private async link(pair: ConflictPair, note: string): Promise<void> {
    await this.client.call("graph_link", { src: pair.entry.id, dst: pair.other.id, rel: "relates_to", note });
  }
}

const similarity = (pair: ConflictPair): string => (pair.other.similarity ?? 0).toFixed(3);
