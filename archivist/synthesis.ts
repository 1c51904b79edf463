import { z } from "zod";
import type { Logger } from "../src/core/log.js";
import type { MemoryEntry } from "../src/wire/memory.js";
import { ApiError } from "../src/client/operations.js";
import type { CairnClient } from "./client.js";
import { BudgetExhausted, estimateTokens, LlmError, type BudgetedModel } from "./llm/index.js";
import { MERGEABLE } from "./immediate.js";
import { dataBlock, parseJsonReply, SYNTHESIS_ROLE, systemPrompt } from "./prompts.js";

/** Prompt tokens of entries per model call, and entries per call. */
const BATCH_TOKENS = 6000;
export const BATCH_ENTRIES = 60;
const REPLY_TOKENS = 3000;
/** Room for the doc's own sections within the server's content limit. */
const DOC_SUMMARY_CHARS = 48_000;
const MAX_OPEN_TASKS = 5000;
/** Stale entries a doc lists (the longest stale first), and how many it reads to count them. */
export const STALE_SHOWN = 10;
const STALE_COUNTED = 500;
const STALE_LINE_CHARS = 120;
const STALE_CODE_CHARS = 200;

const reply = z.object({
  summary: z.string().max(20_000).default(""),
  recommended_actions: z.array(z.unknown()).max(50).default([]),
  suggested_directives: z.array(z.unknown()).max(50).default([]),
  operations: z.array(z.unknown()).max(200).default([]),
});
const action = z.object({ title: z.string().trim().min(1).max(200), description: z.string().trim().max(4000).default("") });
const suggestion = z.string().trim().min(1).max(1000);
const operation = z.discriminatedUnion("op", [
  z.object({ op: z.literal("link"), src: z.string(), dst: z.string(), rel: z.enum(["relates_to", "supports", "contradicts", "derived_from"]), note: z.string().max(2000).optional() }),
  z.object({ op: z.literal("merge"), ids: z.array(z.string()).min(2).max(8), content: z.string().trim().min(1).max(60_000) }),
  z.object({ op: z.literal("headline"), id: z.string(), headline: z.string().trim().min(1).max(300) }),
]);
type Operation = z.output<typeof operation>;
type Action = z.output<typeof action>;

export interface SynthesisCounts {
  batches: number;
  calls: number;
  links: number;
  merges: number;
  headlines: number;
  tasks: number;
  suggestions: number;
  dropped: number;
  failedCalls: number;
}

export interface SynthesisResult extends SynthesisCounts {
  docId: string | null;
  budgetExhausted: boolean;
}

export interface SynthesisContext {
  client: CairnClient;
  model: BudgetedModel;
  log: Logger;
  now: Date;
}

const emptyCounts = (): SynthesisCounts => ({ batches: 0, calls: 0, links: 0, merges: 0, headlines: 0, tasks: 0, suggestions: 0, dropped: 0, failedCalls: 0 });

