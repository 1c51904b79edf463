import { z } from "zod";
import { keyProblem } from "../core/json-keys.js";
import { normalizeTimestamp } from "../wire/timestamp.js";
import { AGENT_ID_PATTERN } from "../wire/ids.js";
import { runStatus } from "../wire/blueprint-runs.js";
import { unitKind, unitPath, unitSha, unitSymbol } from "../wire/compile.js";
import { edgeRel } from "../wire/graph.js";
import { entrySource, memoryType, scope, staleReason } from "../wire/memory.js";
import { role } from "../wire/roles.js";
import { commentKind, priority, taskStatus } from "../wire/tasks.js";

/**
 * The lines of an export file, one JSON object each, told apart by `kind`. The same schemas check
 * every line of an import. `format` in the header says which version wrote the file: 2 added what
 * a team moving to another server needs besides its memory (members, agents, compile anchors,
 * blueprints and runs, messages, handoffs). A server that reads only format 1 refuses the header
 * of a format 2 file, so what it would drop is said, and imports the lines it knows.
 */
export const EXPORT_FORMAT = 2;

const timestamp = z.string().transform((value, context) => {
  const normalised = normalizeTimestamp(value);
  if (normalised === undefined) {
    context.addIssue({ code: "custom", message: "expected an RFC 3339 timestamp" });
    return z.NEVER;
  }
  return normalised;
});
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "expected a lower-case uuid");
const slug = z.string().regex(AGENT_ID_PATTERN, "expected a lower-case slug");
// Authors are kept by id, whether or not such an agent exists here (a mesh copy's is `id@origin`).
const author = z.string().min(1).max(200);
const tags = z.array(z.string().trim().min(1).max(64)).max(32);

/**
 * An entry's provenance (CONTRACT §11). Exports before provenance existed named the exporting
 * instance here (`{kind:"cairn"}`, which the header line now carries); that form is still read and
 * means "written by hand".
 */
const lineSource = z.union([entrySource, z.object({ kind: z.literal("cairn"), instance: z.string(), url: z.string() })]);

const headerLine = z.object({
  kind: z.literal("header"),
  format: z.number().int().min(1),
  instance: z.string(),
  url: z.string(),
  server_version: z.string(),
  exported_at: timestamp,
  project: slug.nullable().optional(),
  since: timestamp.nullable().optional(),
});

const projectLine = z.object({
  kind: z.literal("project"),
  id: slug,
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000),
  owner: author,
  created_at: timestamp,
  // Memberships name agents by id, whether or not such an agent is here (format 1 had none).
  members: z
    .array(z.object({ agent_id: author, joined_at: timestamp }))
    .max(100_000)
    .optional()
    .transform((members) => members ?? []),
});

/** An agent as the owner sees it, never its key: an owner gives it a key here (rotate-key). */
const agentLine = z.object({
  kind: z.literal("agent"),
  agent_id: slug,
  display_name: z.string().max(200).nullable(),
  role,
  created_at: timestamp,
  last_seen_at: timestamp.nullable(),
  current_project: slug.nullable(),
  /** A deleted agent stays as a tombstone, so that its id is never given to anyone else. */
  deleted_at: timestamp.nullable(),
});

