import type { AgentRow } from "../store/agents.js";

// An agent seen (authenticated) this recently counts as online even without an open stream.
const ONLINE_WINDOW_MS = 5 * 60_000;

/**
 * Who is connected: the event streams each agent holds open, counted in this process. With
 * `last_seen_at` it says who is online.
 */
export class Presence {
  private readonly connected = new Map<string, number>();

  /** Counts an open connection (an event stream) as presence until the returned release is called. */
  connect(agentId: string): () => void {
    this.connected.set(agentId, (this.connected.get(agentId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.connected.get(agentId) ?? 1) - 1;
      if (left > 0) this.connected.set(agentId, left);
      else this.connected.delete(agentId);
    };
  }

  /** How many connections the agent holds open now. */
  connections(agentId: string): number {
    return this.connected.get(agentId) ?? 0;
  }

  /** Seen within the last five minutes, or holding an event stream open. */
  isOnline(row: Pick<AgentRow, "agent_id" | "last_seen_at">): boolean {
    const seenRecently = row.last_seen_at !== null && Date.now() - Date.parse(row.last_seen_at) < ONLINE_WINDOW_MS;
    return seenRecently || this.connections(row.agent_id) > 0;
  }
}
