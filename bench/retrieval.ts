// Retrieval quality on public data sets with relevance labels (bench/data/README.md), on whichever
// backend the run uses. Every document is written through POST /memory as agents write (one
// project per conversation; a duplicate answers with the entry it repeats, and that entry then
// stands for it), every query asked through GET /memory/search in its project. The same stored
// texts and vectors are ranked by plain BM25 and by exact cosine alone, so the three columns
// differ only in ranking. Scores are per query, averaged per query type and over all.
import { embedderLoaderFor } from "../src/embed/models.js";
import { DEFAULT_SEARCH_MIN_SCORE } from "../src/core/config.js";
import { CACHE_DIR } from "./seed.js";
import { expectStatus, latencyStats, newDataDir, progress, round, withServer, type Credentials, type Reply, type Row, type Section, type ServerProcess, type Target } from "./lib.js";
import { Bm25, mean, nearest, score, type Scores } from "./retrieval-metrics.js";
import { loadCranfield, loadLocomo, type RetrievalSet } from "./retrieval-sets.js";

const WRITERS = 4;
const FLOORS = [0, 0.04, 0.06, 0.08, 0.09, 0.1, 0.12, 0.15, 0.2];
const READERS = 4;

export interface RetrievalOptions {
  /** At most this many queries per set (all when undefined): --quick asks fewer. */
  queries?: number;
}

type Ranker = "cairn" | "bm25" | "vectors";
const RANKERS: Ranker[] = ["cairn", "bm25", "vectors"];

async function inParallel<T>(items: T[], workers: number, work: (item: T, worker: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let index = next++; index < items.length; index = next++) await work(items[index] as T, worker);
    }),
  );
}

/**
 * Retries a 429 after its Retry-After, as a well-behaved agent does, and a request whose kept-alive
 * socket the server closed just as it was reused (once).
 */
async function politely(send: () => Promise<Reply>): Promise<Reply> {
  let reused = false;
  for (;;) {
    let reply: Reply;
    try {
      reply = await send();
    } catch (error) {
      if (reused || (error as { code?: string }).code !== "ECONNRESET") throw error;
      reused = true;
      continue;
    }
    if (reply.status !== 429) return reply;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(reply.headers["retry-after"] ?? 1)));
  }
}

/** The project a group's documents are written to and its queries asked in. */
const projectOf = (group: string): string => `bench-${group.toLowerCase().replace(/[^a-z0-9-]/g, "-")}`;

interface Stored {
  /** Document key → the id of the entry that holds it. */
  entryOf: Map<string, string>;
  /** Per group: its entries' ids, contents and vectors. */
  groups: Map<string, { ids: string[]; texts: string[]; vectors: Float32Array[] }>;
}

async function storeSet(server: ServerProcess, set: RetrievalSet, writers: Credentials[]): Promise<Stored> {
  const groups = [...new Set(set.docs.map((doc) => doc.group))];
  for (const project of groups.map(projectOf)) {
    expectStatus("POST /projects", await server.client.post("/projects", { name: project }, writers[0]), 201);
    for (const writer of writers.slice(1)) expectStatus("join", await server.client.request("POST", `/projects/${project}/join`, { as: writer }), 200);
  }
  const entryOf = new Map<string, string>();
  await inParallel(set.docs, writers.length, async (doc, worker) => {
    const reply = await politely(() => server.client.post("/memory", { content: doc.content, project: projectOf(doc.group) }, writers[worker]));
    if (reply.status !== 201 && reply.status !== 200) throw new Error(`POST /memory: ${reply.status} ${reply.body}`);
    const body = JSON.parse(reply.body) as { id: string };
    entryOf.set(doc.key, body.id);
  });
  const stored = new Map<string, { ids: string[]; texts: string[]; vectors: Float32Array[] }>();
  const unique = [...new Map(set.docs.map((doc) => [entryOf.get(doc.key) as string, doc.group])).entries()];
  await inParallel(unique, READERS, async ([id, group]) => {
    const reply = expectStatus("GET /memory/{id}", await server.client.get(`/memory/${id}?include_embedding=true`, writers[0]), 200);
    const entry = JSON.parse(reply.body) as { content: string; embedding: number[] };
    const slot = stored.get(group) ?? { ids: [], texts: [], vectors: [] };
    slot.ids.push(id);
    slot.texts.push(entry.content);
    slot.vectors.push(Float32Array.from(entry.embedding));
    stored.set(group, slot);
  });
  return { entryOf, groups: stored };
}

