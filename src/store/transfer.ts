import type { EdgeRel } from "../wire/graph.js";
import type { DecisionRow } from "./decisions.js";
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
}
