// The newest events, newest first, in one request (GET /events?order=desc).

import { api, query } from "./api.js";
import type { EventRecord } from "../../src/wire/events.js";

export interface EventFilter {
  type?: string | undefined;
  agent?: string | undefined;
}

/** At most 500, the API's page size. */
export async function latestEvents(count: number, filter: EventFilter = {}): Promise<EventRecord[]> {
  const response = await api.get<EventRecord[]>("/events" + query({ since: "seq:0", order: "desc", type: filter.type, agent: filter.agent, limit: count }));
  return response.data;
}

/** Events that arrived live followed by those read from the log, each once, newest first. */
export function newestDistinct(live: readonly EventRecord[], fetched: readonly EventRecord[]): EventRecord[] {
  const byId = new Map<string, EventRecord>();
  for (const event of [...live, ...fetched]) if (!byId.has(event.id)) byId.set(event.id, event);
  return [...byId.values()].sort((a, b) => b.seq - a.seq);
}