/** The piece of code a compiled entry describes (CONTRACT §18): its entry's line carries it. */
const anchorOfEntry = z.object({
  path: unitPath,
  symbol: unitSymbol,
  kind: unitKind,
  lang: z.string().min(1).max(64),
  start_line: z.number().int().min(1),
  end_line: z.number().int().min(1),
  sha: unitSha,
  previous_sha: unitSha.nullable(),
  signature: z.string().max(2000).nullable(),
  git_commit: z.string().max(200).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const entryLine = z.object({
  kind: z.literal("entry"),
  id: uuid,
  type: memoryType,
  agent_id: author,
  project: slug.nullable(),
  scope,
  content: z.string().refine((value) => value.trim().length > 0, "must not be empty"),
  confidence: z.number().min(0).max(1),
  parents: z.array(uuid).max(1000),
  tags,
  headline: z.string().max(2000).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  version: z.number().int().min(1),
  expires_at: timestamp.nullable(),
  read_count: z.number().int().min(0),
  distinct_readers: z.number().int().min(0),
  reinforcement_count: z.number().int().min(0),
  last_reinforced_at: timestamp.nullable(),
  superseded_by: uuid.nullable(),
  embedding_model: z.string().nullable().describe("the model that embedded it there; the importer embeds again with its own"),
  source: lineSource
    .nullable()
    .optional()
    .transform((source) => (source && source.kind !== "cairn" ? source : null)),
  stale_since: timestamp.nullable().optional(),
  stale_reason: staleReason.nullable().optional(),
  /** A compiled entry's anchor; absent (format 1) or null for every other entry. */
  anchor: anchorOfEntry.nullable().optional(),
});

const edgeLine = z.object({
  kind: z.literal("edge"),
  id: uuid,
  src: uuid,
  dst: uuid,
  rel: edgeRel,
  note: z.string().max(2000).nullable(),
  project: slug.nullable(),
  agent_id: author,
  created_at: timestamp,
  updated_at: timestamp,
});

// Ids a decision keeps without finding them here are checked as the API's record declares them
// (RFC 9562), so none can be stored that reading the decision would then refuse to serve.
const namedId = uuid.refine((value) => z.uuid().safeParse(value).success, "expected an RFC 9562 uuid");

// The decision as recorded, with the ids it names kept as they are: the task, the entries and the
// decisions at either end of a supersede may be in another file, or no longer anywhere.
const decisionLine = z.object({
  kind: z.literal("decision"),
  id: namedId,
  project: slug.nullable(),
  agent_id: author,
  task_id: namedId.nullable(),
  decision: z.string().trim().min(1).max(500),
  rationale: z.string().refine((value) => value.trim().length > 0, "must not be empty"),
  alternatives: z.array(z.object({ option: z.string().trim().min(1).max(500), reason_rejected: z.string().max(2000).nullish() })).max(20),
  memory_refs: z.array(namedId).max(20),
  tags,
  supersedes: namedId.nullable(),
  superseded_by: namedId.nullable(),
  created_at: timestamp,
});

const taskComment = z.object({
  id: uuid,
  agent_id: author,
  kind: commentKind,
  comment: z.string(),
  created_at: timestamp,
});

const taskOutcome = z.object({
  agent_id: author,
  outcome: z.enum(["completed", "failed"]),
  tags: z.array(z.string()),
  claimed_at: timestamp,
  finished_at: timestamp,
});

const taskLine = z.object({
  kind: z.literal("task"),
  id: uuid,
  title: z.string().trim().min(1).max(500),
  description: z.string(),
  status: taskStatus,
  created_by: author,
  assigned_to: author.nullable(),
  reserved: z.boolean(),
  project: slug.nullable(),
  priority,
  tags,
  depends_on: z.array(uuid).max(1000),
  due_at: timestamp.nullable(),
  expected_outcome: z.string().max(8000).nullable(),
  result: z.unknown(),
  created_at: timestamp,
  updated_at: timestamp,
  claimed_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  lease_expires_at: timestamp.nullable(),
  comments: z.array(taskComment),
  outcomes: z.array(taskOutcome),
  // A blueprint run's task (format 1 files had the first two, and the import dropped them).
  run_id: uuid.nullable().optional(),
  node_key: z.string().min(1).max(600).nullable().optional(),
  gate: z.enum(["human", "timer", "task"]).nullable().optional(),
});

/** One version of a blueprint, its document as it was saved there. */
const blueprintLine = z.object({
  kind: z.literal("blueprint"),
  id: namedId,
  name: slug,
  project: slug.nullable(),
  version: z.number().int().min(1),
  document: z.record(z.string(), z.unknown()),
  created_by: author,
  created_at: timestamp,
});

const runNodeLine = z.object({
  node_id: z.string().min(1).max(200),
  key: z.string().min(1).max(600),
  /** The node's task (exported before the run), or null while a fan-out waits or when it was skipped. */
  task_id: uuid.nullable(),
  state: z.enum(["task", "pending", "skipped"]),
  item: z.unknown(),
  item_index: z.number().int().min(0).nullable(),
  attempt: z.number().int().min(1),
  /** Anchors' shas when the task was created, for `anchor_changed` checks. */
  anchors: z.record(z.string(), z.string().nullable()),
  /** The task a `task` gate waits for. */
  gate_task_id: uuid.nullable(),
});

/** A blueprint run with its nodes: which task each node key stands for. */
const runLine = z.object({
  kind: z.literal("run"),
  id: namedId,
  blueprint_id: namedId,
  project: slug.nullable(),
  params: z.record(z.string(), z.unknown()),
  status: runStatus,
  created_by: author,
  created_at: timestamp,
  updated_at: timestamp,
  nodes: z.array(runNodeLine).max(2000),
});

/** A message with each recipient's read state: what was read or consumed there stays so. */
const messageLine = z.object({
  kind: z.literal("message"),
  id: namedId,
  from: author,
  /** The address as sent: an agent id, `broadcast` or `project:<id>`. */
  to: z.string().min(1).max(300),
  project: slug.nullable(),
  subject: z.string().max(300),
  body: z.string().refine((value) => value.length > 0, "must not be empty"),
  reply_to: namedId.nullable(),
  created_at: timestamp,
  recipients: z.array(z.object({ agent_id: author, read_at: timestamp.nullable() })).max(100_000),
});

const handoffLines = z.array(z.string().max(2000)).max(100);

const handoffLine = z.object({
  kind: z.literal("handoff"),
  id: namedId,
  agent_id: author,
  host: z.string().max(200).nullable(),
  summary: z.string().min(1).max(20_000),
  in_progress: handoffLines,
  next_steps: handoffLines,
  memory_refs: handoffLines,
  created_at: timestamp,
});

/** The reference MCP memory server's `memory.json` (JSON Lines of entities and relations). */
const entityLine = z.object({
  type: z.literal("entity"),
  name: z.string().trim().min(1).max(500),
  entityType: z.string().max(200),
  observations: z.array(z.string()),
});

const relationLine = z.object({
  type: z.literal("relation"),
  from: z.string().trim().min(1).max(500),
  to: z.string().trim().min(1).max(500),
  relationType: z.string().trim().min(1).max(200),
});

// What an export writes (the input side) and what an import works with (the output side).
export type HeaderLineOut = z.input<typeof headerLine>;
export type ProjectLineOut = z.input<typeof projectLine>;
export type EntryLineOut = z.input<typeof entryLine>;
export type EdgeLineOut = z.input<typeof edgeLine>;
export type DecisionLineOut = z.input<typeof decisionLine>;
export type TaskLineOut = z.input<typeof taskLine>;
export type AgentLineOut = z.input<typeof agentLine>;
export type BlueprintLineOut = z.input<typeof blueprintLine>;
export type RunLineOut = z.input<typeof runLine>;
export type MessageLineOut = z.input<typeof messageLine>;
export type HandoffLineOut = z.input<typeof handoffLine>;
export type ProjectLine = z.output<typeof projectLine>;
export type EntryLine = z.output<typeof entryLine>;
export type EdgeLine = z.output<typeof edgeLine>;
export type DecisionLine = z.output<typeof decisionLine>;
export type TaskLine = z.output<typeof taskLine>;
export type AgentLine = z.output<typeof agentLine>;
export type BlueprintLine = z.output<typeof blueprintLine>;
export type RunLine = z.output<typeof runLine>;
export type MessageLine = z.output<typeof messageLine>;
export type HandoffLine = z.output<typeof handoffLine>;
export type EntityLine = z.output<typeof entityLine>;
export type RelationLine = z.output<typeof relationLine>;

export type ParsedLine =
  | { kind: "header"; line: z.output<typeof headerLine> }
  | { kind: "project"; line: ProjectLine }
  | { kind: "entry"; line: EntryLine }
  | { kind: "edge"; line: EdgeLine }
  | { kind: "decision"; line: DecisionLine }
  | { kind: "task"; line: TaskLine }
  | { kind: "agent"; line: AgentLine }
  | { kind: "blueprint"; line: BlueprintLine }
  | { kind: "run"; line: RunLine }
  | { kind: "message"; line: MessageLine }
  | { kind: "handoff"; line: HandoffLine }
  | { kind: "entity"; line: EntityLine }
  | { kind: "relation"; line: RelationLine };

/** A line that cannot be imported, and why (a lower-case sentence). */
export class LineRefusal extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "LineRefusal";
  }
}

