import { createHash } from "node:crypto";
import type { Config } from "../../core/config.js";
import { checkByteSize } from "../../core/byte-size.js";
import { forbidden } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { addSeconds, now } from "../../core/time.js";
import type { EventBus } from "../../events/bus.js";
import type { CaptureRow } from "../../store/captures.js";
import type { Store, Tx } from "../../store/store.js";
import type { Capture, CaptureReceipt, DigestReport } from "../../wire/captures.js";
import { checkProjectWrite } from "../access.js";
import type { Caller } from "../caller.js";
import { decodeCursor, isKeyset, pageOf, type Page } from "../paging.js";
import { redactSecrets, redactSecretsInTurns } from "../redaction.js";
import { locks } from "../locks.js";
import type { DigestResult, NewCapture } from "../../wire/capture-inputs.js";

const DEFAULT_TTL_HOURS = 72;
const DUPLICATE_WINDOW_SECONDS = 24 * 3600;
// An error the archivist reports is kept for its author to read, not a transcript: a line's worth.
const MAX_ERROR_CHARS = 500;

const toCapture = (row: CaptureRow): Capture => ({
  id: row.id,
  agent_id: row.agent_id,
  project: row.project,
  session_id: row.session_id,
  host: row.host,
  content: row.content,
  bytes: row.bytes,
  redactions: row.redactions,
  status: row.status,
  attempts: row.attempts,
  memory_ids: JSON.parse(row.memory_ids) as string[],
  created_at: row.created_at,
  expires_at: row.expires_at,
  digested_at: row.digested_at,
});

const receiptOf = (row: CaptureRow): CaptureReceipt => ({
  id: row.id,
  project: row.project,
  session_id: row.session_id,
  bytes: row.bytes,
  redactions: row.redactions,
  created_at: row.created_at,
  expires_at: row.expires_at,
});

/**
 * Captures (CONTRACT §13): session text an agent's host sends, redacted before it is stored, read
 * by nobody but its author and the archivist role, digested into memory by the archivist, and
 * deleted once spent. The owner role sees none of it: a capture is a transcript, not a record.
 */
export class CaptureService {
  constructor(
    private readonly store: Store,
    private readonly bus: EventBus,
    private readonly config: Config,
  ) {}

  /** Who hears of a capture: its author and the archivist. */
  private audienceOf(row: Pick<CaptureRow, "agent_id">): string[] {
    return [...new Set([row.agent_id, this.config.ARCHIVIST_AGENT_ID])];
  }

  async add(caller: Caller, input: NewCapture): Promise<{ capture: CaptureReceipt; created: boolean }> {
    checkByteSize(input.content, this.config.CAPTURE_MAX_BYTES, "capture content exceeds");
    const project =
      input.project === undefined ? ((await this.store.agents.get(this.store.reader, caller.agentId))?.current_project ?? null) : input.project;
    const { text, redactions } = await redactSecretsInTurns(input.content);
    const contentHash = createHash("sha256").update(text, "utf8").digest("hex");
    const sessionId = input.session_id ?? null;
    return this.store.transaction(async (tx) => {
      await checkProjectWrite(this.store.projects, tx, caller, project);
      const at = now();
      // One agent and session sending the same text again (a hook that fired twice): the first stands.
      await tx.lock(locks.captures(caller.agentId));
      const earlier = await this.store.captures.duplicate(tx, caller.agentId, sessionId, contentHash, addSeconds(at, -DUPLICATE_WINDOW_SECONDS));
      if (earlier) return { capture: { ...receiptOf(earlier), duplicate_of: earlier.id }, created: false };
      const row = {
        id: newId(),
        agent_id: caller.agentId,
        project,
        session_id: sessionId,
        host: input.host ?? null,
        content: text,
        content_hash: contentHash,
        bytes: Buffer.byteLength(text, "utf8"),
        redactions,
        created_at: at,
        expires_at: addSeconds(at, (input.ttl_hours ?? DEFAULT_TTL_HOURS) * 3600),
      };
      await this.store.captures.insert(tx, row);
      await this.bus.emit(tx, {
        type: "capture.added",
        agentId: caller.agentId,
        project,
        payload: { capture_id: row.id, project, session_id: sessionId, bytes: row.bytes },
        audience: this.audienceOf(row),
      });
      const stored = (await this.store.captures.byId(tx, row.id)) as CaptureRow;
      return { capture: receiptOf(stored), created: true };
    });
  }

