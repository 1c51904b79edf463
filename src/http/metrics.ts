import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { forbidden, InternalError } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import type { OperationGateway } from "../../tools/gateway.js";
import { credentialsOf } from "./credentials.js";
import type { HostPolicy } from "./hosts.js";

export interface MetricSources {
  eventStreams(): number;
  mcpSessions(): number;
}

type Snapshot = Awaited<ReturnType<OperationGateway["metrics"]["snapshot"]>>;

const EMBEDDING_STATES = ["loading", "ready", "unavailable"] as const;
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LOCK_BUCKETS = [0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.25, 1];

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();
/** Constant time whatever the lengths: both sides are hashed to the same size first. */
const sameSecret = (given: string, expected: string): boolean => timingSafeEqual(digest(given), digest(expected));

/** Requests outside the catalogue, labelled by the part of the server that answered (a fixed set). */
export function transportLabel(path: string): string {
  if (path === "/mcp") return "mcp";
  if (path === "/metrics") return "metrics";
  if (path.startsWith("/oauth/") || path.startsWith("/.well-known/")) return "oauth";
  if (path === "/" || path === "/ui" || path.startsWith("/ui/")) return "ui";
  if (path === "/openapi.json" || path === "/docs" || path.startsWith("/docs/")) return "docs";
  return "unmatched";
}

