import type { EdgeRel } from "../wire/graph.js";
import type { AgentRow } from "./agents.js";
import type { BlueprintRow } from "./blueprints.js";
import type { RunNodeRow, RunRow } from "./blueprint-runs.js";
import type { AnchorRow } from "./compile.js";
import type { DecisionRow } from "./decisions.js";
import type { HandoffRow } from "./handoffs.js";
import type { MessageRow } from "./messages.js";
import type { EdgeRow } from "./graph.js";
import type { MemoryRow } from "./memory.js";
import type { ProjectRow } from "./projects.js";
import type { Reader, Tx } from "./store.js";
import type { CommentRow, NewOutcomeRow } from "./tasks.js";

/**
 * What an export selects: `project` undefined is everything, null the global rows only, an id that
 * project's rows only; `since` keeps rows changed after it.
 */
export interface TransferSelection {
  project?: string | null | undefined;
  since?: string | undefined;
}

export type TaskCommentRow = Omit<CommentRow, "task_id"> & { task_pk: number };
export type TaskOutcomeRow = NewOutcomeRow;

/** An agent as an export carries it: no key, nor anything about one. */
export type TransferAgentRow = Pick<AgentRow, "agent_id" | "display_name" | "role" | "created_at" | "last_seen_at" | "current_project" | "deleted_at">;

export interface MemberOfProject {
  project_id: string;
  agent_id: string;
  joined_at: string;
}

/** A run's node with the ids of its task and of the task its gate waits for. */
export type TransferRunNodeRow = Omit<RunNodeRow, "task_status"> & { gate_task_id: string | null };

export type TransferMessageRow = Omit<MessageRow, "read_at" | "is_recipient">;

export interface RecipientRow {
  message_pk: number;
  agent_id: string;
  read_at: string | null;
}

export interface ImportedEdge {
  id: string;
  srcPk: number;
  dstPk: number;
  rel: EdgeRel;
  note: string | null;
  project: string | null;
  agentId: string;
  createdAt: string;
  updatedAt: string;
}

/** Reads for the owner's export, and the writes an import makes beyond the ordinary ones. */
export interface TransferStore {
  projects(r: Reader, project: string | null | undefined): Promise<Omit<ProjectRow, "member_count">[]>;
  /** The memberships of these projects, deleted agents' included, in the order they joined. */
  membersOf(r: Reader, projectIds: string[]): Promise<MemberOfProject[]>;
  /**
   * Agents, deleted ones included, in id order after `afterId`: for a selection of everything or
   * of global records (`since`: created after it); none when one project is selected.
   */
  agents(r: Reader, selection: TransferSelection, afterId: string, limit: number): Promise<TransferAgentRow[]>;
  /** The compile anchors of these entries. */
  anchorsOf(r: Reader, memoryPks: number[]): Promise<AnchorRow[]>;
  /** Blueprint versions of the selection (`since`: saved after it) after row key `afterPk`, in row order. */
  blueprints(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<BlueprintRow[]>;
  /** Blueprint runs of the selection after row key `afterPk`, in row order. */
  runs(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<RunRow[]>;
  /** The nodes of these runs, each run's in the order they were made. */
  runNodesOf(r: Reader, runPks: number[]): Promise<TransferRunNodeRow[]>;
  /** Messages of the selection (`since`: sent after it) after row key `afterPk`, in row order. */
  messages(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<TransferMessageRow[]>;
  /** Every recipient of these messages with its read state. */
  recipientsOf(r: Reader, messagePks: number[]): Promise<RecipientRow[]>;
  /** Handoffs (global records, like agents) after row key `afterPk`, in row order. */
  handoffs(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<(HandoffRow & { pk: number })[]>;
  /** Live shared entries of the selection after row key `afterPk`, in row order (private entries never). */
  entries(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<MemoryRow[]>;
  /** Edges of the selection whose both ends are exportable entries, after row key `afterPk`. */
  edges(r: Reader, selection: TransferSelection, nowIso: string, afterPk: number, limit: number): Promise<EdgeRow[]>;
  /**
   * Decisions of the selection after row key `afterPk`, in row order (a superseded one before the
   * one that superseded it). `since` keeps those recorded after it: a decision changes only when
   * superseded, and the superseding one carries the link.
   */
  decisions(r: Reader, selection: TransferSelection, afterPk: number, limit: number): Promise<DecisionRow[]>;
  /** The selection's tasks (row keys, oldest first) with the row keys of the tasks each depends on. */
  taskGraph(r: Reader, selection: TransferSelection): Promise<{ pk: number; dependsOn: number[] }[]>;
  /** The comment logs of several tasks, each in order. */
  commentsOf(r: Reader, taskPks: number[]): Promise<TaskCommentRow[]>;
  /** The recorded outcomes of several tasks. */
  outcomesOf(r: Reader, taskPks: number[]): Promise<TaskOutcomeRow[]>;
  /** Whether a memory entry with this id was ever stored here, deleted ones included. */
  memoryIdTaken(r: Reader, id: string): Promise<boolean>;
  /** A live entry by exact id, whoever may see it. */
  liveMemoryById(r: Reader, id: string, nowIso: string): Promise<MemoryRow | undefined>;
  /** Read statistics carried over from another instance (the readers themselves are not). */
  restoreReadCounts(tx: Tx, pk: number, readCount: number, distinctReaders: number): Promise<void>;
  edgeIdTaken(r: Reader, id: string): Promise<boolean>;
  edgeBetween(r: Reader, srcPk: number, dstPk: number, rel: EdgeRel): Promise<{ pk: number; id: string; note: string | null } | undefined>;
  /** Inserts an edge with its own id and times; returns its row key. */
  insertEdge(tx: Tx, edge: ImportedEdge): Promise<number>;
  setEdgeNote(tx: Tx, pk: number, note: string, at: string): Promise<void>;
  taskIdTaken(r: Reader, id: string): Promise<boolean>;
  taskPkById(r: Reader, id: string): Promise<number | undefined>;
  /** Inserts an agent with no key, as it stood there (a tombstone stays one). */
  insertAgent(tx: Tx, agent: TransferAgentRow): Promise<void>;
  blueprintPkById(r: Reader, id: string): Promise<number | undefined>;
  /** Whether a blueprint of this name already has this version in this project (null: global). */
  blueprintVersionTaken(r: Reader, project: string | null, name: string, version: number): Promise<boolean>;
  runIdTaken(r: Reader, id: string): Promise<boolean>;
  messageIdTaken(r: Reader, id: string): Promise<boolean>;
  /** Adds a message's recipients, each with its read state. */
  insertRecipients(tx: Tx, messagePk: number, recipients: { agent_id: string; read_at: string | null }[]): Promise<void>;
  handoffIdTaken(r: Reader, id: string): Promise<boolean>;
}
