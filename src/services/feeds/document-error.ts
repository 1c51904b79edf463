// Apart from the parser, so the main thread names the error without loading feedsmith and htmlparser2.

/**
 * Why a document yields no feed: `not-a-feed` (an HTML page, other XML, JSON that is no JSON
 * Feed, an empty body), `malformed` (a feed that does not parse: broken XML or JSON, nesting past
 * the parser's limit, an external entity), `refused` (a document declaring entities, refused
 * before parsing).
 */
export type FeedDocumentFailure = "not-a-feed" | "malformed" | "refused";

export class FeedDocumentError extends Error {
  constructor(
    readonly reason: FeedDocumentFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.name = "FeedDocumentError";
  }
}
