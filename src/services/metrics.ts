import type { EmbeddingLane, EmbeddingQueue } from "../embed/queue.js";
import type { EventBus } from "../events/bus.js";
import type { Store } from "../store/store.js";
import type { ArchivistService } from "./archivist.js";

/**
 * Custom event types are any dotted name an agent chooses; past this many distinct types the rest
 * are counted together, so no agent can grow the metrics without bound.
 */
const MAX_EVENT_TYPES = 200;
const OTHER_EVENT_TYPES = "other";
/** Agents counted by name in the tokens served; past this many, the rest are counted together. */
const MAX_AGENT_LABELS = 500;
const OTHER_AGENTS = "other";

/** How an answer reached an agent. */
export type Transport = "rest" | "mcp";

export interface MetricsSnapshot {
  /** Bytes on disk per database file (SQLite's WAL too, when there is one; PostgreSQL's database by name). */
  databaseFiles: { file: string; bytes: number }[];
  embedding: {
    model: string;
    status: "loading" | "ready" | "unavailable";
    waiting: number;
    /** Texts waiting in each lane of this process's queue now, and embedded through it since start. */
    lanes: Record<EmbeddingLane, { waiting: number; embedded: number }>;
  };
  archivist: { holder: string | null; lastPassAt: string | null };
}

/**
 * What `/metrics` reports that lives below the transports: events counted as they are emitted (by
 * this process, since it started), and the state of the database, the embedder and the archivist
 * read when asked.
 */
export class MetricsService {
  private readonly events = new Map<string, number>();
  private readonly tokensByAgent = new Map<string, number>();
  private readonly tokensByOperation = new Map<string, { operation: string; transport: Transport; tokens: number }>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    private readonly embeddingQueue: EmbeddingQueue,
    private readonly archivist: ArchivistService,
    private readonly configuredModel: string,
  ) {
    this.unsubscribe = bus.subscribe((event) => {
      const type = this.events.has(event.type) || this.events.size < MAX_EVENT_TYPES ? event.type : OTHER_EVENT_TYPES;
      this.events.set(type, (this.events.get(type) ?? 0) + 1);
    });
  }

  eventCounts(): ReadonlyMap<string, number> {
    return this.events;
  }

  /**
   * Counts what an answer cost the agent that read it, in tokens (docs/search.md "Budgets"): per
   * agent, and per operation (a tool's name over MCP) and transport. Operations are a fixed set.
   */
  served(agentId: string, operation: string, transport: Transport, tokens: number): void {
    const agent = this.tokensByAgent.has(agentId) || this.tokensByAgent.size < MAX_AGENT_LABELS ? agentId : OTHER_AGENTS;
    this.tokensByAgent.set(agent, (this.tokensByAgent.get(agent) ?? 0) + tokens);
    const key = `${transport} ${operation}`;
    const held = this.tokensByOperation.get(key) ?? { operation, transport, tokens: 0 };
    held.tokens += tokens;
    this.tokensByOperation.set(key, held);
  }

  tokensServed(): { byAgent: ReadonlyMap<string, number>; byOperation: Iterable<{ operation: string; transport: Transport; tokens: number }> } {
    return { byAgent: this.tokensByAgent, byOperation: this.tokensByOperation.values() };
  }

  async snapshot(): Promise<MetricsSnapshot> {
    const status = await this.archivist.status(true);
    const at = status.last_pass?.at;
    return {
      databaseFiles: (await this.store.maintenance.storageSizes()).map(({ name, bytes }) => ({ file: name, bytes })),
      embedding: {
        model: this.configuredModel,
        status: this.embeddingQueue.status,
        waiting: await this.store.memory.unembeddedCount(this.store.reader),
        lanes: this.lanes(),
      },
      archivist: { holder: status.holder, lastPassAt: typeof at === "string" ? at : null },
    };
  }

  private lanes(): Record<EmbeddingLane, { waiting: number; embedded: number }> {
    const { waiting, stats } = this.embeddingQueue;
    const lane = (name: EmbeddingLane) => ({ waiting: waiting[name], embedded: stats.lanes[name] });
    return { query: lane("query"), write: lane("write"), bulk: lane("bulk") };
  }

  close(): void {
    this.unsubscribe();
  }
}
