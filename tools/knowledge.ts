import { z } from "zod";
import { defineOperation } from "./operation.js";
import { memoryType } from "../src/wire/memory.js";
import { relatedQuery } from "../src/wire/related-query.js";
import { centralEntry, pulse, relatedEntry } from "../src/wire/knowledge.js";
import { includeCode } from "./schemas.js";
import { idRef, limitParam, projectId } from "../src/wire/fields.js";

const memoryRelated = defineOperation({
  name: "memory_related",
  title: "Entries related to one entry",
  description:
    "Entries linked to `id` (and its nearest by meaning), strongest first, each with its `path`. Read contradicting ones first.",
  kind: "read",
  http: { method: "GET", path: "/memory/:id/related" },
  input: z.strictObject({ id: idRef, ...relatedQuery.shape }),
  output: z.array(relatedEntry),
  errors: ["NOT_FOUND"],
  handle({ services, caller }, input) {
    const { id, ...options } = input;
    return services.knowledge.related(caller, id, options);
  },
});

const memoryCentral = defineOperation({
  name: "memory_central",
  title: "What the team's knowledge hangs on",
  description:
    "The shared entries the most others lean on (weighted PageRank over the links between them), highest first. " +
    "Default: your projects and the global entries. Private entries never take part.",
  kind: "read",
  http: { method: "GET", path: "/memory/central" },
  input: z.strictObject({
    project: projectId.optional().describe("only this project's shared entries"),
    type: memoryType.optional(),
    include_code: includeCode,
    limit: limitParam(100, 10),
  }),
  output: z.array(centralEntry),
  errors: ["NOT_FOUND", "UNAVAILABLE"],
  handle({ services, caller }, input) {
    return services.knowledge.centralEntries(caller, input);
  },
});

const pulseGet = defineOperation({
  name: "pulse_get",
  title: "A project's pulse",
  description:
    "One picture of a project: counts, its knowledge graph (its most central entries, at most 300, and the links between them), the central " +
    "and most-read entries, live contradictions, who is active and on which tags. Default your current project; the " +
    "owner and the archivist without a project get everything. Shared entries only; cached up to 30 s.",
  kind: "read",
  http: { method: "GET", path: "/pulse" },
  input: z.strictObject({ project: projectId.optional(), include_code: includeCode }),
  output: pulse,
  errors: ["NOT_FOUND", "UNAVAILABLE"],
  handle({ services, caller }, input) {
    return services.knowledge.pulse(caller, input);
  },
});

export const knowledgeOperations = [memoryRelated, memoryCentral, pulseGet];
