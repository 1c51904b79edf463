import { z } from "zod";
import { AGENT_ID_PATTERN } from "../../wire/ids.js";
import { contentKey } from "../memory-records.js";
import type { UnsavedMemoryRow } from "../../store/memory.js";
import type { ProjectMapping } from "../../wire/mesh.js";
import type { CopyVersion } from "./copy-writes.js";

// An item of a peer's feed checked as a write would be (CONTRACT §16), then turned into the copy
// this instance would hold. The peer is not trusted to have checked anything.

const INSTANCE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const REPLICABLE = ["memory", "doc", "skill"] as const;

const timestamp = z.string().regex(TIMESTAMP);

/** What is read of an item: anything else in it is ignored. */
const itemShape = z.object({
  id: z.uuid(),
  content_text: z.string(),
  tags: z.array(z.string().trim().min(1).max(64)).max(32).optional(),
  _cairn: z.object({
    type: z.string().max(32),
    scope: z.string().max(32),
    project: z.string().regex(AGENT_ID_PATTERN).nullable(),
    agent_id: z.string().max(200),
    version: z.number().int().min(1).max(2 ** 31 - 1),
    confidence: z.number().min(0).max(1),
    parents: z.array(z.uuid()).max(100),
    origin: z.uuid(),
    origin_name: z.string().regex(INSTANCE_NAME),
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: timestamp.optional(),
    change_seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  }),
});

export interface LinkTerms {
  linkId: string;
  projects: readonly ProjectMapping[];
  maxConfidence: number;
  maxContentBytes: number;
}

export type Incoming =
  | { kind: "copy"; id: string; changeSeq: number; copy: CopyVersion }
  /** Not for this instance: a project the link does not map. Counted, not refused. */
  | { kind: "dropped"; id: string; changeSeq: number }
  | { kind: "rejected"; id: string | null; changeSeq: number | null; reason: string };

/** A copy's author: `<agent>@<origin name>`, which no local agent id can be (ids have no `@`). */
function copyAuthor(agentId: string, originName: string): string | null {
  const suffix = `@${originName}`;
  // A copy passed on by another peer already names its origin.
  const local = agentId.endsWith(suffix) ? agentId.slice(0, -suffix.length) : agentId;
  return AGENT_ID_PATTERN.test(local) ? `${local}${suffix}` : null;
}

const describe = (issue: z.core.$ZodIssue | undefined): string => (issue ? `${issue.path.join(".") || "item"}: ${issue.message}` : "malformed item");

/** One item of a peer's feed: a copy to apply, or why not. */
export function incomingOf(raw: unknown, terms: LinkTerms): Incoming {
  const rawId = typeof (raw as { id?: unknown })?.id === "string" ? ((raw as { id: string }).id) : null;
  const parsed = itemShape.safeParse(raw);
  if (!parsed.success) {
    return { kind: "rejected", id: rawId !== null && z.uuid().safeParse(rawId).success ? rawId : null, changeSeq: null, reason: describe(parsed.error.issues[0]) };
  }
  const item = parsed.data;
  const fields = item._cairn;
  const reject = (reason: string): Incoming => ({ kind: "rejected", id: item.id, changeSeq: fields.change_seq, reason });
  if (fields.type === "directive") return reject("directives never replicate");
  if (!(REPLICABLE as readonly string[]).includes(fields.type)) return reject(`${fields.type} entries never replicate`);
  if (fields.scope !== "project") return reject("private entries never replicate");
  const deleted = fields.deleted_at !== undefined;
  if (!deleted && item.content_text.trim() === "") return reject("content is empty");
  if (Buffer.byteLength(item.content_text, "utf8") > terms.maxContentBytes) return reject(`content exceeds ${terms.maxContentBytes} bytes`);
  const agentId = copyAuthor(fields.agent_id, fields.origin_name);
  if (agentId === null) return reject("agent_id is not an agent id");
  let project: string | null = null;
  if (fields.project !== null) {
    const mapping = terms.projects.find((entry) => entry.remote === fields.project);
    if (!mapping) return { kind: "dropped", id: item.id, changeSeq: fields.change_seq };
    project = mapping.local;
  }
  const content = deleted ? "" : item.content_text;
  const tags = deleted ? [] : [...new Set(item.tags ?? [])];
  const row: UnsavedMemoryRow = {
    id: item.id,
    type: fields.type as (typeof REPLICABLE)[number],
    agent_id: agentId,
    project,
    scope: "project",
    content,
    content_key: contentKey(content),
    confidence: Math.min(fields.confidence, terms.maxConfidence),
    parents: JSON.stringify(fields.parents),
    tags: JSON.stringify(tags),
    headline: null,
    created_at: fields.created_at,
    updated_at: fields.updated_at,
    version: fields.version,
    expires_at: null,
    read_count: 0,
    distinct_readers: 0,
    reinforcement_count: 0,
    last_reinforced_at: null,
    superseded_by: null,
    embedding_model: null,
    deleted_at: fields.deleted_at ?? null,
    source: JSON.stringify({ kind: "mesh", origin: fields.origin, origin_name: fields.origin_name, link_id: terms.linkId }),
    source_kind: "mesh",
    stale_since: null,
    stale_reason: null,
  };
  return { kind: "copy", id: item.id, changeSeq: fields.change_seq, copy: { row, tags, origin: fields.origin } };
}
