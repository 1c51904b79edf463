import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { NextFunction, Request, Response } from "express";
import { AppError } from "../core/errors.js";
import { splitLines, type LineSource } from "../core/line-source.js";
import { acceptsTextType, hasBody } from "./text-body.js";

/**
 * A request body of text kept in a temporary file, for an operation that takes a file of any size
 * (the import): read line by line, as often as asked, and removed once the request is answered.
 */
export class SpooledBody implements LineSource {
  constructor(
    private readonly directory: string,
    private readonly file: string,
    readonly sha256: string,
    readonly bytes: number,
  ) {}

  lines(): AsyncIterable<string> {
    return splitLines(createReadStream(this.file));
  }

  /** What an Idempotency-Key's request hash sees: the body itself (by its digest), never where it is kept. */
  toJSON(): { sha256: string; bytes: number } {
    return { sha256: this.sha256, bytes: this.bytes };
  }

  discard(): Promise<void> {
    return rm(this.directory, { recursive: true, force: true });
  }
}

/**
 * Hashes the body, and finds what is not UTF-8 (400) or a line longer than `maxLineBytes` (413).
 * A body found wanting is still read to its end (and nothing more of it kept), so the client gets
 * the refusal as an answer rather than a connection cut under a body it is still sending.
 */
class CheckedLines extends Transform {
  private readonly hash = createHash("sha256");
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private lineBytes = 0;
  private line = 1;
  bytes = 0;
  problem: AppError | null = null;

  constructor(private readonly maxLineBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.problem === null) this.problem = this.check(chunk);
    if (this.problem !== null) {
      done();
      return;
    }
    this.bytes += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.problem === null) {
      try {
        this.decoder.decode();
      } catch {
        this.problem = new AppError("BAD_REQUEST", "request body is not valid utf-8");
      }
    }
    done();
  }

  private check(chunk: Buffer): AppError | null {
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      return new AppError("BAD_REQUEST", "request body is not valid utf-8");
    }
    for (let start = 0; start < chunk.length; ) {
      const end = chunk.indexOf(0x0a, start);
      this.lineBytes += (end === -1 ? chunk.length : end) - start;
      if (this.lineBytes > this.maxLineBytes) return new AppError("PAYLOAD_TOO_LARGE", `line ${this.line} of the body exceeds ${this.maxLineBytes} bytes`);
      if (end === -1) break;
      this.lineBytes = 0;
      this.line++;
      start = end + 1;
    }
    return null;
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}

async function spool(request: Request, maxLineBytes: number): Promise<SpooledBody> {
  const directory = await mkdtemp(join(tmpdir(), "cairn-body-"));
  const file = join(directory, "body");
  const checked = new CheckedLines(maxLineBytes);
  try {
    // The body is as private as what it holds: readable by this user alone while it is kept.
    await pipeline(request, checked, createWriteStream(file, { mode: 0o600 }));
  } catch {
    await rm(directory, { recursive: true, force: true });
    throw new AppError("BAD_REQUEST", "the request body ended before it was complete");
  }
  if (checked.problem !== null) {
    await rm(directory, { recursive: true, force: true });
    throw checked.problem;
  }
  return new SpooledBody(directory, file, checked.digest(), checked.bytes);
}

/**
 * The body as a SpooledBody of UTF-8 text of `mediaType` (415 otherwise): written to a temporary
 * file as it arrives, so it is bounded by the disk, not by memory or MAX_BODY_BYTES; each line
 * must stay within `maxLineBytes` (413), which bounds what a reader of it holds at once. No body
 * is "". The route removes the file once it has answered (`discardSpooledBody`).
 */
export function spooledTextBody(mediaType: string, maxLineBytes: number) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (!hasBody(request)) {
      request.body = "";
      next();
      return;
    }
    const refusal = acceptsTextType(request, mediaType);
    if (refusal !== null) {
      next(refusal);
      return;
    }
    const encoding = (request.get("content-encoding") ?? "identity").trim().toLowerCase();
    if (encoding !== "identity") {
      next(new AppError("UNSUPPORTED_MEDIA_TYPE", "content-encoding must be identity"));
      return;
    }
    spool(request, maxLineBytes).then(
      (body) => {
        request.body = body;
        next();
      },
      (error: unknown) => next(error),
    );
  };
}

export async function discardSpooledBody(request: Request): Promise<void> {
  const body: unknown = request.body;
  if (body instanceof SpooledBody) await body.discard();
}
