// Ranking quality on the search-quality test's corpus (test/fixtures/search-corpus.ts), on
// whichever backend the run uses: hybrid search with the bundled model, and keyword search alone
// (a server whose model cannot load), where SQLite ranks with FTS5's BM25 and PostgreSQL with
// ts_rank_cd. Each query paraphrases one note; we report how often it comes first, its reciprocal
// rank, and whether it is in the top 10.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { corpus, queries } from "../test/fixtures/search-corpus.js";
import { expectStatus, newDataDir, progress, round, withServer, type Row, type Section } from "./lib.js";

interface Quality {
  top1: number;
  mrr: number;
  recall10: number;
  misses: string[];
}

async function measure(env: Record<string, string>): Promise<{ mode: string; quality: Quality }> {
  const dataDir = newDataDir();
  return withServer(
    dataDir,
    4,
    async (server) => {
      await server.waitForHealth((health) => health.embeddings !== "loading");
      const writer = await server.client.registerAgent("ranking-writer");
      for (const content of corpus) expectStatus("write", await server.client.post("/memory", { content, allow_duplicate: true }, writer), 201);
      let top1 = 0;
      let reciprocal = 0;
      let inTop10 = 0;
      let mode = "";
      const misses: string[] = [];
      for (const { q, expected } of queries) {
        const reply = expectStatus("search", await server.client.get(`/memory/search?q=${encodeURIComponent(q)}&limit=10`, writer), 200);
        mode = String(reply.headers["x-search-mode"]);
        const hits = JSON.parse(reply.body) as { content: string }[];
        const rank = hits.findIndex((hit) => hit.content === corpus[expected]) + 1;
        if (rank === 1) top1++;
        else misses.push(`${q} → ${rank === 0 ? "not in the top 10" : `rank ${rank}`}`);
        if (rank > 0) {
          reciprocal += 1 / rank;
          inTop10++;
        }
      }
      const n = queries.length;
      return { mode, quality: { top1: top1 / n, mrr: reciprocal / n, recall10: inTop10 / n, misses } };
    },
    env,
  );
}

export async function runRankingBench(): Promise<Section> {
  // An empty folder as a custom model: the model never loads, so search is keyword-only.
  const noModel = join(newDataDir(), "no-model");
  mkdirSync(noModel);
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const [scenario, env] of [
    ["hybrid (use-lite)", { EMBEDDING_MODEL: "use-lite" }],
    ["keyword only", { EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: noModel }],
  ] as const) {
    progress(`ranking: ${scenario}`);
    const { mode, quality } = await measure(env);
    rows.push({
      scenario: `${scenario}, ${queries.length} queries`,
      n: queries.length,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note: `mode ${mode}; top-1 ${round(quality.top1 * 100)} %, MRR@10 ${round(quality.mrr, 3)}, recall@10 ${round(quality.recall10 * 100)} %`,
    });
    details[scenario] = { mode, ...quality };
  }
  return { name: "ranking", title: `Ranking quality — the search-quality test's ${corpus.length} notes and ${queries.length} paraphrased queries`, rows, targets: [], details };
}
