import { z } from "zod";
import { defineOperation } from "./operation.js";
import { archivistLease as leaseRecord, archivistState, archivistStatus as statusRecord, confidenceUpdate, mergeResult } from "../src/wire/archivist.js";
import { confidence } from "../src/wire/memory.js";
import { content } from "./schemas.js";
import { storedCount, tags } from "../src/wire/fields.js";

const stateKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,199}$/, "letters, digits and : . _ - (at most 200)")
  .describe("e.g. directive_stale_notified:<directive id>");

const archivistLease = defineOperation({
  name: "archivist_lease",
  title: "Acquire or renew the archivist lease",
  description:
    "Archivist only. Only one archivist works at a time: the lease is granted when it is free, expired or already " +
    "yours (a renewal extends it), and refused (`granted: false`, with the current holder) otherwise. `token` " +
    "grows whenever the lease changes hands; a write that carries an older token is refused. `release: true` " +
    "gives the lease up at once.",
  kind: "action",
  roles: ["archivist"],
  http: { method: "POST", path: "/archivist/lease" },
  input: z.strictObject({
    holder: z.string().trim().min(1).max(200).describe("this archivist instance's name, stable across its renewals"),
    ttl_seconds: z.number().int().min(10).max(3600).default(120),
    release: z.boolean().optional().describe("give the lease up (only its holder can)"),
  }),
  output: leaseRecord,
  handle({ services, caller }, input) {
    return services.archivist.lease(caller, { holder: input.holder, ttlSeconds: input.ttl_seconds, release: input.release });
  },
});

const archivistStatus = defineOperation({
  name: "archivist_status",
  title: "The archivist's status",
  description:
    "Who holds the archivist lease (null when no archivist is working), whether its language model is on, and the " +
    "counts of its last scheduled pass (entries, model calls, tokens, docs, tasks, decayed and promoted entries).",
  kind: "read",
  http: { method: "GET", path: "/archivist/status" },
  input: z.strictObject({}),
  output: statusRecord,
  handle({ services }) {
    return services.archivist.status(services.config.ARCHIVIST === "on");
  },
});

const archivistStateGet = defineOperation({
  name: "archivist_state_get",
  title: "Read an archivist state value",
  description: "Archivist only: one value of the archivist's key-value store (not found when unset).",
  kind: "read",
  roles: ["archivist"],
  http: { method: "GET", path: "/archivist/state/:key" },
  input: z.strictObject({ key: stateKey }),
  output: archivistState,
  errors: ["NOT_FOUND"],
  handle({ services }, input) {
    return services.archivist.getState(input.key);
  },
});

const archivistStatePut = defineOperation({
  name: "archivist_state_put",
  title: "Store an archivist state value",
  description: "Archivist only: set one key of the archivist's key-value store to any JSON value (at most 16 KiB).",
  kind: "update",
  roles: ["archivist"],
  http: { method: "PUT", path: "/archivist/state/:key" },
  input: z.strictObject({ key: stateKey, value: z.unknown().refine((value) => value !== undefined, "required") }),
  output: archivistState,
  errors: ["CONFLICT", "PAYLOAD_TOO_LARGE"],
  handle({ services }, input) {
    return services.archivist.putState(input.key, input.value);
  },
});

const archivistSetConfidence = defineOperation({
  name: "archivist_set_confidence",
  title: "Decay confidence",
  description:
    "Archivist only: set the confidence of up to 500 entries without changing their `version` or `updated_at`; " +
    "each change emits `memory.updated` with `reason: \"decay\"`. Entries gone since are skipped; a directive id " +
    "refuses the whole call.",
  kind: "action",
  roles: ["archivist"],
  http: { method: "POST", path: "/archivist/confidence" },
  input: z.strictObject({
    updates: z.array(z.strictObject({ id: z.uuid(), confidence })).min(1).max(500),
  }),
  output: confidenceUpdate,
  handle({ services, caller }, input) {
    return services.curation.setConfidence(caller, input.updates);
  },
});

const archivistMerge = defineOperation({
  name: "archivist_merge",
  title: "Merge conflicting entries",
  description:
    "Archivist only: write the merged entry (`parents` = the sources, in their project and scope, version one past " +
    "the highest source version) and soft-delete each source with `superseded_by` set, in one transaction. Sources " +
    "must be memory or doc entries of one project and scope, unchanged since the versions given (else it is refused).",
  kind: "create",
  destructive: true,
  roles: ["archivist"],
  http: { method: "POST", path: "/archivist/merge" },
  input: z.strictObject({
    sources: z.array(z.strictObject({ id: z.uuid(), version: storedCount(1) })).min(2).max(8),
    content,
    tags: tags.optional().describe("default: the union of the sources' tags"),
    confidence: confidence.optional().describe("default: the highest source confidence"),
    notify: z
      .strictObject({ subject: z.string().trim().min(1).max(200), note: z.string().max(2000) })
      .optional()
      .describe("message each source's author in the same transaction: the note, then which entries were merged into which"),
  }),
  output: mergeResult,
  errors: ["NOT_FOUND", "CONFLICT", "PAYLOAD_TOO_LARGE"],
  handle({ services, caller }, input) {
    return services.curation.merge(caller, input);
  },
});

export const archivistOperations = [archivistLease, archivistStatus, archivistStateGet, archivistStatePut, archivistSetConfidence, archivistMerge];
