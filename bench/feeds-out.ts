// The outbound feeds and the merkle summary (CONTRACT §15) on a seeded store, through a real server
// on loopback, on either backend: feed.json pages of 500 walked through every entry, the same as
// Atom, a poller's 304, and the merkle summary cold (the first after a start), after one change
// (one bucket hashed again), cached, and one bucket's leaves.
import { installStore, seededStore } from "./seed.js";
import { judge, newDataDir, progress, removeDataDir, round, samplesRow, startServerProcess, type Credentials, type Row, type Section, type ServerProcess } from "./lib.js";

export interface FeedsOutOptions {
  entries: number;
  /** Passes over the first feed page, and 304 polls of it. */
  polls: number;
  /** Server starts, each followed by one cold summary. */
  coldRuns: number;
  cachedRuns: number;
}

const PAGE = 500;

interface Feed {
  next_url?: string;
  items: unknown[];
}

interface Summary {
  count: number;
  buckets: Record<string, string>;
}

async function timed(server: ServerProcess, path: string, as: Credentials, headers: Record<string, string> = {}, status = 200): Promise<{ ms: number; body: string; etag: string | undefined }> {
  const started = performance.now();
  const reply = await server.client.request("GET", path, { as, headers });
  const ms = performance.now() - started;
  if (reply.status !== status) throw new Error(`GET ${path}: ${reply.status} ${reply.body.slice(0, 300)}`);
  const etag = reply.headers.etag;
  return { ms, body: reply.body, etag: typeof etag === "string" ? etag : undefined };
}

const row = (scenario: string, samples: number[], server: ServerProcess | null, note?: string): Row =>
  samplesRow(scenario, samples, server?.memory().rssMb ?? null, note === undefined ? {} : { note });

/** Every page of `first`'s feed, by next_url; the time of each. */
async function walk(server: ServerProcess, first: string, as: Credentials): Promise<{ samples: number[]; items: number }> {
  const samples: number[] = [];
  let items = 0;
  for (let path: string | undefined = first; path !== undefined; ) {
    const { ms, body } = await timed(server, path, as);
    samples.push(ms);
    if (path.includes("feed.json")) {
      const feed = JSON.parse(body) as Feed;
      items += feed.items.length;
      path = feed.next_url === undefined ? undefined : feed.next_url.slice(server.url.length);
    } else {
      items += body.split("<entry>").length - 1;
      const next = /<link rel="next" type="application\/atom\+xml" href="([^"]+)"\/>/.exec(body)?.[1];
      path = next === undefined ? undefined : next.replaceAll("&amp;", "&").slice(server.url.length);
    }
  }
  return { samples, items };
}

