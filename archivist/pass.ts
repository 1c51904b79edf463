import type { Logger } from "../src/core/log.js";
import type { AgentRecord } from "../src/wire/agents.js";
import type { MemoryEntry } from "../src/wire/memory.js";
import type { CaptureDigester } from "./captures.js";
import type { CairnClient } from "./client.js";
import { findConflicts, loadDirectives, MAX_PROJECTS, preamble, type DirectiveConflict } from "./directives.js";
import type { BudgetedModel } from "./llm/index.js";
import type { ArchivistSettings } from "./settings.js";
import { conflictKey, conflictMessage, onceWithin, staleKey, staleMessage, stalenessReasons } from "./staleness.js";
import { synthesize, type SynthesisCounts } from "./synthesis.js";
import { decay, promote } from "./upkeep.js";

/** Entries one pass reads from the last day; beyond this the oldest are synthesised first. */
const MAX_PASS_ENTRIES = 20_000;
const MAX_AGENTS = 5000;
const DAY_MS = 86_400_000;

export interface PassReport extends SynthesisCounts {
  llm: boolean;
  projects: number;
  entries: number;
  docs: string[];
  promptTokens: number;
  completionTokens: number;
  budgetExhausted: boolean;
  directives: number;
  directiveConflicts: number;
  conflictMessages: number;
  staleWarnings: number;
  decayed: number;
  promotedScratch: number;
  promotedDocs: number;
  /** Captures digested into memory by this pass, failed (to be tried again), and failed for good. */
  capturesDigested: number;
  capturesFailed: number;
  capturesDead: number;
  /** Entries the digested captures wrote or reinforced, and the model calls that took. */
  captureFacts: number;
  captureCalls: number;
  durationMs: number;
}

export interface PassContext {
  client: CairnClient;
  model: BudgetedModel | null;
  settings: ArchivistSettings;
  log: Logger;
  now: Date;
  /** When the previous pass started: a project is synthesised again only if something changed since. */
  previousPass: string | null;
  /** Digests the capture queue; null without a model (captures then simply expire). */
  captures: CaptureDigester | null;
}

/**
 * The scheduled pass: for global and every project, load the directives (conflicts and staleness
 * are checked even where nothing happened), synthesise the last day's entries where any changed
 * since the previous pass, then decay and promote. Captures are digested first, so what they
 * taught the team is in the same pass's synthesis, and failed ones are tried again. Directives,
 * compiled entries and the archivist's own entries never enter the memory block; directives are
 * only ever read.
 */
