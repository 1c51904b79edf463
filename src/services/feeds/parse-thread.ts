import { InternalError } from "../../core/errors.js";
import { srcModule } from "../../core/paths.js";
import { SerialWorker } from "../../core/worker-thread.js";
import type { ReadyItem } from "./items.js";
import { FeedDocumentError } from "./document-error.js";
import type { ParseReply, ParseRequest } from "./parse-worker.js";

/** Documents waiting for the parser past which another is refused (polls are 4 at a time per process). */
const MAX_WAITING_PARSES = 32;
/** A parse taking longer than this ends the thread (a new one starts for the next document). */
const PARSE_TIMEOUT_MS = 30_000;

export interface ParsedItems {
  title: string | undefined;
  /** Newest first, each key once. */
  items: ReadyItem[];
}

/**
 * The process's feed parser: one worker thread, one document at a time in the order asked, so a
 * large or hostile document costs that thread's time, never the event loop's.
 */
export class FeedParseThread {
  private readonly thread = new SerialWorker<Omit<ParseRequest, "id">, ParseReply>({
    entry: srcModule("services/feeds/parse-worker.js"),
    timeoutMs: PARSE_TIMEOUT_MS,
    timedOut: () => new FeedDocumentError("malformed", `parsing took longer than ${PARSE_TIMEOUT_MS / 1000} s`),
    exited: (code) => new InternalError("invariant", `the feed parser exited with code ${code}`),
  });

  /** The document's items as entries would hold them; throws FeedDocumentError for a document that is no feed. */
  async parse(body: Uint8Array, contentType: string | undefined, baseUrl: string, maxContentBytes: number): Promise<ParsedItems> {
    if (this.thread.backlog >= MAX_WAITING_PARSES) throw new FeedDocumentError("refused", "the feed parser is busy; the next poll tries again");
    const reply = await this.thread.run({ body, contentType, baseUrl, maxContentBytes });
    if (reply.ok) return { title: reply.title, items: reply.items };
    if (reply.failure !== null) throw new FeedDocumentError(reply.failure, reply.message);
    throw new InternalError("invariant", `parsing a feed failed: ${reply.message}`);
  }

  /** Ends the thread (a closing server); documents still waiting fail. */
  close(): Promise<void> {
    return this.thread.stop(new FeedDocumentError("refused", "the server is stopping"));
  }
}
