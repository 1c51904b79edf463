import { z } from "zod";
import { invalid } from "../src/core/errors.js";
import { defineOperation, reply } from "./operation.js";
import { capture, captureReceipt, digestReport } from "../src/wire/captures.js";
import { cursorParam } from "./schemas.js";
import { digestResult, newCapture } from "../src/wire/capture-inputs.js";
import { limitParam, projectId } from "../src/wire/fields.js";

const captureAdd = defineOperation({
  name: "capture_add",
  title: "Hand session text to the archivist",
  description:
    "Hand raw session text (a transcript excerpt, a summary) to the archivist, which distils its lasting facts into memory. Secrets are redacted; only you and the archivist read it.",
  kind: "create",
  http: { method: "POST", path: "/captures", otherStatuses: [{ status: 200, description: "a duplicate: the earlier capture, with duplicate_of" }] },
  input: newCapture,
  output: captureReceipt,
  errors: ["NOT_FOUND", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  async handle({ services, caller }, input) {
    const { capture: receipt, created } = await services.captures.add(caller, input);
    return created ? receipt : reply(receipt, { status: 200 });
  },
});

const captureList = defineOperation({
  name: "capture_list",
  title: "List captures",
  description:
    "The archivist's queue: pending captures (not digested, not expired, not dead), oldest first, with their text. " +
    "Anyone else lists only their own, with `mine=true`.",
  kind: "list",
  http: { method: "GET", path: "/captures" },
  input: z.strictObject({
    project: projectId.nullable().optional().describe("null (or empty): captures without a project"),
    mine: z.boolean().optional().describe("your own captures, newest first"),
    limit: limitParam(500, 50),
    cursor: cursorParam,
  }),
  output: capture,
  errors: ["FORBIDDEN"],
  handle({ services, caller }, input) {
    return services.captures.list(caller, input);
  },
});

const captureDigest = defineOperation({
  name: "capture_digest",
  title: "Report digested captures",
  description:
    "Archivist only: what became of captures it worked on, each digested (with the entries written) or failed; a " +
    "capture that failed CAPTURE_MAX_ATTEMPTS times is dead. `{ids}` alone means all of them digested.",
  kind: "action",
  roles: ["archivist"],
  http: { method: "POST", path: "/captures/digest", status: 200 },
  input: z.strictObject({
    results: z.array(digestResult).min(1).max(100).optional().describe("give results or ids"),
    ids: z.array(z.string().min(1).max(64)).min(1).max(100).optional().describe("the seed's form: all of these digested"),
  }),
  output: digestReport,
  errors: ["FORBIDDEN"],
  handle({ services, caller }, input) {
    if ((input.results === undefined) === (input.ids === undefined)) throw invalid("results", "give results or ids, not both");
    const results = input.results ?? (input.ids ?? []).map((id) => ({ id, outcome: "digested" as const }));
    return services.captures.digest(caller, results);
  },
});

export const captureOperations = [captureAdd, captureList, captureDigest];
