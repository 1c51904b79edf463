import { parentPort } from "node:worker_threads";
import { newestItems, type ReadyItem } from "./items.js";
import { FeedDocumentError, parseFeedDocument, type FeedDocumentFailure } from "./parse.js";

// A feed document is parsed here, off the server's thread: a large one takes a second or more of
// CPU (fast-xml-parser's cost, linear in the body), which the event loop must never wait for.

export interface ParseRequest {
  id: number;
  body: Uint8Array;
  contentType: string | undefined;
  baseUrl: string;
  maxContentBytes: number;
}

export type ParseReply =
  | { id: number; ok: true; title: string | undefined; items: ReadyItem[] }
  | { id: number; ok: false; failure: FeedDocumentFailure | null; message: string };

parentPort?.on("message", (request: ParseRequest) => {
  let reply: ParseReply;
  try {
    const document = parseFeedDocument(request.body, request.contentType, { baseUrl: request.baseUrl });
    reply = { id: request.id, ok: true, title: document.title, items: newestItems(document.items, request.maxContentBytes) };
  } catch (error) {
    reply = {
      id: request.id,
      ok: false,
      failure: error instanceof FeedDocumentError ? error.reason : null,
      message: error instanceof Error ? error.message : String(error),
    };
  }
  parentPort?.postMessage(reply);
});
