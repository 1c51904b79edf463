import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { auditDir, databasePath, packageVersion } from "../core/paths.js";
import type { EmbedderLoader } from "../embed/embedder.js";
import { embedderLoaderFor } from "../embed/models.js";
import { EmbeddingQueue } from "../embed/queue.js";
import { AuditLog } from "../events/audit.js";
import { OAuthAuthorizations } from "./oauth/authorization.js";
import { OAuthClients, REGISTRATIONS_PER_MINUTE } from "./oauth/clients.js";
import { OAuthGrants } from "./oauth/grants.js";
import { CIMD_FETCHES_PER_MINUTE, MetadataDocuments } from "./oauth/metadata-documents.js";
import { OAuthTokens } from "./oauth/tokens.js";
import { UiSessionService } from "./ui-sessions.js";
import { EventBus } from "../events/bus.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/store.js";
import { ensureDataDir } from "./data-dir.js";
import { openInstance, type Instance } from "./instance.js";
import { guardedFeedFetcher } from "./feeds/guarded-fetcher.js";
import { OutboundFetcher, type Resolver } from "../net/fetch.js";
import { outboundSettingsOf } from "../net/policy.js";
import { FeedParseThread } from "./feeds/parse-thread.js";
import { FeedPoller } from "./feeds/poller.js";
import { FeedPolls } from "./feeds/polls.js";
import { FeedService } from "./feeds/service.js";
import { MeshTokens } from "./mesh/tokens.js";
import { CopyWrites } from "./mesh/copy-writes.js";
import { AntiEntropy } from "./mesh/anti-entropy.js";
import { CopyApplier } from "./mesh/apply.js";
import { PullClient } from "./mesh/pull.js";
import { MeshSync } from "./mesh/sync.js";
import { MeshSyncer } from "./mesh/syncer.js";
import { MeshSyncService } from "./mesh/sync-service.js";
import { MeshGossipService } from "./mesh/gossip.js";
import { MeshHandshakes } from "./mesh/handshake.js";
import { MeshLinks } from "./mesh/links.js";
import { PeerClient } from "./mesh/peer-client.js";
import { DiscoveredPeers } from "./mesh/discovered.js";
import { AgentService } from "./agents.js";
import { ArchivistService } from "./archivist.js";
import { AuthService } from "./auth.js";
import { BootstrapIdentities } from "./bootstrap.js";
import { CurationService } from "./curation.js";
import { CaptureService } from "./captures/service.js";
import { redactJson, warmRedaction } from "./redaction.js";
import { BlueprintService } from "./blueprints/service.js";
import { BlueprintRuns } from "./blueprints/runs.js";
import { StoreCheckReads } from "./blueprints/checks.js";
import { RunEngine } from "./blueprints/engine.js";
import { CompileService } from "./compile/service.js";
import { DecisionService } from "./decisions.js";
import { GraphService } from "./graph/service.js";
import { KnowledgeService } from "./knowledge.js";
import { LogService } from "./logs.js";
import { EventService } from "./events.js";
import { ExportService } from "./export.js";
import { ImportService } from "./import.js";
import { IdempotencyService } from "./idempotency.js";
import { Jobs } from "./jobs.js";
import { MemoryService } from "./memory.js";
import { MemoryEmbeddings } from "./memory-embeddings.js";
import { MemoryWrites } from "./memory-writes.js";
import { MemoryFeed } from "./memory-feed/service.js";
import { MerkleSummaries } from "./merkle/service.js";
import { MemorySearch } from "./memory-search.js";
import type { Caller } from "./caller.js";
import { MessageService } from "./messages.js";
import { MetricsService } from "./metrics.js";
import { agentPerformance } from "./performance.js";
import { Presence } from "./presence.js";
import { ProjectService } from "./projects.js";
import { Quotas } from "./quotas.js";
import { SessionService } from "./sessions.js";
import { TaskService } from "./tasks.js";
import { RateLimiter } from "./rate-limit.js";
import { clientKey, FailureThrottle } from "./throttle.js";
import { ReadRecorder } from "./reads.js";
import type { AgentPerformance } from "../wire/agents.js";
import type { Health } from "../wire/health.js";