interface SetResult {
  set: string;
  docs: number;
  entries: number;
  queries: number;
  /** Ranker → query type (and "all") → mean scores. */
  scores: Record<Ranker, Record<string, Scores>>;
  searchMs: { p50: number; p95: number };
  /** Queries asked where nothing answers them. */
  unanswerable: number;
  /** Per floor: recall, and how often a search came back empty with and without an answer in the project. */
  floors: { floor: number; r1: number; r10: number; emptyAnswerable: number; emptyUnanswerable: number }[];
}

/** Queries whose answer is not in the project asked: the other set's, asked in this set's projects. */
function negativesFor(set: RetrievalSet, other: RetrievalSet, count: number | undefined): { q: string; group: string }[] {
  const groups = [...new Set(set.docs.map((doc) => doc.group))];
  const chosen = count === undefined ? other.queries : other.queries.filter((_, index) => index % Math.ceil(other.queries.length / count) === 0);
  return chosen.map((query, index) => ({ q: query.q, group: groups[index % groups.length] as string }));
}

async function measureSet(set: RetrievalSet, other: RetrievalSet, options: RetrievalOptions): Promise<SetResult> {
  const queries = options.queries === undefined ? set.queries : set.queries.filter((_, index) => index % Math.ceil(set.queries.length / options.queries!) === 0);
  return withServer(
    newDataDir(),
    16,
    async (server) => {
    await server.waitForHealth((health) => health.embeddings === "ready");
    const writers: Credentials[] = [];
    for (let index = 1; index <= WRITERS; index++) writers.push(await server.client.registerAgent(`bench-retrieval-${index}`));
    progress(`retrieval: ${set.name}: writing ${set.docs.length} entries through POST /memory`);
    const { entryOf, groups } = await storeSet(server, set, writers);

    progress(`retrieval: ${set.name}: ${queries.length} queries`);
    const embedder = await embedderLoaderFor({ EMBEDDING_MODEL: "use-lite", DATA_DIR: CACHE_DIR })();
    const queryVectors = await embedder.embed(queries.map((query) => query.q));
    await embedder.close();
    const bm25 = new Map([...groups].map(([group, slot]) => [group, new Bm25(slot.ids, slot.texts)]));

    // The server keeps every hit (SEARCH_MIN_SCORE=0); a floor only drops hits, never reorders
    // them, so each floor's results are these lists cut at it.
    const answers: { type: string; relevant: Set<string>; hits: { id: string; score: number }[]; bm25: Scores; vectors: Scores }[] = [];
    const latencies: number[] = [];
    await inParallel(
      queries.map((query, index) => ({ query, index })),
      READERS,
      async ({ query, index }, worker) => {
        const relevant = new Set(query.relevant.map((key) => entryOf.get(key) as string));
        const started = performance.now();
        const reply = await politely(() => server.client.get(`/memory/search?q=${encodeURIComponent(query.q)}&project=${projectOf(query.group)}&limit=10`, writers[worker % writers.length]));
        latencies.push(performance.now() - started);
        expectStatus("GET /memory/search", reply, 200);
        const slot = groups.get(query.group) ?? { ids: [], texts: [], vectors: [] };
        answers[index] = {
          type: query.type,
          relevant,
          hits: JSON.parse(reply.body) as { id: string; score: number }[],
          bm25: score(bm25.get(query.group)?.rank(query.q, 10) ?? [], relevant),
          vectors: score(nearest(slot.ids, slot.vectors, queryVectors[index] as Float32Array, 10), relevant),
        };
      },
    );
    const negatives = negativesFor(set, other, options.queries);
    const unanswerableBest: number[] = [];
    await inParallel(negatives, READERS, async (query, worker) => {
      const reply = expectStatus("GET /memory/search", await politely(() => server.client.get(`/memory/search?q=${encodeURIComponent(query.q)}&project=${projectOf(query.group)}&limit=10`, writers[worker % writers.length])), 200);
      unanswerableBest.push((JSON.parse(reply.body) as { score: number }[])[0]?.score ?? 0);
    });
    const cut = (floor: number) => answers.map((answer) => ({ ...answer, ids: answer.hits.filter((hit) => hit.score >= floor).map((hit) => hit.id) }));
    const atDefault = cut(DEFAULT_SEARCH_MIN_SCORE);
    const types = ["all", ...new Set(queries.map((query) => query.type))];
    const ofType = <T extends { type: string }>(all: T[], type: string): T[] => all.filter((one) => type === "all" || one.type === type);
    const scores: Record<Ranker, Record<string, Scores>> = { cairn: {}, bm25: {}, vectors: {} };
    for (const type of types) {
      scores.cairn[type] = mean(ofType(atDefault, type).map((answer) => score(answer.ids, answer.relevant)));
      scores.bm25[type] = mean(ofType(answers, type).map((answer) => answer.bm25));
      scores.vectors[type] = mean(ofType(answers, type).map((answer) => answer.vectors));
    }
    const floors = FLOORS.map((floor) => {
      const kept = cut(floor);
      const all = mean(kept.map((answer) => score(answer.ids, answer.relevant)));
      return {
        floor,
        r1: all.r1,
        r10: all.r10,
        emptyAnswerable: kept.filter((answer) => answer.ids.length === 0).length,
        emptyUnanswerable: unanswerableBest.filter((best) => best < floor || best === 0).length,
      };
    });
    const stats = latencyStats(latencies);
    return {
      set: set.name,
      docs: set.docs.length,
      entries: [...groups.values()].reduce((sum, slot) => sum + slot.ids.length, 0),
      queries: queries.length,
      scores,
      searchMs: { p50: round(stats.p50, 2), p95: round(stats.p95, 2) },
      unanswerable: negatives.length,
      floors,
    };
    },
    { SEARCH_MIN_SCORE: "0" },
  );
}

