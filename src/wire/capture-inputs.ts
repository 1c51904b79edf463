import { z } from "zod";
import { projectId } from "./fields.js";

// What a capture is made from and what the archivist reports of it: \`capture_add\`'s input and
// \`capture_digest\`'s results, and what \`CaptureService.add\` and \`digest\` take, declared once.

export const newCapture = z.strictObject({
  content: z.string().min(1).describe("at most CAPTURE_MAX_BYTES bytes"),
  session_id: z.string().min(1).max(128).optional(),
  project: projectId.nullable().optional().describe("default your current project; null: your private scope"),
  host: z.string().min(1).max(64).optional().describe("the agent host that sent it, e.g. claude-code"),
  ttl_hours: z.number().int().min(1).max(720).optional().describe("kept undigested this long; default 72"),
});
export type NewCapture = z.output<typeof newCapture>;

/** What became of one capture the archivist worked on. */
export const digestResult = z.strictObject({
  id: z.string().min(1).max(64),
  outcome: z.enum(["digested", "failed"]),
  memory_ids: z.array(z.uuid()).max(100).optional(),
  error: z.string().max(2000).optional(),
});
export type DigestResult = z.output<typeof digestResult>;
