import { newId } from "../../src/core/ids.js";
import { contentKey } from "../../src/services/memory-records.js";
import type { NewMemoryRow } from "../../src/store/memory.js";
import { NO_EXPIRY, type VectorMeta } from "../../src/store/vectors.js";

/** A live, shared, unembedded memory row to insert through the store directly (store-level tests). */
export function newMemoryRow(content: string, agentId = "writer"): NewMemoryRow {
  const at = new Date().toISOString();
  return {
    id: newId(),
    type: "memory",
    agent_id: agentId,
    project: null,
    scope: "project",
    content,
    content_key: contentKey(content),
    confidence: 1,
    parents: "[]",
    tags: "[]",
    created_at: at,
    updated_at: at,
    version: 1,
    expires_at: null,
    embedding_model: null,
    source: null,
    source_kind: null,
  };
}

/** A vector's filter columns for store-level tests: a shared, unexpired entry of `writer`, overridden. */
export const vectorMeta = (overrides: Partial<VectorMeta> = {}): VectorMeta => ({
  visKey: "g",
  ownerKey: "",
  projectKey: "",
  type: "memory",
  agentId: "writer",
  confidence: 1,
  expiresMs: NO_EXPIRY,
  ...overrides,
});
