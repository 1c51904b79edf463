// Feeds in: how fast subscriptions' items become entries through the poller, and what one poll
// costs the server. A fixture server on loopback serves `feeds` RSS documents of `items` items each
// (bodies from the bench corpus, so the duplicate check sees realistic text); the server runs with
// the bundled model, so every item is embedded, behind searches, as in production.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { renderFeed, type FixtureItem } from "../test/helpers/feed-fixtures.js";
import { noteStream } from "./corpus.js";
import { expectStatus, latencyStats, newDataDir, progress, round, withServer, type Row, type Section } from "./lib.js";

export interface FeedsInOptions {
  feeds: number;
  items: number;
  /** Polls timed on request, of a feed with nothing new. */
  polls: number;
}

const PROJECT = "bench-feeds";
const FEED_STREAM = 4111;

/** `feeds` RSS documents of `items` items each, by path. */
function documents(feeds: number, items: number): Map<string, string> {
  const next = noteStream(FEED_STREAM);
  const newest = Date.UTC(2026, 2, 1, 12);
  const served = new Map<string, string>();
  for (let feed = 1; feed <= feeds; feed++) {
    const list: FixtureItem[] = Array.from({ length: items }, (_, offset) => {
      const text = next().content;
      return {
        id: `urn:bench:${feed}:${offset}`,
        title: text.split(/[.:;]/)[0]?.slice(0, 80) ?? `item ${offset}`,
        link: `https://feeds.example.test/${feed}/${offset}`,
        published: new Date(newest - offset * 3600_000),
        text,
        html: `<p>${text}</p>`,
      };
    });
    served.set(`/feed-${feed}.xml`, renderFeed("rss-2.0", { name: `feed-${feed}`, title: `Feed ${feed}`, link: "https://feeds.example.test/", items: list }).body);
  }
  return served;
}

/** Serves the documents with an ETag; answers a conditional request with 304 while `conditional.on`. */
async function fixtureServer(served: Map<string, string>, conditional: { on: boolean }): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const body = served.get(request.url ?? "");
    if (body === undefined) response.writeHead(404).end();
    else if (conditional.on && request.headers["if-none-match"] === '"v1"') response.writeHead(304).end();
    else response.writeHead(200, { "content-type": "application/rss+xml", etag: '"v1"' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function runFeedsInBench(options: FeedsInOptions): Promise<Section> {
  const served = documents(options.feeds, options.items);
  const conditional = { on: false };
  const fixture = await fixtureServer(served, conditional);
  try {
    return await withServer(
      newDataDir(),
      8,
      async (server) => {
        await server.waitForHealth((health) => health.embeddings === "ready");
        const alice = await server.client.registerAgent("bench-feeds");
        expectStatus("POST /projects", await server.client.post("/projects", { name: PROJECT }, alice), 201);
        const total = options.feeds * options.items;

        progress(`feeds-in: ${options.feeds} subscriptions of ${options.items} items, polled by the poller`);
        const cpuBefore = server.cpuMs();
        const started = performance.now();
        const ids: string[] = [];
        for (const path of served.keys()) {
          const reply = expectStatus("POST /feeds", await server.client.post("/feeds?verify=false", { url: `${fixture.url}${path}`, project: PROJECT, max_items_per_poll: options.items }, alice), 201);
          ids.push((JSON.parse(reply.body) as { id: string }).id);
        }
        let ingested = 0;
        while (ingested < total) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          const listed = await server.client.get(`/feeds?project=${PROJECT}&limit=200`, alice);
          ingested = (JSON.parse(listed.body) as { items_ingested: number }[]).reduce((sum, feed) => sum + feed.items_ingested, 0);
          if (performance.now() - started > 600_000) throw new Error(`only ${ingested} of ${total} items ingested in 10 minutes`);
        }
        const seconds = (performance.now() - started) / 1000;
        const ingestCpu = server.cpuMs() - cpuBefore;
        const rows: Row[] = [
          {
            scenario: `ingest ${options.feeds} feeds × ${options.items} items (subscribe → all ingested)`,
            n: total,
            p50Ms: null,
            p95Ms: null,
            opsPerSec: round(total / seconds, 1),
            cpuMsPerOp: round(ingestCpu / total, 2),
            rssMb: round(server.memory().rssMb),
            note: `${round(seconds, 1)} s wall, every item embedded (use-lite)`,
          },
        ];

        for (const [label, answers304] of [["poll on request, 200 with nothing new", false], ["poll on request, 304", true]] as const) {
          progress(`feeds-in: ${options.polls} polls (${label})`);
          conditional.on = answers304;
          const latencies: number[] = [];
          const cpu = server.cpuMs();
          for (let poll = 0; poll < options.polls; poll++) {
            const id = ids[poll % ids.length] as string;
            const at = performance.now();
            expectStatus("POST /feeds/{id}/poll", await server.client.post(`/feeds/${id}/poll`, {}, alice), 200);
            latencies.push(performance.now() - at);
          }
          const stats = latencyStats(latencies);
          rows.push({
            scenario: label,
            n: stats.n,
            p50Ms: round(stats.p50, 2),
            p95Ms: round(stats.p95, 2),
            opsPerSec: null,
            cpuMsPerOp: round((server.cpuMs() - cpu) / options.polls, 2),
            rssMb: null,
            note: answers304 ? "conditional GET: nothing fetched but headers" : `${options.items} items fetched, parsed and found seen`,
          });
        }
        return {
          name: "feeds-in",
          title: "Feeds in: items through the poller, and one poll's cost",
          rows,
          targets: [],
          details: { feeds: options.feeds, itemsPerFeed: options.items, model: "use-lite" },
        };
      },
      { FEEDS_ALLOW_PRIVATE: "true", FEEDS_POLL_SECONDS: "1" },
    );
  } finally {
    await fixture.close();
  }
}