export async function runFeedsOutBench(options: FeedsOutOptions): Promise<Section> {
  const seeded = await seededStore(options.entries, progress);
  const dataDir = newDataDir();
  await installStore(seeded, dataDir, progress);
  const size = `${options.entries.toLocaleString("en")} entries`;
  const rows: Row[] = [];
  const starts: number[] = [];
  let summaryCount = 0;
  try {
    // The seeded store predates the leaves: its first start stamps every entry.
    for (let run = 0; run < options.coldRuns; run++) {
      progress(`feeds-out: start ${run + 1} of ${options.coldRuns}`);
      const server = await startServerProcess(dataDir, 4);
      try {
        starts.push(await server.waitForHealth());
        // The model loads in the background after a start: measured only once it has, so it skews nothing.
        await server.waitForHealth((health) => health.embeddings === "ready");
        const reader = run === 0 ? await server.client.registerAgent("bench-feed-reader") : server.owner();
        const cold = await timed(server, "/memory/merkle?project=", reader);
        rows.push(row(`merkle summary cold, ${size}`, [cold.ms], server, `the first after start ${run + 1}: every bucket hashed`));
        if (run < options.coldRuns - 1) continue;

        summaryCount = (JSON.parse(cold.body) as Summary).count;
        const cached: number[] = [];
        for (let n = 0; n < options.cachedRuns; n++) cached.push((await timed(server, "/memory/merkle?project=", reader)).ms);
        rows.push(row(`merkle summary cached, ${size}`, cached, server, "nothing changed: the newest change_seq read, the hashes kept"));

        const buckets = Object.keys((JSON.parse(cold.body) as Summary).buckets);
        const bucketSamples: number[] = [];
        const edited: string[] = [];
        for (let n = 0; n < options.cachedRuns; n++) {
          const bucket = await timed(server, `/memory/merkle?project=&bucket=${buckets[n % buckets.length]}`, reader);
          bucketSamples.push(bucket.ms);
          const first = Object.keys((JSON.parse(bucket.body) as { entries: Record<string, string> }).entries)[0];
          if (first !== undefined) edited.push(first);
        }
        rows.push(row(`merkle bucket, ${size}`, bucketSamples, server, `~${Math.round(options.entries / 256)} leaves`));

        // The owner edits an entry (the store is at its entry cap: no new ones), then asks again.
        const afterChange: number[] = [];
        for (const [n, id] of edited.slice(0, 20).entries()) {
          const patched = await server.client.request("PATCH", `/memory/${id}`, { body: { content: `feeds-out bench edit ${n}` }, as: server.owner() });
          if (patched.status !== 200) throw new Error(`PATCH /memory/${id}: ${patched.status} ${patched.body}`);
          afterChange.push((await timed(server, "/memory/merkle?project=", reader)).ms);
        }
        rows.push(row(`merkle summary after one edit, ${size}`, afterChange, server, "one bucket hashed again"));

        progress(`feeds-out: feed.json at ${size}`);
        const jsonWalk = await walk(server, `/memory/feed.json?limit=${PAGE}`, reader);
        rows.push(row(`feed.json page of ${PAGE}, every page of ${size}`, jsonWalk.samples, server, `${jsonWalk.items.toLocaleString("en")} items, newest first, by next_url`));
        const first: number[] = [];
        let etag = "";
        for (let n = 0; n < options.polls; n++) {
          const page = await timed(server, `/memory/feed.json?limit=${PAGE}`, reader);
          first.push(page.ms);
          etag = page.etag ?? "";
        }
        rows.push(row(`feed.json first page of ${PAGE}, ${size}`, first, server));
        const polls: number[] = [];
        for (let n = 0; n < options.polls; n++) polls.push((await timed(server, `/memory/feed.json?limit=${PAGE}`, reader, { "if-none-match": etag }, 304)).ms);
        rows.push(row(`feed.json first page, If-None-Match → 304, ${size}`, polls, server, "the page is read and rendered to compare tags; no body sent"));

        progress(`feeds-out: feed.atom at ${size}`);
        const atomWalk = await walk(server, `/memory/feed.atom?limit=${PAGE}`, reader);
        rows.push(row(`feed.atom page of ${PAGE}, every page of ${size}`, atomWalk.samples, server, `${atomWalk.items.toLocaleString("en")} entries`));
      } finally {
        await server.stop();
      }
    }
  } finally {
    await removeDataDir(dataDir);
  }
  rows.unshift({
    scenario: `server start to /health 200, ${size}`,
    n: starts.length,
    p50Ms: round(starts[0] ?? Number.NaN, 0),
    p95Ms: round(Math.max(...starts.slice(1)), 0),
    opsPerSec: null,
    cpuMsPerOp: null,
    rssMb: null,
    note: "p50: the first start, which stamps every entry's leaf; p95: the slowest later start",
  });
  const find = (prefix: string): Row | undefined => rows.find((candidate) => candidate.scenario.startsWith(prefix));
  const page = find("feed.json page");
  const cached = find("merkle summary cached");
  return {
    name: "feeds-out",
    title: `Outbound feeds and the merkle summary at ${size} (pages of ${PAGE}; ${options.coldRuns} cold summaries, ${options.cachedRuns} cached)`,
    rows,
    targets: [
      { what: "feed.json page of 500, p95", goal: "≤ 150 ms", measured: page ? `${page.p95Ms} ms` : "not run", met: judge(page?.p95Ms, (p95) => p95 <= 150) },
      { what: "merkle summary cached, p95", goal: "≤ 100 ms", measured: cached ? `${cached.p95Ms} ms` : "not run", met: judge(cached?.p95Ms, (p95) => p95 <= 100) },
    ],
    details: { entries: options.entries, summary_count: summaryCount, page: PAGE },
  };
}