/** Entries grouped by topic (first tag), then time, cut into batches that fit one prompt. */
export function batches(entries: MemoryEntry[]): MemoryEntry[][] {
  const sorted = [...entries].sort((a, b) => (a.tags[0] ?? "~").localeCompare(b.tags[0] ?? "~") || a.updated_at.localeCompare(b.updated_at));
  const result: MemoryEntry[][] = [];
  let current: MemoryEntry[] = [];
  let tokens = 0;
  for (const entry of sorted) {
    const cost = estimateTokens(dataBlock([entry]));
    if (current.length > 0 && (current.length >= BATCH_ENTRIES || tokens + cost > BATCH_TOKENS)) {
      result.push(current);
      current = [];
      tokens = 0;
    }
    current.push(entry);
    tokens += cost;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** Text from the model cannot pose as the doc's own sections or as a suggestion line. */
const defuse = (text: string): string => text.replace(/^#{1,3}(?=\s)/gm, "####").replace(/DIRECTIVE SUGGESTION:/gi, "Suggestion:");
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

/**
 * One project's synthesis (null: global): the entries go to the model in batches with the
 * directives as a preamble; only the allowed operations on ids of the batch are carried out; the
 * summaries, recommended actions and suggested directives become one synthesis doc.
 */
export async function synthesize(context: SynthesisContext, project: string | null, entries: MemoryEntry[], preambleText: string): Promise<SynthesisResult> {
  const counts = emptyCounts();
  const summaries: string[] = [];
  const actions = new Map<string, Action>();
  const suggestions = new Set<string>();
  const consumed = new Set<string>();
  let budgetExhausted = false;
  for (const batch of batches(entries)) {
    counts.batches++;
    let text: string;
    try {
      const completion = await context.model.complete({ system: systemPrompt(preambleText, SYNTHESIS_ROLE), user: dataBlock(batch), maxTokens: REPLY_TOKENS });
      counts.calls++;
      text = completion.text;
    } catch (error) {
      if (error instanceof BudgetExhausted) {
        budgetExhausted = true;
        break;
      }
      if (!(error instanceof LlmError)) throw error;
      counts.failedCalls++;
      context.log.warn("synthesis call failed", { project, error });
      continue;
    }
    let parsed: z.output<typeof reply>;
    try {
      parsed = reply.parse(parseJsonReply(text));
    } catch {
      counts.dropped++;
      await context.client.log("warn", "synthesis.dropped", "the model's reply was not the allowed JSON; the batch was skipped", { project, entries: batch.length });
      continue;
    }
    if (parsed.summary.trim()) summaries.push(defuse(parsed.summary.trim()));
    for (const item of parsed.recommended_actions) {
      const checked = action.safeParse(item);
      if (!checked.success) counts.dropped++;
      else actions.set(oneLine(checked.data.title).toLowerCase(), { title: oneLine(checked.data.title), description: checked.data.description });
    }
    for (const item of parsed.suggested_directives) {
      const checked = suggestion.safeParse(item);
      if (!checked.success) counts.dropped++;
      else suggestions.add(oneLine(checked.data));
    }
    await applyOperations(context, batch, parsed.operations, consumed, counts);
  }
  counts.suggestions = suggestions.size;
  if (counts.calls === 0) return { ...counts, docId: null, budgetExhausted };
  const stale = await staleEntries(context.client, project);
  const docId = await writeDoc(context, project, entries, summaries, [...actions.values()], [...suggestions], stale);
  counts.tasks = await createTasks(context, project, [...actions.values()], docId);
  await context.client.call("event_emit", {
    type: "archivist.synthesis",
    project,
    payload: { project, doc_id: docId, entries: entries.length, links: counts.links, merges: counts.merges, tasks: counts.tasks, suggestions: counts.suggestions },
  });
  return { ...counts, docId, budgetExhausted };
}

/** Carries out the operations that name only entries of this batch; drops and logs the rest. */
async function applyOperations(context: SynthesisContext, batch: MemoryEntry[], raw: unknown[], consumed: Set<string>, counts: SynthesisCounts): Promise<void> {
  const byId = new Map(batch.map((entry) => [entry.id, entry]));
  const dropped: { op: unknown; reason: string }[] = [];
  const drop = (op: unknown, reason: string): void => {
    counts.dropped++;
    if (dropped.length < 20) dropped.push({ op: typeof op === "object" && op !== null && "op" in op ? op.op : typeof op, reason });
  };
  for (const item of raw) {
    const checked = operation.safeParse(item);
    if (!checked.success) {
      drop(item, "not an allowed operation");
      continue;
    }
    const op: Operation = checked.data;
    const ids = op.op === "link" ? [op.src, op.dst] : op.op === "merge" ? op.ids : [op.id];
    // Only entries of this batch, never one a merge of this pass already replaced.
    if (!ids.every((id) => byId.has(id) && !consumed.has(id))) {
      drop(op, "names an id outside its batch");
      continue;
    }
    try {
      if (op.op === "link") {
        if (op.src === op.dst || byId.get(op.src)?.agent_id === byId.get(op.dst)?.agent_id) {
          drop(op, "links are made between entries of different agents");
          continue;
        }
        await context.client.call("graph_link", { src: op.src, dst: op.dst, rel: op.rel, note: op.note ?? null });
        counts.links++;
      } else if (op.op === "merge") {
        const sources = [...new Set(op.ids)].map((id) => byId.get(id) as MemoryEntry);
        if (sources.length < 2 || !sources.every((entry) => MERGEABLE.has(entry.type))) {
          drop(op, "merges take two or more memory or doc entries");
          continue;
        }
        await context.client.call("archivist_merge", { sources: sources.map((entry) => ({ id: entry.id, version: entry.version })), content: op.content });
        for (const entry of sources) consumed.add(entry.id);
        counts.merges++;
      } else {
        await context.client.call("memory_set_headline", { id: op.id, headline: oneLine(op.headline) });
        counts.headlines++;
      }
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      drop(op, `refused by the server: ${error.detail}`);
    }
  }
  if (dropped.length > 0) {
    await context.client.log("warn", "synthesis.dropped", "operations outside the allowed set were dropped", { dropped });
  }
}

/** The stale entries of a project (null: global) its authors should look at again, and how many there are. */
export interface StaleSummary {
  shown: MemoryEntry[];
  total: number;
  /** STALE_COUNTED were read and more were left: `total` is a lower bound. */
  capped: boolean;
}

/**
 * The project's entries that compile marked stale (CONTRACT §18), the longest stale first. Compiled
 * entries marked through a dependency are left out: no author can update one, and the next
 * compile of their own code clears them.
 */
async function staleEntries(client: CairnClient, project: string | null): Promise<StaleSummary> {
  let listed: MemoryEntry[];
  try {
    listed = await client.all("compile_stale", { project }, STALE_COUNTED);
  } catch (error) {
    // The project went meanwhile: the doc's own write says so, and the section has nothing to list.
    if (error instanceof ApiError && error.status === 404) return { shown: [], total: 0, capped: false };
    throw error;
  }
  const entries = listed.filter((entry) => entry.type !== "compiled");
  return { shown: entries.slice(0, STALE_SHOWN), total: entries.length, capped: listed.length >= STALE_COUNTED };
}

const clip = (text: string, chars: number): string => (text.length > chars ? `${text.slice(0, chars - 1)}…` : text);
const minute = (timestamp: string): string => `${timestamp.slice(0, 16).replace("T", " ")} UTC`;

/** One line per stale entry: its id and author, its first line, the code that changed and since when. */
export function staleSection(stale: StaleSummary): string[] {
  if (stale.total === 0) return [];
  const one = stale.total === 1 && !stale.capped;
  const count = one ? "1 entry is about code that changed after it was" : `${stale.total}${stale.capped ? "+" : ""} entries are about code that changed after they were`;
  const lines = stale.shown.map((entry) => {
    const reason = entry.stale_reason;
    const code = reason === null ? "its code" : `\`${clip(oneLine(reason.symbol === "" ? reason.path : `${reason.path}::${reason.symbol}`), STALE_CODE_CHARS)}\``;
    const since = entry.stale_since === null ? "" : `, stale since ${minute(entry.stale_since)}`;
    return `- \`${entry.id}\` (${entry.agent_id}) ${clip(oneLine(entry.content.split("\n")[0] ?? ""), STALE_LINE_CHARS)} — ${code} changed${since}`;
  });
  const rest = stale.total - stale.shown.length;
  return [
    "",
    "### Stale Entries",
    "",
    `${count} written. Each author should check theirs and update it (or delete it); the longest stale first:`,
    "",
    ...lines,
    ...(rest > 0 ? ["", `…and ${rest}${stale.capped ? "+" : ""} more (\`GET /compile/stale\`).`] : []),
  ];
}

async function writeDoc(
  context: SynthesisContext,
  project: string | null,
  entries: MemoryEntry[],
  summaries: string[],
  actions: Action[],
  suggestions: string[],
  stale: StaleSummary,
): Promise<string> {
  const agents = new Set(entries.map((entry) => entry.agent_id));
  let summary = summaries.join("\n\n") || "Nothing new stood out in this period.";
  if (summary.length > DOC_SUMMARY_CHARS) summary = `${summary.slice(0, DOC_SUMMARY_CHARS)} [cut]`;
  const content = [
    `# Synthesis: ${project ?? "global"}, ${context.now.toISOString().slice(0, 16).replace("T", " ")} UTC`,
    "",
    summary,
    "",
    `Drawn from ${entries.length} entries by ${agents.size} agent${agents.size === 1 ? "" : "s"} changed in the last 24 hours.`,
    "",
    "### Recommended Actions",
    "",
    ...(actions.length > 0 ? actions.map((item) => `- **${item.title}**${item.description ? ` — ${oneLine(item.description)}` : ""}`) : ["None."]),
    "",
    "### Suggested Directives",
    "",
    ...(suggestions.length > 0 ? suggestions.map((text) => `DIRECTIVE SUGGESTION: ${text}`) : ["None."]),
    ...staleSection(stale),
  ].join("\n");
  const written = await context.client.call("memory_write", { type: "doc", scope: "project", project, tags: ["synthesis"], content });
  return written.id;
}

/** Each recommended action becomes a task, unless one with the same title is still open or claimed. */
async function createTasks(context: SynthesisContext, project: string | null, actions: Action[], docId: string): Promise<number> {
  if (actions.length === 0) return 0;
  const unfinished = [
    ...(await context.client.all("task_list", { status: "open", project }, MAX_OPEN_TASKS)),
    ...(await context.client.all("task_list", { status: "claimed", project }, MAX_OPEN_TASKS)),
  ];
  const titles = new Set(unfinished.filter((task) => task.project === project).map((task) => oneLine(task.title).toLowerCase()));
  let created = 0;
  for (const item of actions) {
    const key = item.title.toLowerCase();
    if (titles.has(key)) continue;
    titles.add(key);
    await context.client.call("task_create", {
      title: item.title,
      description: `${item.description}\n\nRecommended by the archivist's synthesis ${docId}.`.trim(),
      project,
      tags: ["archivist"],
    });
    created++;
  }
  return created;
}
