import type { Store } from "../store/store.js";
import type { OutcomeRow } from "../store/tasks.js";
import type { AgentPerformance, TagPerformance } from "../wire/agents.js";
import { viewpointOf, type Caller } from "./caller.js";

/** The outcome counts an agent's record and each of its tags share. */
type OutcomeStats = Omit<TagPerformance, "tag">;

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return Math.round(value * 1000) / 1000;
}

function stats(rows: OutcomeRow[]): OutcomeStats {
  const completed = rows.filter((row) => row.outcome === "completed").length;
  const failed = rows.length - completed;
  return {
    completed,
    failed,
    success_rate: rows.length === 0 ? null : Math.round((completed / rows.length) * 10000) / 10000,
    median_seconds: median(rows.map((row) => row.seconds)),
  };
}

/** Per agent and per tag: outcomes of the tasks the caller can see (`tag` narrows to one tag). */
export async function agentPerformance(store: Store, caller: Caller, tag?: string): Promise<AgentPerformance[]> {
  const byAgent = new Map<string, OutcomeRow[]>();
  for (const row of await store.tasks.outcomes(store.reader, viewpointOf(caller), tag)) {
    const list = byAgent.get(row.agent_id) ?? [];
    list.push(row);
    byAgent.set(row.agent_id, list);
  }
  return [...byAgent.entries()].map(([agentId, rows]) => {
    const byTag = new Map<string, OutcomeRow[]>();
    for (const row of rows) {
      for (const rowTag of JSON.parse(row.tags) as string[]) {
        if (tag !== undefined && rowTag !== tag) continue;
        byTag.set(rowTag, [...(byTag.get(rowTag) ?? []), row]);
      }
    }
    return {
      agent_id: agentId,
      ...stats(rows),
      by_tag: [...byTag.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, tagged]) => ({ tag: name, ...stats(tagged) })),
    };
  });
}
