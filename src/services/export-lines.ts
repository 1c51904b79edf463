import type { BlueprintRow } from "../store/blueprints.js";
import type { RunRow } from "../store/blueprint-runs.js";
import type { AnchorRow } from "../store/compile.js";
import type { HandoffRow } from "../store/handoffs.js";
import type { MemoryRow } from "../store/memory.js";
import type { ProjectRow } from "../store/projects.js";
import type { TaskRow } from "../store/tasks.js";
import type {
  MemberOfProject,
  RecipientRow,
  TaskCommentRow,
  TaskOutcomeRow,
  TransferAgentRow,
  TransferMessageRow,
  TransferRunNodeRow,
} from "../store/transfer.js";
import type { UnitKind } from "../wire/compile.js";
import { toEntry } from "./memory-records.js";
import { toTask } from "./task-records.js";
import type {
  AgentLineOut,
  BlueprintLineOut,
  EntryLineOut,
  HandoffLineOut,
  MessageLineOut,
  ProjectLineOut,
  RunLineOut,
  TaskLineOut,
} from "./transfer-lines.js";

// How each stored record becomes its export line (CONTRACT §10a, docs/operations.md).

export const line = (value: object): string => `${JSON.stringify(value)}\n`;

export const projectLine = (project: Omit<ProjectRow, "member_count">, members: MemberOfProject[]): ProjectLineOut => ({
  kind: "project",
  ...project,
  members: members.map((member) => ({ agent_id: member.agent_id, joined_at: member.joined_at })),
});

export const agentLine = (agent: TransferAgentRow): AgentLineOut => ({ kind: "agent", ...agent });

export function entryLine(row: MemoryRow, anchor: AnchorRow | undefined): EntryLineOut {
  return {
    kind: "entry",
    ...toEntry(row),
    anchor:
      anchor === undefined
        ? null
        : {
            path: anchor.path,
            symbol: anchor.symbol,
            // Written by compile from a checked unit: one of the unit kinds.
            kind: anchor.kind as UnitKind,
            lang: anchor.lang,
            start_line: anchor.start_line,
            end_line: anchor.end_line,
            sha: anchor.sha,
            previous_sha: anchor.previous_sha,
            signature: anchor.signature,
            git_commit: anchor.git_commit,
            created_at: anchor.created_at,
            updated_at: anchor.updated_at,
          },
  };
}

export function taskLine(row: TaskRow, comments: TaskCommentRow[], outcomes: TaskOutcomeRow[]): TaskLineOut {
  // The task as the API shows it, less what is derived (`blocked`), plus what an import needs to restore.
  const { blocked: _blocked, ...task } = toTask(row);
  return {
    kind: "task",
    ...task,
    reserved: row.reserved === 1,
    comments: comments.map((comment) => ({
      id: comment.id,
      agent_id: comment.agent_id,
      kind: comment.kind,
      comment: comment.comment,
      created_at: comment.created_at,
    })),
    outcomes: outcomes.map((outcome) => ({
      agent_id: outcome.agent_id,
      outcome: outcome.outcome,
      tags: JSON.parse(outcome.tags) as string[],
      claimed_at: outcome.claimed_at,
      finished_at: outcome.finished_at,
    })),
  };
}

export const blueprintLine = (row: BlueprintRow): BlueprintLineOut => ({
  kind: "blueprint",
  id: row.id,
  name: row.name,
  project: row.project,
  version: row.version,
  document: JSON.parse(row.document) as Record<string, unknown>,
  created_by: row.created_by,
  created_at: row.created_at,
});

export const runLine = (row: RunRow, nodes: TransferRunNodeRow[]): RunLineOut => ({
  kind: "run",
  id: row.id,
  blueprint_id: row.blueprint_id,
  project: row.project,
  params: JSON.parse(row.params) as Record<string, unknown>,
  status: row.status,
  created_by: row.created_by,
  created_at: row.created_at,
  updated_at: row.updated_at,
  nodes: nodes.map((node) => ({
    node_id: node.node_id,
    key: node.key,
    task_id: node.task_id,
    state: node.state,
    item: node.item === null ? null : (JSON.parse(node.item) as unknown),
    item_index: node.item_index,
    attempt: node.attempt,
    anchors: JSON.parse(node.anchors) as Record<string, string | null>,
    gate_task_id: node.gate_task_id,
  })),
});

export const messageLine = (row: TransferMessageRow, recipients: RecipientRow[]): MessageLineOut => ({
  kind: "message",
  id: row.id,
  from: row.sender,
  to: row.recipient,
  project: row.project,
  subject: row.subject,
  body: row.body,
  reply_to: row.reply_to,
  created_at: row.created_at,
  recipients: recipients.map((recipient) => ({ agent_id: recipient.agent_id, read_at: recipient.read_at })),
});

export const handoffLine = (row: HandoffRow): HandoffLineOut => ({
  kind: "handoff",
  id: row.id,
  agent_id: row.agent_id,
  host: row.host,
  summary: row.summary,
  in_progress: JSON.parse(row.in_progress) as string[],
  next_steps: JSON.parse(row.next_steps) as string[],
  memory_refs: JSON.parse(row.memory_refs) as string[],
  created_at: row.created_at,
});
