import type { CompactHit } from "../wire/memory.js";
import type { CompactTask } from "../wire/tasks.js";

// Compact results as a model reads them best: a few lines per item rather than JSON, whose keys
// and quotes would cost as much again (docs/mcp.md "Compact results"). `structuredContent` keeps
// the JSON for clients that read it; `verbose: true` answers with JSON text as every other tool.

function hitLines(hit: CompactHit): string {
  const head = [hit.id, hit.type, ...(hit.score === undefined ? [] : [hit.score.toFixed(2)]), hit.age].join(" ");
  return [head, hit.headline, ...(hit.snippet === undefined ? [] : [hit.snippet])].join("\n");
}

/** A compact search: each hit as its id, type, score and age, then its headline and snippet. */
function renderHits(structured: { result: CompactHit[]; left_out?: number }): string {
  const { result: hits, left_out: leftOut } = structured;
  const lines = hits.length === 0 ? ["no entry matches"] : hits.map(hitLines);
  if (leftOut !== undefined && leftOut > 0) lines.push(`${leftOut} more did not fit max_tokens`);
  return lines.join("\n");
}

/** A compact page: each item's lines, then the cursor of the next page when there is one. */
function pageText<T>(structured: { items: T[]; next_cursor: string | null }, lines: (item: T) => string, none: string): string {
  const all = structured.items.length === 0 ? [none] : structured.items.map(lines);
  if (structured.next_cursor !== null) all.push(`next_cursor: ${structured.next_cursor}`);
  return all.join("\n");
}

/** A compact page of entries: the same lines as a search's hits. */
const renderEntries = (structured: { items: CompactHit[]; next_cursor: string | null }): string => pageText(structured, hitLines, "no entries");

function taskLines(task: CompactTask): string {
  const marks = [
    ...(task.blocked ? ["blocked"] : []),
    ...(task.assigned_to === null ? [] : [`@${task.assigned_to}`]),
    ...(task.due_at === undefined ? [] : [`due ${task.due_at}`]),
    ...(task.gate === undefined ? [] : [`gate ${task.gate}`]),
  ];
  return [[task.id, task.status, task.priority, task.age, ...marks].join(" "), task.title].join("\n");
}

/** A compact page of tasks: id, status, priority, age and marks, then the title. */
const renderTasks = (structured: { items: CompactTask[]; next_cursor: string | null }): string => pageText(structured, taskLines, "no tasks");

/** Tools whose compact results have a rendering of their own; the rest answer with JSON text. */
export const RENDERERS: Record<string, (structured: never) => string> = { memory_search: renderHits, memory_list: renderEntries, task_list: renderTasks };
