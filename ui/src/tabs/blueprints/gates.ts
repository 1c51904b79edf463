// Approving a human gate (CONTRACT §17): the gate's task is reserved for the UI's agent, which
// claims it and completes it. A gate whose claim went through but whose completion was refused is
// still claimed: approving it again only completes it.

import { api, encode } from "../../api.js";
import type { Task } from "../../../../src/wire/tasks.js";

/** `output`: for a gate whose node declares an `output_schema` (the task's page asks for it). */
export async function approveGate(task: { id: string; status: string }, comment = "Approved in the web UI.", output?: unknown): Promise<Task> {
  if (task.status === "open") await api.post<Task>(`/tasks/${encode(task.id)}/claim`, {});
  return (await api.post<Task>(`/tasks/${encode(task.id)}/complete`, output === undefined ? { comment } : { comment, output })).data;
}

/** What a gate is, in a sentence, for a task's page. */
export function gateSentence(gate: "human" | "timer" | "task", assignee: string | null): string {
  if (gate === "timer") return "a timer gate: the server completes it when it is due; no agent claims it";
  if (gate === "task") return "a task gate: it completes when the task it waits for completes; no agent claims it";
  return `a human gate: ${assignee ?? "the web UI's user"} approves it in the web UI`;
}
