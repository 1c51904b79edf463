import type { KeywordIndex } from "../memory.js";
import type { VectorIndex } from "../vectors.js";
import { SqlAgents, type AgentColumn } from "./agents.js";
import { SqlArchivist } from "./archivist.js";
import { SqlAuditReads } from "./audit.js";
import { SqlBlueprintRuns } from "./blueprint-runs.js";
import { SqlBlueprints } from "./blueprints.js";
import { SqlCaptures } from "./captures.js";
import { SqlCompile } from "./compile.js";
import { SqlDecisions, type DecisionMatch } from "./decisions.js";
import type { SqlDb } from "./dialect.js";
import { SqlEvents, type EventAppend } from "./events.js";
import { SqlFeeds } from "./feeds.js";
import { SqlMesh } from "./mesh.js";
import { SqlGraph } from "./graph.js";
import { SqlHandoffs } from "./handoffs.js";
import { SqlIdempotency } from "./idempotency.js";
import { SqlJobs } from "./jobs.js";
import { SqlKnowledgeReads } from "./knowledge.js";
import { SqlLogs } from "./logs.js";
import { SqlMemory } from "./memory.js";
import { SqlMemoryFeed } from "./memory-feed.js";
import { SqlMerkle } from "./merkle.js";
import { SqlMeta } from "./meta.js";
import { SqlMessages } from "./messages.js";
import { SqlOAuth } from "./oauth.js";
import { SqlProjects } from "./projects.js";
import { SqlQuotas } from "./quotas.js";
import { SqlTasks } from "./tasks.js";
import { SqlTransfer } from "./transfer.js";
import { SqlUiSessions } from "./ui-sessions.js";

/** What a backend brings besides its runner: the parts of the store that truly differ. */
export interface BackendParts<V extends VectorIndex> {
  db: SqlDb;
  vectors: V;
  keywords: KeywordIndex;
  decisionMatch: DecisionMatch;
  eventAppend: EventAppend;
  /** Columns naming an agent in tables only this backend has, renamed with the agent. */
  agentColumns?: readonly AgentColumn[];
}

/**
 * Every repository of the store, written once over a backend's runner and parts. Each backend's
 * store extends this and adds its connection, transactions and maintenance.
 */
export abstract class SqlRepositories<V extends VectorIndex> {
  readonly agents: SqlAgents;
  readonly archivist: SqlArchivist;
  readonly audit: SqlAuditReads;
  readonly blueprints: SqlBlueprints;
  readonly blueprintRuns: SqlBlueprintRuns;
  readonly captures: SqlCaptures;
  readonly compile: SqlCompile;
  readonly decisions: SqlDecisions;
  readonly events: SqlEvents;
  readonly feeds: SqlFeeds;
  readonly mesh: SqlMesh;
  readonly graph: SqlGraph;
  readonly handoffs: SqlHandoffs;
  readonly idempotency: SqlIdempotency;
  readonly jobs: SqlJobs;
  readonly keywords: KeywordIndex;
  readonly knowledge: SqlKnowledgeReads;
  readonly logs: SqlLogs;
  readonly memory: SqlMemory;
  readonly memoryFeed: SqlMemoryFeed;
  readonly merkle: SqlMerkle;
  readonly meta: SqlMeta;
  readonly messages: SqlMessages;
  readonly oauth: SqlOAuth;
  readonly projects: SqlProjects;
  readonly quotas: SqlQuotas;
  readonly tasks: SqlTasks;
  readonly transfer: SqlTransfer;
  readonly uiSessions: SqlUiSessions;
  readonly vectors: V;

  protected constructor({ db, vectors, keywords, decisionMatch, eventAppend, agentColumns = [] }: BackendParts<V>) {
    this.agents = new SqlAgents(db, vectors, agentColumns);
    this.archivist = new SqlArchivist(db);
    this.audit = new SqlAuditReads(db);
    this.blueprints = new SqlBlueprints(db);
    this.blueprintRuns = new SqlBlueprintRuns(db);
    this.captures = new SqlCaptures(db);
    this.compile = new SqlCompile(db);
    this.decisions = new SqlDecisions(db, decisionMatch);
    this.events = new SqlEvents(db, eventAppend);
    this.feeds = new SqlFeeds(db);
    this.mesh = new SqlMesh(db);
    this.graph = new SqlGraph(db);
    this.handoffs = new SqlHandoffs(db);
    this.idempotency = new SqlIdempotency(db);
    this.jobs = new SqlJobs(db);
    this.keywords = keywords;
    this.knowledge = new SqlKnowledgeReads(db);
    this.logs = new SqlLogs(db);
    this.memory = new SqlMemory(db);
    this.memoryFeed = new SqlMemoryFeed(db);
    this.merkle = new SqlMerkle(db);
    this.meta = new SqlMeta(db);
    this.messages = new SqlMessages(db);
    this.oauth = new SqlOAuth(db);
    this.projects = new SqlProjects(db);
    this.quotas = new SqlQuotas(db);
    this.tasks = new SqlTasks(db);
    this.transfer = new SqlTransfer(db);
    this.uiSessions = new SqlUiSessions(db);
    this.vectors = vectors;
  }
}