export async function scheduledPass(context: PassContext): Promise<PassReport> {
  const started = performance.now();
  const { client, model, settings, now } = context;
  const tokensBefore = { prompt: model?.promptTokens ?? 0, completion: model?.completionTokens ?? 0 };
  const report: PassReport = {
    llm: model !== null,
    projects: 0,
    entries: 0,
    docs: [],
    batches: 0,
    calls: 0,
    links: 0,
    merges: 0,
    headlines: 0,
    tasks: 0,
    suggestions: 0,
    dropped: 0,
    failedCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    budgetExhausted: false,
    directives: 0,
    directiveConflicts: 0,
    conflictMessages: 0,
    staleWarnings: 0,
    decayed: 0,
    promotedScratch: 0,
    promotedDocs: 0,
    capturesDigested: 0,
    capturesFailed: 0,
    capturesDead: 0,
    captureFacts: 0,
    captureCalls: 0,
    durationMs: 0,
  };

  if (context.captures) await digestCaptures(context, context.captures, report);

  const since = new Date(now.getTime() - DAY_MS).toISOString();
  const changed = await client.all("memory_delta", { since }, MAX_PASS_ENTRIES);
  const pool = new Map<string | null, MemoryEntry[]>();
  for (const row of changed) {
    // Compiled entries describe code, not what the team learned: a compile of 2,000 units would fill the prompts.
    if (!("content" in row) || row.type === "directive" || row.type === "compiled" || row.agent_id === client.agentId) continue;
    const group = pool.get(row.project) ?? [];
    group.push(row);
    pool.set(row.project, group);
  }
  const listed = await client.all("project_list", {}, MAX_PROJECTS);
  const projects = listed.map((project) => project.id);
  const names = new Map(listed.map((project) => [project.id, project.name]));
  const agents = await client.all("agent_list", {}, MAX_AGENTS);
  const checked = new Set<string>();

  for (const project of [null, ...projects]) {
    const directives = await loadDirectives(client, project);
    const conflicts = findConflicts(directives, settings.directiveConflictThreshold);
    report.directives += directives.filter((entry) => !checked.has(entry.id)).length;
    report.directiveConflicts += conflicts.length;
    for (const directive of directives) {
      if (checked.has(directive.id)) continue;
      checked.add(directive.id);
      if (await warnIfStale(context, directive, agents)) report.staleWarnings++;
    }
    const entries = pool.get(project) ?? [];
    if (entries.length > 0) {
      report.projects++;
      report.entries += entries.length;
    }
    // The whole day goes to the model, but only when the day has moved on since the last pass.
    const active = context.previousPass === null || entries.some((entry) => entry.updated_at > (context.previousPass as string));
    if (model && active && entries.length > 0 && !report.budgetExhausted) {
      const result = await synthesize({ client, model, log: context.log, now }, project, entries, preamble(directives, conflicts, names));
      for (const key of ["batches", "calls", "links", "merges", "headlines", "tasks", "suggestions", "dropped", "failedCalls"] as const) report[key] += result[key];
      if (result.docId) report.docs.push(result.docId);
      report.budgetExhausted = result.budgetExhausted;
    }
    // After the synthesis that saw the warning: one message per pair, not one per pass.
    for (const conflict of conflicts) if (await notifyConflict(context, conflict, project)) report.conflictMessages++;
  }

  const promoted = await promote(client, settings, now, context.log);
  report.promotedScratch = promoted.scratch;
  report.promotedDocs = promoted.doc;
  report.decayed = await decay(client, settings, now);
  report.promptTokens = (model?.promptTokens ?? 0) - tokensBefore.prompt;
  report.completionTokens = (model?.completionTokens ?? 0) - tokensBefore.completion;
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

/** One bounded digest run; its failure is logged and the rest of the pass goes on. */
async function digestCaptures(context: PassContext, captures: CaptureDigester, report: PassReport): Promise<void> {
  try {
    const counts = await captures.run(true);
    report.capturesDigested = counts.digested;
    report.capturesFailed = counts.failed;
    report.capturesDead = counts.dead;
    report.captureFacts = counts.facts;
    report.captureCalls = counts.calls;
    report.budgetExhausted ||= counts.budgetExhausted;
  } catch (error) {
    context.log.warn("capture digest failed during the pass", { error });
    await context.client.log("error", "capture.run.failed", error instanceof Error ? error.message : String(error)).catch(() => undefined);
  }
}

async function warnIfStale(context: PassContext, directive: MemoryEntry, agents: AgentRecord[]): Promise<boolean> {
  const { client, settings, now } = context;
  const last = await client.state<string>(staleKey(directive.id));
  if (typeof last === "string" && now.getTime() - Date.parse(last) < settings.staleCooldownHours * 3_600_000) return false;
  const reasons = await stalenessReasons(directive, { client, agents, now, agentDays: settings.staleAgentDays, ageDays: settings.staleAgeDays });
  if (reasons.length === 0) return false;
  return onceWithin(client, staleKey(directive.id), settings.staleCooldownHours, now, async () => {
    const message = staleMessage(directive, reasons);
    await client.message(settings.uiAgentId, message.subject, message.body);
  });
}

function notifyConflict(context: PassContext, conflict: DirectiveConflict, project: string | null): Promise<boolean> {
  const { client, settings, now } = context;
  return onceWithin(client, conflictKey(conflict.a.id, conflict.b.id), settings.staleCooldownHours, now, async () => {
    const message = conflictMessage(conflict, project);
    await client.message(settings.uiAgentId, message.subject, message.body);
  });
}
