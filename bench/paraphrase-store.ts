// The store half of the paraphrase benchmark, against a real server on the seeded bench store
// (use-lite vectors; another model re-embeds it with `cairn reindex`) plus the fixtures' notes:
// what a search returns per SEARCH_MIN_SIMILARITY, and what a write lists as `similar` among
// thousands of same-domain notes rather than beside one partner.
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Config } from "../src/core/config.js";
import { packageRoot } from "../src/core/paths.js";
import { SEARCH_FLOORS } from "../src/embed/models.js";
import { offTopicQueries, paraphrases } from "../test/fixtures/paraphrases.js";
import { corpus, queries as fixtureQueries } from "../test/fixtures/search-corpus.js";
import { labelledQueryStream, type LabelledQuery } from "./corpus.js";
import { newDataDir, progress, removeDataDir, serverEnv, startServerProcess, type Credentials, type Row, type ServerProcess, type Target } from "./lib.js";
import { GROUPS, SAME_FACT, SAME_SUBJECT, THRESHOLDS, ratio, verdict, type EmbeddingModel, type Group } from "./paraphrase-pairs.js";
import type { ParaphraseOptions } from "./paraphrase.js";
import { installStore, seededStore } from "./seed.js";

const LABELLED_STREAM = 4001;
const WRITER = "bench-paraphrase-writer";
// Low enough that one write's `similar` answer serves every threshold of the sweep; duplicates
// are off so every probe is written (and then deleted) and its neighbours can be read.
const PROBE_SETTINGS = { SIMILAR_THRESHOLD: String(Math.min(...THRESHOLDS)), DUPLICATE_THRESHOLD: "1" };

interface Hit {
  id: string;
  content: string;
}

interface SearchRun {
  label: string;
  offTopicEmpty: number;
  offTopicHits: number;
  recallAt10: number;
  fixtureFound: number;
  paraphraseFound: number;
}

interface Probe {
  group: Group;
  partners: Set<string>;
  similar: { id: string; similarity: number }[];
}

export interface StoreReport {
  rows: Row[];
  targets: Target[];
  details: Record<string, unknown>;
}

