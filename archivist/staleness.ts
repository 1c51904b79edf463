import type { AgentRecord } from "../src/wire/agents.js";
import type { MemoryEntry } from "../src/wire/memory.js";
import type { CairnClient } from "./client.js";
import type { DirectiveConflict } from "./directives.js";

const DAY_MS = 86_400_000;

/** `#tag` tokens: a tag name after a `#` that does not continue a word (so `C#` or `a#b` are not tags). */
const TAG_TOKEN = /(?<![\w#])#([A-Za-z0-9][\w.-]{0,63})/g;
/** `@agent` tokens, in agent-id syntax. */
const AGENT_TOKEN = /(?<![\w@])@([a-z0-9][a-z0-9_-]{0,63})/g;

/** The tags a directive references: its `#tag` tokens and its own tags. */
export function referencedTags(directive: MemoryEntry): string[] {
  const tokens = [...directive.content.matchAll(TAG_TOKEN)].map((match) => (match[1] as string).replace(/[.-]+$/, ""));
  return [...new Set([...tokens, ...directive.tags])];
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The agents a directive references: its `@id` tokens and every known agent id it names as a whole word. */
export function referencedAgents(directive: MemoryEntry, knownIds: string[]): string[] {
  const tokens = [...directive.content.matchAll(AGENT_TOKEN)].map((match) => match[1] as string);
  const named = knownIds.filter((id) => new RegExp(`(?<![\\w-])${escapeRegExp(id)}(?![\\w-])`, "i").test(directive.content));
  return [...new Set([...tokens, ...named])];
}

export interface StalenessContext {
  client: CairnClient;
  agents: AgentRecord[];
  now: Date;
  agentDays: number;
  ageDays: number;
}

/** Whether any live entry other than a directive, in the directive's project (anywhere, for a global one), carries `tag`. */
async function tagInUse(client: CairnClient, tag: string, project: string | null): Promise<boolean> {
  const page = await client.page("memory_list", { tag, limit: 20, ...(project === null ? {} : { project }) });
  // A full page of nothing but directives: assume the tag is in use rather than warn on a guess.
  return page.items.some((entry) => entry.type !== "directive") || page.nextCursor !== null;
}

/** The reasons (possibly none) why a directive may be stale: the seed's three signals. */
export async function stalenessReasons(directive: MemoryEntry, context: StalenessContext): Promise<string[]> {
  const reasons: string[] = [];
  for (const tag of referencedTags(directive)) {
    if (!(await tagInUse(context.client, tag, directive.project))) {
      reasons.push(`it references the tag "${tag}", which no current memory entry of ${directive.project === null ? "any project" : `project ${directive.project}`} carries`);
    }
  }
  const cutoff = context.now.getTime() - context.agentDays * DAY_MS;
  const byId = new Map(context.agents.map((agent) => [agent.agent_id, agent]));
  for (const id of referencedAgents(directive, [...byId.keys()])) {
    const agent = byId.get(id);
    const seen = agent ? Date.parse(agent.last_seen_at ?? agent.created_at) : Number.NEGATIVE_INFINITY;
    if (seen < cutoff) {
      reasons.push(agent ? `it references the agent ${id}, not seen for more than ${context.agentDays} days` : `it references the agent ${id}, which does not exist`);
    }
  }
  const neverUpdated = directive.version === 1 && directive.updated_at === directive.created_at;
  if (neverUpdated && Date.parse(directive.created_at) < context.now.getTime() - context.ageDays * DAY_MS) {
    reasons.push(`it was written more than ${context.ageDays} days ago and never updated`);
  }
  return reasons;
}

export const staleKey = (directiveId: string): string => `directive_stale_notified:${directiveId}`;
export const conflictKey = (a: string, b: string): string => `directive_conflict_notified:${[a, b].sort().join(":")}`;

/**
 * Runs `send` unless the state key says it ran within the cooldown; records when it ran. Returns
 * whether it sent.
 */
export async function onceWithin(client: CairnClient, key: string, cooldownHours: number, now: Date, send: () => Promise<unknown>): Promise<boolean> {
  const last = await client.state<string>(key);
  if (typeof last === "string" && now.getTime() - Date.parse(last) < cooldownHours * 3_600_000) return false;
  await send();
  await client.setState(key, now.toISOString());
  return true;
}

export function staleMessage(directive: MemoryEntry, reasons: string[]): { subject: string; body: string } {
  return {
    subject: "Directive may be stale",
    body: [
      `Directive ${directive.id} may be stale: ${reasons.join("; ")}.`,
      "",
      `Project: ${directive.project ?? "global"}`,
      `Content: ${directive.content}`,
      "",
      "Please review it, and delete it if it is no longer relevant. The archivist never changes or deletes a directive.",
    ].join("\n"),
  };
}

export function conflictMessage(conflict: DirectiveConflict, project: string | null): { subject: string; body: string } {
  return {
    subject: "Directive conflict detected",
    body: [
      `Two directives may conflict (similarity ${conflict.similarity.toFixed(3)}) in project ${project ?? "global"}.`,
      "",
      `${conflict.a.id}: ${conflict.a.content}`,
      `${conflict.b.id}: ${conflict.b.content}`,
      "",
      "Both stay loaded and the archivist flags the ambiguity when it uses them. Resolve it by deleting one of them or editing its content; the archivist never changes a directive itself.",
    ].join("\n"),
  };
}