  /** The archivist role: the pending queue, oldest first. Anyone else: its own, newest first, and only when it asks for them (`mine`). */
  async list(caller: Caller, input: { project?: string | null | undefined; mine?: boolean | undefined; limit: number; cursor?: string | undefined }): Promise<Page<Capture>> {
    const after = decodeCursor(input.cursor, isKeyset);
    const keyOf = (row: CaptureRow) => ({ at: row.created_at, pk: row.pk });
    if (input.mine) {
      const rows = await this.store.captures.byAuthor(this.store.reader, caller.agentId, input.project, after, input.limit + 1);
      return pageOf(rows, input.limit, toCapture, keyOf);
    }
    if (caller.role !== "archivist") throw forbidden("captures are read by the archivist; pass mine=true for your own");
    const rows = await this.store.captures.pending(this.store.reader, input.project, now(), after, input.limit + 1);
    return pageOf(rows, input.limit, toCapture, keyOf);
  }

  /** The archivist's report on captures it worked on: digested, or failed (dead at CAPTURE_MAX_ATTEMPTS). */
  async digest(caller: Caller, results: DigestResult[]): Promise<DigestReport> {
    if (caller.role !== "archivist") throw forbidden("only the archivist digests captures");
    return this.store.transaction(async (tx) => {
      const report: DigestReport = { digested: 0, failed: 0, dead: 0, unknown: [] };
      const rows = new Map((await this.store.captures.forDigest(tx, [...new Set(results.map((result) => result.id))])).map((row) => [row.id, row]));
      const at = now();
      // A capture is settled once per report: a second result for it counts as unknown.
      const settled = new Set<string>();
      for (const result of results) {
        const row = rows.get(result.id);
        const outcome = row && !settled.has(row.id) && row.status === "pending" && row.expires_at > at ? await this.settle(tx, caller, row, result, at) : null;
        settled.add(result.id);
        if (outcome === null) {
          if (!report.unknown.includes(result.id)) report.unknown.push(result.id);
          continue;
        }
        report[outcome]++;
      }
      return report;
    });
  }

  private async settle(tx: Tx, caller: Caller, row: CaptureRow, result: DigestResult, at: string): Promise<"digested" | "failed" | "dead" | null> {
    const memoryIds = [...new Set(result.memory_ids ?? [])];
    let outcome: "digested" | "failed" | "dead" | null;
    if (result.outcome === "digested") {
      outcome = (await this.store.captures.markDigested(tx, row.pk, memoryIds, at)) ? "digested" : null;
    } else {
      // Its author reads the error: a model's words quoted in it are redacted like the capture was.
      const error = redactSecrets((result.error ?? "failed").slice(0, MAX_ERROR_CHARS)).text;
      const status = await this.store.captures.markFailed(tx, row.pk, error, this.config.CAPTURE_MAX_ATTEMPTS);
      outcome = status === null ? null : status === "dead" ? "dead" : "failed";
    }
    if (outcome === null) return null;
    await this.bus.emit(tx, {
      type: "capture.digested",
      agentId: caller.agentId,
      project: row.project,
      payload: { capture_id: row.id, outcome, memory_ids: outcome === "digested" ? memoryIds : [] },
      audience: this.audienceOf(row),
    });
    return outcome;
  }

  /** Deletes expired captures, and digested ones CAPTURE_RETENTION_HOURS after their digest; returns how many. */
  sweep(): Promise<number> {
    const at = now();
    return this.store.transaction((tx) => this.store.captures.deleteSpent(tx, at, addSeconds(at, -this.config.CAPTURE_RETENTION_HOURS * 3600)));
  }
}