function expectStatus(reply: { status: number; body: string }, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.body}`);
}

/** Re-embeds the data directory's entries with `model`, as an operator switching models would. */
async function reindex(dataDir: string, model: EmbeddingModel): Promise<void> {
  const child = spawn(process.execPath, [join(packageRoot, "dist", "src", "cli.js"), "reindex"], {
    env: { ...serverEnv(dataDir), EMBEDDING_MODEL: model },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`cairn reindex with ${model} exited with ${code}\n${stderr}`);
}

/** The notes every run searches besides the bench corpus: the fixtures' targets. */
async function writeFixtures(server: ServerProcess, writer: Credentials): Promise<void> {
  const contents = new Set([...corpus, ...Object.values(GROUPS).flatMap((pairs) => pairs.map((pair) => pair.a))]);
  for (const content of contents) {
    expectStatus(await server.client.post("/memory", { content, allow_duplicate: true }, writer), 201, "POST /memory");
  }
}

/** Every entry's content by id, following the list's `Link: rel="next"` pages. */
async function allEntries(server: ServerProcess, reader: Credentials): Promise<Hit[]> {
  const entries: Hit[] = [];
  let path: string | null = "/memory?limit=500";
  while (path) {
    const reply = await server.client.get(path, reader);
    expectStatus(reply, 200, "GET /memory");
    entries.push(...(JSON.parse(reply.body) as Hit[]));
    const link = reply.headers.link;
    path = typeof link === "string" ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
  }
  return entries;
}

async function search(server: ServerProcess, reader: Credentials, q: string): Promise<Hit[]> {
  const reply = await server.client.get(`/memory/search?q=${encodeURIComponent(q)}&limit=10`, reader);
  expectStatus(reply, 200, "GET /memory/search");
  return JSON.parse(reply.body) as Hit[];
}

interface Workload {
  labelled: { query: LabelledQuery; relevant: Set<string> }[];
}

async function searchRun(server: ServerProcess, reader: Credentials, workload: Workload, label: string): Promise<SearchRun> {
  let recall = 0;
  for (const { query, relevant } of workload.labelled) {
    const found = (await search(server, reader, query.q)).filter((hit) => relevant.has(hit.id)).length;
    recall += found / Math.min(10, relevant.size);
  }
  let fixtureFound = 0;
  for (const { q, expected } of fixtureQueries) {
    if ((await search(server, reader, q)).some((hit) => hit.content === corpus[expected])) fixtureFound++;
  }
  let paraphraseFound = 0;
  for (const { a, b } of paraphrases) {
    if ((await search(server, reader, b)).some((hit) => hit.content === a)) paraphraseFound++;
  }
  let offTopicEmpty = 0;
  let offTopicHits = 0;
  for (const q of offTopicQueries) {
    const hits = await search(server, reader, q);
    if (hits.length === 0) offTopicEmpty++;
    offTopicHits += hits.length;
  }
  return { label, offTopicEmpty, offTopicHits, recallAt10: recall / workload.labelled.length, fixtureFound, paraphraseFound };
}

/** Writes each pair's second note, keeps what `similar` lists for it, and deletes it again. */
async function probeWrites(server: ServerProcess, writer: Credentials, entries: Hit[]): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (const [group, pairs] of Object.entries(GROUPS) as [Group, typeof paraphrases][]) {
    for (const { a, b } of pairs) {
      const reply = await server.client.post("/memory", { content: b }, writer);
      expectStatus(reply, 201, "POST /memory");
      const written = JSON.parse(reply.body) as { id: string; similar: { id: string; similarity: number }[] };
      probes.push({ group, partners: new Set(entries.filter((entry) => entry.content === a).map((entry) => entry.id)), similar: written.similar });
      expectStatus(await server.client.request("DELETE", `/memory/${written.id}`, { as: writer }), 204, "DELETE /memory");
    }
  }
  return probes;
}

function probeRows(model: EmbeddingModel, probes: Probe[], storeEntries: number): Row[] {
  const count = (groups: Group[]): number => probes.filter((probe) => groups.includes(probe.group)).length;
  return THRESHOLDS.map((threshold) => {
    let partnerListed = 0;
    let unrelatedListed = 0;
    let othersListed = 0;
    let rightMerges = 0;
    let wrongMerges = 0;
    for (const probe of probes) {
      const listed = probe.similar.filter((entry) => entry.similarity >= threshold);
      const partner = listed.some((entry) => probe.partners.has(entry.id));
      if (partner && SAME_SUBJECT.includes(probe.group)) partnerListed++;
      if (partner && probe.group === "unrelated") unrelatedListed++;
      othersListed += listed.filter((entry) => !probe.partners.has(entry.id)).length;
      // The nearest entry at or above the threshold is the one a duplicate check would merge into.
      const nearest = listed[0];
      if (nearest && SAME_FACT.includes(probe.group) && probe.partners.has(nearest.id)) rightMerges++;
      else if (nearest) wrongMerges++;
    }
    const duplicate = verdict(rightMerges, count(SAME_FACT), wrongMerges);
    return {
      scenario: `${model} in the ${storeEntries.toLocaleString("en")}-entry store, cosine ≥ ${threshold}`,
      n: probes.length,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note:
        `similar lists the partner for ${partnerListed}/${count(SAME_SUBJECT)} same-subject and ${unrelatedListed}/${count(["unrelated"])} unrelated writes, ` +
        `${(othersListed / probes.length).toFixed(2)} other entries per write; ` +
        `duplicate ${rightMerges} right and ${wrongMerges} wrong merges (P ${ratio(duplicate.precision)} R ${ratio(duplicate.recall)})`,
    };
  });
}

const runRow = (model: EmbeddingModel, run: SearchRun, workload: Workload): Row => ({
  scenario: `${model} search, ${run.label}`,
  n: workload.labelled.length + fixtureQueries.length + paraphrases.length + offTopicQueries.length,
  p50Ms: null,
  p95Ms: null,
  opsPerSec: null,
  cpuMsPerOp: null,
  rssMb: null,
  note:
    `off-topic → [] ${run.offTopicEmpty}/${offTopicQueries.length} (${run.offTopicHits} hits); ` +
    `bench recall@10 ${run.recallAt10.toFixed(3)} (${workload.labelled.length} queries); ` +
    `target in top 10: fixture queries ${run.fixtureFound}/${fixtureQueries.length}, paraphrases ${run.paraphraseFound}/${paraphrases.length}`,
});

const keepsBenchRecall = (run: SearchRun, baseline: SearchRun): boolean => run.recallAt10 >= baseline.recallAt10 - 1e-9;
const keepsSemanticRecall = (run: SearchRun, baseline: SearchRun): boolean =>
  run.fixtureFound >= baseline.fixtureFound && run.paraphraseFound >= baseline.paraphraseFound;

/**
 * The floor to choose (CONTRACT §10a): the lowest swept one at which every off-topic query returns
 * nothing while the search benchmark's recall@10 stays where it was without a floor.
 */
function searchTargets(model: EmbeddingModel, swept: { floor: number; run: SearchRun }[], atDefault: SearchRun): Target[] {
  const baseline = swept[0]?.run;
  if (!baseline) return [];
  const fits = swept.find(({ floor, run }) => floor > 0 && run.offTopicEmpty === offTopicQueries.length && keepsBenchRecall(run, baseline));
  return [
    {
      what: `${model}: lowest swept floor with every off-topic query empty and bench recall@10 kept`,
      goal: `the default, ${SEARCH_FLOORS[model]}`,
      measured: fits ? String(fits.floor) : "none of the swept floors",
      met: fits ? fits.floor === SEARCH_FLOORS[model] : false,
    },
    {
      what: `${model}: off-topic queries that return [] at the default floor ${SEARCH_FLOORS[model]}`,
      goal: `all ${offTopicQueries.length}`,
      measured: `${atDefault.offTopicEmpty} (no floor: ${baseline.offTopicEmpty})`,
      met: atDefault.offTopicEmpty === offTopicQueries.length,
    },
    {
      what: `${model}: bench recall@10 at the default floor`,
      goal: `no lower than without a floor (${baseline.recallAt10.toFixed(3)})`,
      measured: atDefault.recallAt10.toFixed(3),
      met: keepsBenchRecall(atDefault, baseline),
    },
    {
      what: `${model}: paraphrased queries whose target is in the top 10 at the default floor`,
      goal: `as many as without a floor (fixture ${baseline.fixtureFound}, paraphrases ${baseline.paraphraseFound})`,
      measured: `fixture ${atDefault.fixtureFound}, paraphrases ${atDefault.paraphraseFound}`,
      met: keepsSemanticRecall(atDefault, baseline),
    },
  ];
}

export async function storeBench(model: EmbeddingModel, options: ParaphraseOptions, defaults: Config): Promise<StoreReport> {
  const store = await seededStore(options.storeEntries, progress);
  const dataDir = newDataDir();
  try {
    await installStore(store, dataDir, progress);
    if (model !== "use-lite") {
      progress(`paraphrase: re-embedding the ${options.storeEntries.toLocaleString("en")}-entry store with ${model}`);
      await reindex(dataDir, model);
    }
    const withServer = async <T>(env: Record<string, string>, body: (server: ServerProcess) => Promise<T>): Promise<T> => {
      const server = await startServerProcess(dataDir, 4, { EMBEDDING_MODEL: model, ...PROBE_SETTINGS, ...env });
      try {
        await server.waitForHealth((health) => health.embeddings === "ready");
        return await body(server);
      } finally {
        await server.stop();
      }
    };

    let writer: Credentials | undefined;
    let workload: Workload | undefined;
    const swept: { floor: number; run: SearchRun }[] = [];
    for (const floor of options.floors) {
      progress(`paraphrase: ${model} searches with SEARCH_MIN_SIMILARITY=${floor}`);
      const run = await withServer({ SEARCH_MIN_SIMILARITY: String(floor) }, async (server) => {
        if (!writer || !workload) {
          writer = await server.client.registerAgent(WRITER);
          await writeFixtures(server, writer);
          workload = labelledWorkload(await allEntries(server, writer), options.queries);
        }
        return searchRun(server, writer, workload, floor === 0 ? "no floor" : `SEARCH_MIN_SIMILARITY ${floor}`);
      });
      swept.push({ floor, run });
    }
    if (!writer || !workload) throw new Error("paraphrase: no floors to sweep");
    const reader = writer;
    const labelled = workload;
    progress(`paraphrase: ${model} at its default floor, and the similar probes`);
    const { atDefault, probes } = await withServer({}, async (server) => ({
      atDefault: await searchRun(server, reader, labelled, `default floor ${SEARCH_FLOORS[model]}`),
      probes: await probeWrites(server, reader, await allEntries(server, reader)),
    }));
    return {
      rows: [...swept.map(({ run }) => runRow(model, run, labelled)), runRow(model, atDefault, labelled), ...probeRows(model, probes, options.storeEntries)],
      targets: searchTargets(model, swept, atDefault),
      details: {
        default_floor: SEARCH_FLOORS[model],
        thresholds_in_use: { DUPLICATE_THRESHOLD: defaults.DUPLICATE_THRESHOLD, SIMILAR_THRESHOLD: defaults.SIMILAR_THRESHOLD },
        searches: [...swept.map(({ run }) => run), atDefault],
      },
    };
  } finally {
    await removeDataDir(dataDir);
  }
}

/** Labelled queries whose terms some note contains, each with the ids of those notes. */
function labelledWorkload(entries: Hit[], count: number): Workload {
  const next = labelledQueryStream(LABELLED_STREAM);
  const lowered = entries.map((entry) => ({ id: entry.id, content: entry.content.toLowerCase() }));
  const labelled: Workload["labelled"] = [];
  for (let tries = 0; labelled.length < count && tries < count * 10; tries++) {
    const query = next();
    const relevant = new Set(lowered.filter((entry) => query.terms.every((term) => entry.content.includes(term))).map((entry) => entry.id));
    if (relevant.size > 0) labelled.push({ query, relevant });
  }
  return { labelled };
}