export interface ServiceOptions {
  config: Config;
  log: Logger;
  /** Live events an event stream may fall behind by before it is disconnected (default 1,000). */
  streamQueueLimit?: number;
  /** Replaces the loader `EMBEDDING_MODEL` selects (the CLI's doctor probes with it). */
  embedderLoader?: EmbedderLoader;
  /** Background jobs (sweeper, backfill, pruning); off for one-shot CLI commands. */
  jobs?: boolean;
  /** How often expired entries are swept (default 15 s: well inside the contract's minute). */
  sweepIntervalMs?: number;
  /** How often blueprint timer gates that are due are passed (default 5 s). */
  timerSweepIntervalMs?: number;
  /** How often lapsed task claims are released (default 5 s). */
  leaseSweepIntervalMs?: number;
  /** How often the store is pruned: idempotency keys, quotas, OAuth grants and clients, UI sessions, events, logs (default an hour). */
  pruneIntervalMs?: number;
  /** Load the embedding model (off for CLI commands that never embed). */
  embeddings?: boolean;
  /**
   * Apply AGENT_KEYS and create the UI and archivist identities (default on). Off for one-shot CLI
   * commands: their environment often lacks the server's AGENT_KEYS, and reconciling against it
   * would strip the static agents' keys from under a running server.
   */
  bootstrap?: boolean;
  /** Entries each in-memory limiter and throttle table keeps at most (default 10,000). */
  throttleCapacity?: number;
  /** How host names are resolved for outbound calls (tests play a hostile DNS with it). */
  resolve?: Resolver;
}

/** OAuth 2.1 (CONTRACT §19): tokens, clients, the authorization endpoint's checks and consent, grants. */
interface OAuthServices {
  tokens: OAuthTokens;
  clients: OAuthClients;
  authorizations: OAuthAuthorizations;
  grants: OAuthGrants;
  /** Client metadata documents cached in memory (CIMD). */
  documents: MetadataDocuments;
}

export interface Services {
  config: Config;
  log: Logger;
  store: Store;
  /** This installation's id and name, and the key of the secrets it keeps (CONTRACT §11). */
  instance: Instance;
  bus: EventBus;
  embeddingQueue: EmbeddingQueue;
  embeddings: MemoryEmbeddings;
  /** Who a request's agent key or bearer token says it is. */
  auth: AuthService;
  agents: AgentService;
  /** AGENT_KEYS, the UI and archivist identities, and their keys in credentials.json. */
  bootstrap: BootstrapIdentities;
  memory: MemoryService;
  search: MemorySearch;
  /** The outbound JSON Feed and Atom feeds of memory (CONTRACT §15). */
  memoryFeed: MemoryFeed;
  /** The merkle summary peers compare their copies by (CONTRACT §15). */
  merkle: MerkleSummaries;
  projects: ProjectService;
  tasks: TaskService;
  decisions: DecisionService;
  blueprints: BlueprintService;
  runs: BlueprintRuns;
  compile: CompileService;
  captures: CaptureService;
  /** Tokens this instance grants peers (CONTRACT §16). */
  meshTokens: MeshTokens;
  /** Syncing links on request, and suppressing copies (§16); scheduled syncs run with the jobs. */
  meshSync: MeshSyncService;
  /** Links to peers (CONTRACT §16): made, listed, paused, removed. */
  meshLinks: MeshLinks;
  /** A peer's handshake: the link back it asks for. */
  meshHandshakes: MeshHandshakes;
  /** What this instance tells a peer about itself and its peers, and the round that asks them. */
  meshGossip: MeshGossipService;
  /** Peers heard of by mDNS or gossip: suggestions for the owner (CONTRACT §16). */
  meshDiscovered: DiscoveredPeers;
  /** Feed subscriptions (CONTRACT §15); their polling runs with the jobs. */
  feeds: FeedService;
  messages: MessageService;
  sessions: SessionService;
  events: EventService;
  idempotency: IdempotencyService;
  oauth: OAuthServices;
  archivist: ArchivistService;
  curation: CurationService;
  graph: GraphService;
  knowledge: KnowledgeService;
  logs: LogService;
  /** The owner's JSON Lines export and import (CONTRACT §10a). */
  exporter: ExportService;
  importer: ImportService;
  uiSessions: UiSessionService;
  /** Figures for `/metrics` that live below the transports. */
  metrics: MetricsService;
  /** Where clients reach this server: PUBLIC_URL, or the address it listens on once it does. */
  site: { url: string };
  rateLimiter: RateLimiter;
  /** Failed credential checks per address and claimed identity (CONTRACT §2.2a). */
  throttle: FailureThrottle;
  performance(caller: Caller, tag?: string): Promise<AgentPerformance[]>;
  /** Set when this start generated keys into it. */
  credentialsWritten: string | null;
  health(): Promise<Health>;
  /**
   * The server listens on `port` (and `site.url` is final): what announces it starts now. Resolves
   * once the start is over (the model loaded, or waited for long enough), when what only warms up
   * may take the CPU.
   */
  listening(port: number): Promise<void>;
  close(): Promise<void>;
}

