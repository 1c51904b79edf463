// The records the API returns (CONTRACT §3–§9), as the UI reads them.

export type MemoryType = "memory" | "doc" | "directive" | "skill" | "compiled";
export type Scope = "agent" | "project";
export type Role = "owner" | "agent" | "archivist" | "viewer";

export interface MemoryEntry {
  id: string;
  type: MemoryType;
  agent_id: string;
  project: string | null;
  scope: Scope;
  content: string;
  confidence: number;
  parents: string[];
  tags: string[];
  headline: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  expires_at: string | null;
  read_count: number;
  distinct_readers: number;
  reinforcement_count: number;
  last_reinforced_at: string | null;
  superseded_by: string | null;
  embedding_model: string | null;
}

export interface SearchHit extends MemoryEntry {
  score: number;
  similarity: number | null;
  match: "semantic" | "keyword" | "both";
  truncated?: true;
}

export interface SimilarEntry {
  id: string;
  similarity: number;
  agent_id: string;
}

export interface MemoryWriteResult extends MemoryEntry {
  similar?: SimilarEntry[];
  duplicate_of?: string;
  similarity?: number;
}

export interface Agent {
  agent_id: string;
  display_name: string | null;
  role: Role;
  created_at: string;
  last_seen_at: string | null;
  online: boolean;
  current_project: string | null;
  claimed_tasks: string[];
}

export interface AgentSelf extends Agent {
  projects: string[];
  can_write_directives: boolean;
}

export interface Registration {
  agent_id: string;
  api_key: string;
  role: Role;
  created_at: string;
}

export interface TagPerformance {
  tag: string;
  completed: number;
  failed: number;
  success_rate: number | null;
  median_seconds: number | null;
}

export interface AgentPerformance {
  agent_id: string;
  completed: number;
  failed: number;
  success_rate: number | null;
  median_seconds: number | null;
  by_tag: TagPerformance[];
}

export interface Project {
  id: string;
  name: string;
  description: string;
  owner: string;
  created_at: string;
  member_count: number;
}

export interface ProjectMember {
  agent_id: string;
  role: Role;
  project_owner: boolean;
  joined_at: string;
}

export type TaskStatus = "open" | "claimed" | "completed" | "failed";
export type Priority = "low" | "normal" | "high";

export interface Task {
  id: string;
  title: string;
  description: string;
  status: TaskStatus;
  created_by: string;
  assigned_to: string | null;
  project: string | null;
  priority: Priority;
  tags: string[];
  depends_on: string[];
  blocked: boolean;
  due_at: string | null;
  expected_outcome: string | null;
  result: unknown;
  created_at: string;
  updated_at: string;
  claimed_at: string | null;
  completed_at: string | null;
  lease_expires_at: string | null;
}

export interface TaskComment {
  id: string;
  task_id: string;
  agent_id: string;
  kind: "claim" | "unclaim" | "complete" | "fail" | "reopen" | "comment";
  comment: string;
  created_at: string;
}

export interface Message {
  id: string;
  from: string;
  to: string;
  project: string | null;
  subject: string;
  body: string;
  read: boolean;
  reply_to: string | null;
  created_at: string;
}

export interface CairnEvent {
  id: string;
  seq: number;
  type: string;
  agent_id: string;
  project: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

export interface Handoff {
  id: string;
  agent_id: string;
  host: string | null;
  summary: string;
  in_progress: string[];
  next_steps: string[];
  memory_refs: string[];
  created_at: string;
}

export interface LogEntry {
  id: string;
  level: "debug" | "info" | "warn" | "error";
  source: string;
  action: string;
  message: string;
  details: Record<string, unknown>;
  agent_id: string;
  created_at: string;
}

export interface GraphEdge {
  id: string;
  src: string;
  dst: string;
  rel: "relates_to" | "supports" | "contradicts" | "supersedes" | "derived_from";
  note: string | null;
  project: string | null;
  agent_id: string;
  created_at: string;
  updated_at: string;
}

export interface GraphNode {
  node: MemoryEntry;
  edges: { out: GraphEdge[]; in: GraphEdge[] };
}

export interface Health {
  status: "ok" | "degraded";
  version: string;
  embeddings: "loading" | "ready" | "unavailable";
  database: "ok" | "error";
}

export interface UiConfig {
  password_login: boolean;
}

export interface LoginResult {
  session: string;
  agent_id: string;
  expires_at: string;
}
