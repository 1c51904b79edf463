import { spawnSync } from "node:child_process";
import { parseAtomFeed, parseJsonFeed } from "feedsmith";
import { expect } from "vitest";
import type { JsonFeed } from "../../src/wire/memory-feed.js";
import type { Credentials, Response, TestServer } from "./server.js";

/** Helpers for the outbound feeds and the merkle summary (CONTRACT §15), read as a client would. */

export type { JsonFeed };
export type AtomFeed = NonNullable<ReturnType<typeof parseAtomFeed>>;

/** This server's identity as /health gives it. */
export async function instanceOf(server: TestServer): Promise<{ instance_id: string; instance_name: string }> {
  const health = await server.request<{ instance_id: string; instance_name: string }>("/health");
  expect(health.status).toBe(200);
  return health.body;
}

/** GET /memory/feed.json?`query`: the body as sent (`_cairn` included) and as feedsmith reads it. */
export async function jsonFeed(server: TestServer, as: Credentials, query = ""): Promise<{ response: Response<JsonFeed>; feed: JsonFeed; read: ReturnType<typeof parseJsonFeed> }> {
  const response = await server.request<JsonFeed>(`/memory/feed.json${query ? `?${query}` : ""}`, { as });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/feed+json; charset=utf-8");
  return { response, feed: response.body, read: parseJsonFeed(response.text) };
}

/** GET /memory/feed.atom?`query`, checked well-formed, and as feedsmith reads it. */
export async function atomFeed(server: TestServer, as: Credentials, query = ""): Promise<{ response: Response<string>; read: AtomFeed }> {
  const response = await server.request<string>(`/memory/feed.atom${query ? `?${query}` : ""}`, { as });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
  expectWellFormedXml(response.text);
  return { response, read: parseAtomFeed(response.text) };
}

// Characters XML 1.0 cannot carry, escaped or not.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const hasPython = spawnSync("python3", ["--version"]).status === 0;

/**
 * No character XML forbids, and, where the machine has Python, the strict XML 1.0 parser of its
 * standard library (expat) reads the document to the end.
 */
function expectWellFormedXml(text: string): void {
  expect(NOT_XML.test(text), "a character XML forbids").toBe(false);
  if (!hasPython) return;
  const parsed = spawnSync("python3", ["-c", "import sys, xml.parsers.expat; xml.parsers.expat.ParserCreate().Parse(sys.stdin.buffer.read(), True)"], { input: text, encoding: "utf8" });
  expect(parsed.stderr).toBe("");
  expect(parsed.status).toBe(0);
}