const percent = (value: number): string => `${round(value * 100)}`;

export async function runRetrievalBench(options: RetrievalOptions): Promise<Section> {
  const rows: Row[] = [];
  const targets: Target[] = [];
  const details: Record<string, unknown> = {};
  const sets = [loadLocomo(), loadCranfield()];
  for (const [index, set] of sets.entries()) {
    const other = sets[(index + 1) % sets.length] as RetrievalSet;
    const result = await measureSet(set, other, options);
    details[set.name] = result;
    for (const type of Object.keys(result.scores.cairn)) {
      const n = type === "all" ? result.queries : set.queries.filter((query) => query.type === type).length;
      for (const ranker of RANKERS) {
        const s = result.scores[ranker][type] as Scores;
        rows.push({
          scenario: `${set.name} ${type}: ${ranker}`,
          n,
          p50Ms: ranker === "cairn" && type === "all" ? result.searchMs.p50 : null,
          p95Ms: ranker === "cairn" && type === "all" ? result.searchMs.p95 : null,
          opsPerSec: null,
          cpuMsPerOp: null,
          rssMb: null,
          note: `R@1 ${percent(s.r1)} · R@5 ${percent(s.r5)} · R@10 ${percent(s.r10)} · MRR ${round(s.mrr, 3)} · nDCG@10 ${round(s.ndcg10, 3)}`,
        });
      }
    }
    const cairn = result.scores.cairn.all as Scores;
    const bm25 = result.scores.bm25.all as Scores;
    targets.push(
      { what: `${set.name}: Cairn's recall@1 over BM25's`, goal: "≥ 1", measured: `${round(cairn.r1 / bm25.r1, 2)}×`, met: cairn.r1 >= bm25.r1 },
      { what: `${set.name}: Cairn's recall@10 over BM25's`, goal: "≥ 1.1", measured: `${round(cairn.r10 / bm25.r10, 2)}×`, met: cairn.r10 >= 1.1 * bm25.r10 },
    );
    for (const floor of result.floors) {
      // "Nothing relevant" as a prediction: precision = the empty answers that were right; recall = the unanswerable queries answered empty.
      const empties = floor.emptyUnanswerable + floor.emptyAnswerable;
      rows.push({
        scenario: `${set.name}: floor ${floor.floor}${floor.floor === DEFAULT_SEARCH_MIN_SCORE ? " (default)" : ""}`,
        n: result.queries + result.unanswerable,
        p50Ms: null,
        p95Ms: null,
        opsPerSec: null,
        cpuMsPerOp: null,
        rssMb: null,
        note: `R@1 ${percent(floor.r1)} · R@10 ${percent(floor.r10)} · "nothing relevant": recall ${percent(floor.emptyUnanswerable / Math.max(1, result.unanswerable))} % (${floor.emptyUnanswerable}/${result.unanswerable} of ${other.name}'s queries), precision ${empties === 0 ? "n/a" : `${percent(floor.emptyUnanswerable / empties)} %`} (${floor.emptyAnswerable} answerable came back empty)`,
      });
    }
    progress(`retrieval: ${set.name}: Cairn/BM25 R@1 ${round(cairn.r1 / bm25.r1, 2)}×, R@10 ${round(cairn.r10 / bm25.r10, 2)}× (${result.entries} entries of ${result.docs} documents)`);
  }
  return {
    name: "retrieval",
    title: "Retrieval quality — LoCoMo and Cranfield through the API: Cairn's search, plain BM25 and the vectors alone over the same entries",
    rows,
    targets,
    details,
  };
}
