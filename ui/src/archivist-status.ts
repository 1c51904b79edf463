// The archivist's status as GET /archivist/status reports it, and how its last pass reads.

import { api } from "./api.js";
import type { ArchivistStatus } from "../../src/wire/archivist.js";

export const loadArchivistStatus = async (): Promise<ArchivistStatus> => (await api.get<ArchivistStatus>("/archivist/status")).data;

/** The pass counts worth a glance, in words. */
export function passSummary(pass: Record<string, unknown>): string {
  const count = (key: string) => (typeof pass[key] === "number" ? pass[key] : undefined);
  const parts: string[] = [];
  const add = (key: string, label: string) => {
    const value = count(key);
    if (value !== undefined) parts.push(`${value} ${label}`);
  };
  add("entries", "entries read");
  add("projects", "projects");
  const docs = Array.isArray(pass.docs) ? pass.docs.length : count("docs");
  if (docs !== undefined) parts.push(`${docs} synthesis docs`);
  add("tasks", "tasks");
  add("calls", "model calls");
  add("capturesDigested", "captures digested");
  add("decayed", "decayed");
  add("promotedDocs", "promoted to doc");
  add("conflictMessages", "conflicts reported");
  return parts.join(", ");
}