/** The longest the warm-ups after a start wait for the embedding model before they start anyway. */
const WARMUP_AFTER_MS = 10_000;

export async function openServices(options: ServiceOptions): Promise<Services> {
  const { config, log } = options;
  ensureDataDir(config, log);
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    file: databasePath(config.DATA_DIR),
    onHookError: (error) => log.error("after-commit hook failed", { error }),
    ann: { threshold: config.VECTOR_ANN_THRESHOLD },
    onAnnError: (error) => log.warn("the HNSW vector index failed; searches scan", { error }),
    onCheckpointError: (error) => log.error("WAL checkpoints in their thread failed; SQLite checkpoints inside commits again", { error }),
  });
  const instance = await openInstance(store, config).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const bus = new EventBus(store);
  await bus.start();
  const embeddingQueue = new EmbeddingQueue(options.embedderLoader ?? embedderLoaderFor(config), log.child({ component: "embeddings" }));
  const embeddings = new MemoryEmbeddings(store, embeddingQueue, log.child({ component: "embeddings" }));
  const reads = new ReadRecorder(store, log.child({ component: "reads" }));
  const throttle = new FailureThrottle(options.throttleCapacity, store.authFailures);
  const rateLimiter = new RateLimiter(config.RATE_LIMIT_PER_MINUTE, options.throttleCapacity, store.rateLimits);
  const site = { url: config.PUBLIC_URL };
  const auth = new AuthService(store, config, throttle, site);
  const presence = new Presence();
  const grants = new OAuthGrants(store, bus);
  const bootstrap = new BootstrapIdentities(store, config, log, grants);
  const agents = new AgentService(store, bus, config, throttle, presence, bootstrap, grants);
  // Every creation and deletion of an entry, whoever does it, goes through this one (DESIGN §4a).
  const writes = new MemoryWrites(store, bus, embeddings, instance.id);
  const quotas = new Quotas(store, config, embeddingQueue);
  const memory = new MemoryService(store, writes, config, embeddings, reads, quotas);
  const search = new MemorySearch(store, embeddings, reads, config);
  const memoryFeed = new MemoryFeed(store, instance, site);
  const merkle = new MerkleSummaries(store, instance.id);
  // Entries from before the leaves existed are stamped before anything reads a summary.
  await merkle.stampUnstamped();
  const copies = new CopyWrites(store, writes, embeddings);
  const projects = new ProjectService(store, bus, writes, copies);
  const tasks = new TaskService(store, bus, config);
  const decisions = new DecisionService(store, bus, config, tasks, writes);
  const blueprints = new BlueprintService(store, bus);
  const runEngine = new RunEngine(store, bus, config, tasks, new StoreCheckReads(store));
  tasks.attachHooks(runEngine);
  const runs = new BlueprintRuns(store, bus, config, runEngine);
  const compile = new CompileService(store, bus, writes, embeddings, quotas);
  const captures = new CaptureService(store, bus, config);
  // The server's one way out to the network (CONTRACT §11): feeds now, mesh sync later.
  const outbound = new OutboundFetcher({ settings: outboundSettingsOf(config), ...(options.resolve ? { resolve: options.resolve } : {}) });
  const feedFetcher = guardedFeedFetcher(outbound);
  const feedParser = new FeedParseThread();
  const feedPolls = new FeedPolls(store, bus, memory, feedFetcher, feedParser, log.child({ component: "feeds" }), config.MAX_CONTENT_BYTES);
  const feeds = new FeedService(store, bus, feedFetcher, feedPolls);
  const feedPoller = new FeedPoller(store, feedPolls, log.child({ component: "feeds" }), config.FEEDS_POLL_SECONDS * 1000);
  const meshTokens = new MeshTokens(store, bus);
  const pull = new PullClient(outbound, config.MAX_BODY_BYTES);
  const applier = new CopyApplier(store, bus, copies, embeddings, instance.id, config.MAX_ENTRIES_PER_PROJECT);
  const meshLog = log.child({ component: "mesh" });
  const sync = new MeshSync(store, bus, instance, pull, applier, new AntiEntropy(pull, merkle, applier), {
    maxContentBytes: config.MAX_CONTENT_BYTES,
    antiEntropyHours: config.MESH_ANTI_ENTROPY_HOURS,
  }, meshLog);
  const meshSyncer = new MeshSyncer(store, sync, meshLog, config.MESH_SYNC_TICK_SECONDS * 1000);
  const meshSync = new MeshSyncService(store, sync, writes, copies);
  const peerClient = new PeerClient(outbound, config.MAX_BODY_BYTES);
  const meshSettings = { antiEntropyHours: config.MESH_ANTI_ENTROPY_HOURS };
  const meshLinks = new MeshLinks(store, bus, instance, site, meshTokens, peerClient, meshSettings);
  const meshHandshakes = new MeshHandshakes(store, bus, instance, peerClient, meshSettings);
  const meshDiscovered = new DiscoveredPeers(store, instance.id);
  const meshGossip = new MeshGossipService(store, instance, site, peerClient, meshDiscovered, log.child({ component: "mesh" }));
  // Only a serving process advertises: one-shot commands open the services without jobs.
  const mdns =
    config.MESH_MDNS === "on" && (options.jobs ?? true)
      ? new (await import("./mesh/mdns.js")).MdnsDiscovery(meshDiscovered, log.child({ component: "mdns" }), { host: config.HOST })
      : null;
  const messages = new MessageService(store, bus, config);
  const sessions = new SessionService(store, bus);
  const events = new EventService(store, bus, presence, options.streamQueueLimit ?? 1000);
  const idempotency = new IdempotencyService(store, log);
  const documentFetches = new RateLimiter(CIMD_FETCHES_PER_MINUTE, options.throttleCapacity, store.rateLimits);
  const documents = new MetadataDocuments(outbound, (address) => documentFetches.take(`oauth-cimd ${clientKey(address)}`));
  // Registrations are counted per address, apart from any agent's requests.
  const registrations = new RateLimiter(REGISTRATIONS_PER_MINUTE, options.throttleCapacity, store.rateLimits);
  const oauthClients = new OAuthClients(store, config, throttle, registrations, documents);
  const oauthTokens = new OAuthTokens(store, auth, rateLimiter, grants, site);
  const oauth: OAuthServices = {
    tokens: oauthTokens,
    clients: oauthClients,
    authorizations: new OAuthAuthorizations(store, bus, config, oauthClients, grants, oauthTokens, agents, site),
    grants,
    documents,
  };
  const archivist = new ArchivistService(store, bus);
  const curation = new CurationService(store, writes, messages, embeddings, config.MAX_CONTENT_BYTES);
  const graph = new GraphService(store, bus, writes);
  const knowledge = new KnowledgeService(store, writes, config, presence);
  const logs = new LogService(store);
  const exporter = new ExportService(store, config);
  const importer = new ImportService(store, bus, config, embeddings, writes);
  const uiSessions = new UiSessionService(store, config, throttle);
  const metrics = new MetricsService(store, bus, embeddingQueue, archivist, config.EMBEDDING_MODEL);
  const credentialsWritten = (options.bootstrap ?? true) ? await bootstrap.apply() : null;
  if (options.embeddings ?? true) embeddingQueue.start();
  // The redaction rules' warm-up (a few rules a turn, on this thread) waits for the model's load,
  // the longest part of a start, and for the server to listen (its CPU would otherwise delay both),
  // and then runs in the background; a capture arriving before it ends compiles what is left.
  // One-shot commands and services no server serves never warm up: they compile on first use.
  // The bit mirror's copy (SQLite) waits the same way, else the first scan starts it; so does the
  // server's own warm-up (`listening`'s promise: the MCP endpoint's modules).
  let listened = (): void => undefined;
  const serving = new Promise<void>((resolve) => (listened = resolve));
  // Made when first asked: a one-shot command has nothing to warm up and no timer to wait on.
  let started: Promise<void> | null = null;
  const startOver = (): Promise<void> =>
    (started ??= Promise.all([(options.embeddings ?? true) ? embeddingQueue.settled(WARMUP_AFTER_MS) : undefined, serving]).then(() => undefined));
  if (options.jobs ?? true) {
    void startOver().then(() => {
      if (closed) return undefined;
      store.vectors.warm?.();
      return warmRedaction();
    });
  }

  const jobs = new Jobs(log.child({ component: "jobs" }), store);
  if (options.jobs ?? true) {
    jobs.once("sweep-expired", options.sweepIntervalMs ?? 15_000, () => memory.sweepExpired());
    jobs.once("embed-backfill", 60_000, () => embeddings.backfill());
    jobs.once("sweep-captures", 600_000, () => captures.sweep());
    jobs.once("pass-timer-gates", options.timerSweepIntervalMs ?? 5_000, () => runEngine.passDueTimers());
    if (config.TASK_LEASE_SECONDS > 0) jobs.once("release-lapsed-claims", options.leaseSweepIntervalMs ?? 5_000, () => tasks.releaseLapsed());
    jobs.every("sweep-limiters", 60_000, () => {
      rateLimiter.sweep();
      registrations.sweep();
      documentFetches.sweep();
      throttle.sweep();
    });
    feedPoller.start();
    meshSyncer.start();
    jobs.once("mesh-gossip", config.MESH_GOSSIP_SECONDS * 1000, () => meshGossip.round());
    // Gossip and mDNS add to it whatever the network says; this keeps it bounded.
    jobs.once("prune-discovered-peers", 600_000, () => meshDiscovered.prune());
    if (store.authFailures) jobs.once("forget-auth-failures", 60_000, () => throttle.forgetShared());
    jobs.once("prune", options.pruneIntervalMs ?? 3600_000, async () => {
      await idempotency.prune();
      await quotas.prune();
      await oauth.grants.prune(config.UI_AGENT_ID);
      await oauth.clients.pruneExpired();
      await uiSessions.pruneIdle();
      const retained = new Date(Date.now() - config.EVENT_RETENTION_DAYS * 86400_000).toISOString();
      await events.prune(retained);
      await logs.prune(retained);
    });
  }

  // The audit log belongs to the long-running server, not to one-shot commands that open the store.
  const audit = config.AUDIT_LOG === "on" && (options.jobs ?? true) ? new AuditLog(store, auditDir(config.DATA_DIR), config.AUDIT_COMMIT_SECONDS, log.child({ component: "audit" }), redactJson) : null;
  const auditStarted = audit?.start().catch((error: unknown) => log.error("audit log unavailable", { error }));

  let closed = false;
  return {
    config,
    log,
    store,
    instance,
    bus,
    embeddingQueue,
    embeddings,
    auth,
    agents,
    bootstrap,
    memory,
    search,
    memoryFeed,
    merkle,
    projects,
    tasks,
    decisions,
    blueprints,
    runs,
    compile,
    captures,
    feeds,
    meshTokens,
    meshSync,
    meshLinks,
    meshHandshakes,
    meshGossip,
    meshDiscovered,
    messages,
    sessions,
    events,
    idempotency,
    oauth,
    archivist,
    curation,
    graph,
    knowledge,
    logs,
    exporter,
    importer,
    uiSessions,
    metrics,
    site,
    rateLimiter,
    throttle,
    credentialsWritten,
    performance: (caller, tag) => agentPerformance(store, caller, tag),
    health: async () => {
      const database: Health["database"] = (await store.ping()) ? "ok" : "error";
      const status = embeddingQueue.status;
      return {
        status: database === "ok" && status !== "unavailable" ? "ok" : "degraded",
        version: packageVersion,
        instance_id: instance.id,
        instance_name: instance.name,
        embeddings: status,
        database,
        ...(store.vectors.annStatus === undefined ? {} : { vector_index: store.vectors.annStatus }),
        ...(store.vectors.mirrorStatus === undefined ? {} : { vector_mirror: store.vectors.mirrorStatus }),
      };
    },
    listening: (port) => {
      listened();
      mdns?.start({ instance_id: instance.id, name: instance.name, url: site.url }, port);
      return startOver();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      // First, so its pending writes finish before the store closes.
      await mdns?.stop();
      jobs.stop();
      await feedPoller.stop();
      await meshSyncer.stop();
      await feedParser.close();
      bus.stop();
      metrics.close();
      await reads.flush();
      await auditStarted;
      await audit?.close();
      await embeddingQueue.close();
      await knowledge.close();
      await store.close();
    },
  };
}
