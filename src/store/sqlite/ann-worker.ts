import { parentPort } from "node:worker_threads";
import { LiveAnn, type LiveNotice, type LiveSettings, messageOf, StaleIndex } from "./ann-live.js";

/**
 * The thread that owns a SQLite store's HNSW index (ann-live.ts): builds or loads it, applies the
 * store's changes to it and answers searches, so that none of that runs on the server's event
 * loop (at 100,000 entries a write's duplicate survey and its new point cost ~3 ms of hnswlib).
 * Messages are handled in the order sent; `changed` has no reply.
 */
export type AnnRequest =
  | { id: number; type: "open"; settings: LiveSettings }
  | { id: number; type: "search"; vector: Float32Array; n: number }
  | { id: number; type: "current" }
  | { id: number; type: "close" }
  | { type: "changed" };

export type AnnReply =
  | { id: number; type: "opened"; seq: number; count: number }
  | { id: number; type: "found"; labels: number[] | null }
  | { id: number; type: "current" }
  | { id: number; type: "closed" }
  /** The index is no longer the database's (a new model, another process pruned past it): open it again. */
  | { id: number; type: "stale" }
  | { id: number; type: "error"; message: string };

export type AnnMessage = AnnReply | LiveNotice;

const port = parentPort;
let live: LiveAnn | null = null;
let opening: Promise<unknown> | null = null;

const post = (message: AnnMessage): void => port?.postMessage(message);

/** Lets go of an index without saving it: it is stale, or about to be replaced. */
function discard(): void {
  const old = live;
  live = null;
  old?.discard();
}

async function open(id: number, settings: LiveSettings): Promise<AnnReply> {
  discard();
  const candidate = new LiveAnn(settings, (notice) => {
    if (notice.type === "failed" && notice.dropped && live === candidate) discard();
    post(notice);
  });
  try {
    const { seq, count } = await candidate.open();
    live = candidate;
    return { id, type: "opened", seq, count };
  } catch (error) {
    candidate.discard();
    throw error;
  }
}

/** A stale index is dropped and said so; anything else fails the request alone. */
async function answer(id: number, work: (index: LiveAnn) => AnnReply | Promise<AnnReply>): Promise<AnnReply> {
  if (!live) return { id, type: "stale" };
  try {
    return await work(live);
  } catch (error) {
    if (!(error instanceof StaleIndex)) throw error;
    discard();
    return { id, type: "stale" };
  }
}

async function handle(request: Exclude<AnnRequest, { type: "changed" }>): Promise<AnnReply> {
  switch (request.type) {
    case "open":
      opening = open(request.id, request.settings);
      try {
        return (await opening) as AnnReply;
      } finally {
        opening = null;
      }
    case "search":
      return answer(request.id, (index) => ({ id: request.id, type: "found", labels: index.search(request.vector, request.n) }));
    case "current":
      return answer(request.id, async (index) => {
        await index.current();
        return { id: request.id, type: "current" };
      });
    case "close": {
      await opening?.catch(() => undefined);
      const closing = live;
      live = null;
      await closing?.close();
      return { id: request.id, type: "closed" };
    }
  }
}

port?.on("message", (request: AnnRequest) => {
  if (request.type === "changed") {
    live?.changed();
    return;
  }
  void handle(request)
    .catch((error: unknown): AnnReply => ({ id: request.id, type: "error", message: messageOf(error) }))
    .then(post);
});