/**
 * One Prometheus registry per server (tests run several servers in one process, so never the
 * global one): request counts and latencies fed by the HTTP app, and gauges read at scrape time.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"operation" | "status">;
  private readonly latency: Histogram<"operation">;
  /** Read once per scrape, before the gauges collect, and shared by those that report it. */
  private snapshot: Snapshot | null = null;

  constructor(
    private readonly gateway: OperationGateway,
    private readonly hosts: HostPolicy,
    sources: MetricSources,
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: "cairn_http_requests_total",
      help: "HTTP requests answered, by operation (catalogue name, or the transport: mcp, oauth, ui, docs, metrics, unmatched) and status",
      labelNames: ["operation", "status"],
      registers,
    });
    this.latency = new Histogram({
      name: "cairn_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by operation; event streams are not included",
      labelNames: ["operation"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({ name: "cairn_build_info", help: "The running version", labelNames: ["version"], registers }).set({ version: packageVersion }, 1);
    const lockHolds = new Histogram({
      name: "cairn_events_lock_hold_seconds",
      help: "PostgreSQL only: how long each transaction that wrote events held the events' lock (from its first event to its end)",
      buckets: LOCK_BUCKETS,
      registers: [],
    });
    if (gateway.onEventsLockHeld((seconds) => lockHolds.observe(seconds))) this.registry.registerMetric(lockHolds);
    if (gateway.eventLogReads() !== false) {
      new Counter({
        name: "cairn_event_log_reads_total",
        help: "PostgreSQL only: reads of the event log this process made to hand on events (at most one per 5 ms, each covering every event committed before it)",
        registers,
        collect() {
          this.reset();
          this.inc(gateway.eventLogReads() || 0);
        },
      });
    }
    new Gauge({
      name: "cairn_event_streams_open",
      help: "Open server-sent event streams",
      registers,
      collect() {
        this.set(sources.eventStreams());
      },
    });
    new Gauge({
      name: "cairn_mcp_sessions_open",
      help: "Open MCP sessions over Streamable HTTP",
      registers,
      collect() {
        this.set(sources.mcpSessions());
      },
    });
    const current = (): Snapshot => {
      if (this.snapshot === null) throw new InternalError("invariant", "metrics collected outside a scrape");
      return this.snapshot;
    };
    new Gauge({
      name: "cairn_database_size_bytes",
      help: "Bytes on disk per database file",
      labelNames: ["file"],
      registers,
      collect() {
        this.reset();
        for (const { file, bytes } of current().databaseFiles) this.set({ file }, bytes);
      },
    });
    new Gauge({
      name: "cairn_embedding_model_state",
      help: "1 for the embedding model's current state (loading, ready, unavailable), 0 for the others",
      labelNames: ["model", "state"],
      registers,
      collect() {
        const { model, status } = current().embedding;
        this.reset();
        for (const state of EMBEDDING_STATES) this.set({ model, state }, state === status ? 1 : 0);
      },
    });
    new Gauge({
      name: "cairn_embedding_queue_entries",
      help: "Memory entries stored without a vector, waiting for the embedding model",
      registers,
      collect() {
        this.set(current().embedding.waiting);
      },
    });
    new Gauge({
      name: "cairn_embedding_texts_waiting",
      help: "Texts waiting in this process's embedding queue, by lane (query, write, bulk; served in that order)",
      labelNames: ["lane"],
      registers,
      collect() {
        this.reset();
        for (const [lane, { waiting }] of Object.entries(current().embedding.lanes)) this.set({ lane }, waiting);
      },
    });
    new Counter({
      name: "cairn_embedding_texts_total",
      help: "Texts this process has embedded since it started, by lane",
      labelNames: ["lane"],
      registers,
      collect() {
        this.reset();
        for (const [lane, { embedded }] of Object.entries(current().embedding.lanes)) this.inc({ lane }, embedded);
      },
    });
    new Counter({
      name: "cairn_events_total",
      help: "Events emitted by this server process since it started, by type",
      labelNames: ["type"],
      registers,
      collect() {
        this.reset();
        for (const [type, count] of gateway.metrics.eventCounts()) this.inc({ type }, count);
      },
    });
    new Counter({
      name: "cairn_agent_tokens_served_total",
      help: "Tokens (4 characters of the answer each) served to each agent by this server process since it started, over REST and MCP",
      labelNames: ["agent"],
      registers,
      collect() {
        this.reset();
        for (const [agent, tokens] of gateway.metrics.tokensServed().byAgent) this.inc({ agent }, tokens);
      },
    });
    new Counter({
      name: "cairn_tokens_served_total",
      help: "Tokens (4 characters of the answer each) served to agents by this server process since it started, by operation (a tool's name over MCP) and transport",
      labelNames: ["operation", "transport"],
      registers,
      collect() {
        this.reset();
        for (const { operation, transport, tokens } of gateway.metrics.tokensServed().byOperation) this.inc({ operation, transport }, tokens);
      },
    });
    new Gauge({
      name: "cairn_archivist_lease_held",
      help: "1 while an archivist holds the lease (labelled with its holder name), else 0",
      labelNames: ["holder"],
      registers,
      collect() {
        const { holder } = current().archivist;
        this.reset();
        this.set({ holder: holder ?? "" }, holder === null ? 0 : 1);
      },
    });
    new Gauge({
      name: "cairn_archivist_last_pass_timestamp_seconds",
      help: "When the archivist's last scheduled pass started (Unix seconds); 0 before the first",
      registers,
      collect() {
        const at = current().archivist.lastPassAt;
        this.set(at === null ? 0 : Date.parse(at) / 1000);
      },
    });
  }

  /** Counts a finished request; a stream's lifetime is no latency, so streams are only counted. */
  observe(operation: string, status: number, seconds: number, streamed: boolean): void {
    this.requests.inc({ operation, status: String(status) });
    if (!streamed) this.latency.observe({ operation }, seconds);
  }

  /** `GET /metrics`: the owner role, or the METRICS_TOKEN bearer token when one is set. */
  readonly handle = async (request: Request, response: Response): Promise<void> => {
    const token = this.gateway.config.METRICS_TOKEN;
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.get("authorization") ?? "")?.[1];
    // A bearer that is not the metrics token may still be an owner's OAuth token.
    if (token === "" || bearer === undefined || !sameSecret(bearer, token)) {
      const caller = await this.gateway.authenticate(credentialsOf(request, this.hosts));
      response.locals.caller = caller;
      this.gateway.refuseMeshCaller(caller);
      if (caller.role !== "owner") throw forbidden("metrics require the owner role or the metrics token");
      await this.gateway.takeRequest(caller.agentId);
    }
    response.type(this.registry.contentType).send(await this.scrape());
  };

  // Scrapes run one at a time: the gauges read the one snapshot taken for the scrape in progress.
  private scraping: Promise<unknown> = Promise.resolve();

  private scrape(): Promise<string> {
    const text = this.scraping.then(async () => {
      this.snapshot = await this.gateway.metrics.snapshot();
      try {
        return await this.registry.metrics();
      } finally {
        this.snapshot = null;
      }
    });
    this.scraping = text.catch(() => undefined);
    return text;
  }
}
