import pg from "pg";
import type { EventWakeups } from "../store.js";

/** The channel a transaction that wrote events notifies; PostgreSQL delivers it at commit. */
export const EVENTS_CHANNEL = "cairn_events";
const RECONNECT_MS = 1_000;

/**
 * One listening connection per process. Notifications only wake; the listeners read the log by
 * seq, so a lost or merged notification loses nothing. After the connection drops and comes back,
 * listeners are woken once, for what was committed meanwhile.
 */
export class PgEventWakeups implements EventWakeups {
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  /** `sender`: what this store's transactions notify with; their own commits wake its bus already. */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly sender: string,
  ) {}

  async subscribe(listener: () => void): Promise<() => void> {
    this.listeners.add(listener);
    await this.connect();
    return () => this.listeners.delete(listener);
  }

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      const client = new pg.Client(this.config);
      client.on("notification", (message) => {
        if (message.payload !== this.sender) this.wake();
      });
      client.on("error", () => this.reconnect(client));
      client.on("end", () => this.reconnect(client));
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      this.client = client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private reconnect(client: pg.Client): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    const retry = (): void => {
      if (this.closed) return;
      this.connect().then(
        () => this.wake(),
        () => setTimeout(retry, RECONNECT_MS).unref(),
      );
    };
    setTimeout(retry, RECONNECT_MS).unref();
  }

  private wake(): void {
    for (const listener of this.listeners) listener();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