function checked<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map(String).join(".");
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
  throw new LineRefusal(`invalid line: ${problems.join("; ")}`);
}

/** One line of an import: an export line by its `kind`, or a memory.json line by its `type`. */
export function parseLine(text: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LineRefusal("not valid json");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new LineRefusal("expected a json object");
  const problem = keyProblem(text);
  if (problem !== null) throw new LineRefusal(`${problem.error.path}: ${problem.error.message}`);
  const record = value as Record<string, unknown>;
  if ("kind" in record) {
    switch (record.kind) {
      case "header":
        return { kind: "header", line: checked(headerLine, record) };
      case "project":
        return { kind: "project", line: checked(projectLine, record) };
      case "entry":
        return { kind: "entry", line: checked(entryLine, record) };
      case "edge":
        return { kind: "edge", line: checked(edgeLine, record) };
      case "task":
        return { kind: "task", line: checked(taskLine, record) };
      case "decision":
        return { kind: "decision", line: checked(decisionLine, record) };
      case "agent":
        return { kind: "agent", line: checked(agentLine, record) };
      case "blueprint":
        return { kind: "blueprint", line: checked(blueprintLine, record) };
      case "run":
        return { kind: "run", line: checked(runLine, record) };
      case "message":
        return { kind: "message", line: checked(messageLine, record) };
      case "handoff":
        return { kind: "handoff", line: checked(handoffLine, record) };
      default:
        throw new LineRefusal(`unknown line kind ${JSON.stringify(record.kind)}`);
    }
  }
  if (record.type === "entity") return { kind: "entity", line: checked(entityLine, record) };
  if (record.type === "relation") return { kind: "relation", line: checked(relationLine, record) };
  throw new LineRefusal('expected an export line (with "kind") or a memory.json entity or relation (with "type")');
}
