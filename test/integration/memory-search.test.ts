import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { it, test } from "../helpers/fixtures.js";
import { createProject, write, type MemoryEntry, type SearchHit } from "../helpers/memory.js";
import { startTestServer, type Credentials, type ErrorBody, type TestServer } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";
import { eventually } from "../helpers/wait.js";

/** GET /memory/search, black box: hybrid ranking, filters before ranking, truncation, keyword-only mode (CONTRACT §3). */

/** How long to wait for the embedding model to load or fail, and for a backfill to finish. */
const SLOW_MS = 20_000;

/** Hits for `q` at the route's default limit unless `query` sets one; expects 200. */
async function search(server: TestServer, as: Credentials, q: string, query = ""): Promise<SearchHit[]> {
  const response = await server.request<SearchHit[]>(`/memory/search?q=${encodeURIComponent(q)}${query ? `&${query}` : ""}`, { as });
  expect(response.status).toBe(200);
  return response.body;
}

describe("hybrid search", () => {
  const it = test.extend("agent", ({ server }) => server.agent("searcher"));

  it("returns entries with score, similarity and match, best first, in hybrid mode", async ({ server, agent }) => {
    const exact = await write(server, agent, { content: "The ingress controller terminates TLS for every service" });
    await write(server, agent, { content: "Certificates for the ingress are renewed by a cron job" });
    await write(server, agent, { content: "Lunch is served at noon in the cafeteria" });
    const response = await server.request<SearchHit[]>(
      `/memory/search?q=${encodeURIComponent("The ingress controller terminates TLS for every service")}`,
      { as: agent },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-search-mode")).toBe("hybrid");
    const hits = response.body;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]).toMatchObject({ id: exact.id, content: exact.content, match: "both" });
    expect(hits[0]?.similarity).toBeGreaterThan(0.999);
    for (const hit of hits) {
      expect(typeof hit.score).toBe("number");
      expect(["semantic", "keyword", "both"]).toContain(hit.match);
      if (hit.match === "keyword") expect(hit.similarity).toBeNull();
      else expect(typeof hit.similarity).toBe("number");
      expect(hit).not.toHaveProperty("truncated");
      expect(hit).not.toHaveProperty("embedding");
    }
    const scores = hits.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("requires q and bounds limit to 1..100 (422 otherwise)", async ({ server, agent }) => {
    expect((await server.request<ErrorBody>("/memory/search", { as: agent })).status).toBe(422);
    expect((await server.request<ErrorBody>("/memory/search?q=%20%20", { as: agent })).status).toBe(422);
    expect((await server.request<ErrorBody>("/memory/search?q=x&limit=0", { as: agent })).status).toBe(422);
    expect((await server.request<ErrorBody>("/memory/search?q=x&limit=101", { as: agent })).status).toBe(422);
  });

  it("returns 10 results by default and honours limit", async ({ server, agent }) => {
    for (let index = 0; index < 14; index++) await write(server, agent, { content: `Walrus census record number ${index}` });
    expect(await search(server, agent, "walrus census")).toHaveLength(10);
    expect(await search(server, agent, "walrus census", "limit=3")).toHaveLength(3);
    const keywordHits = (await search(server, agent, "walrus census", "limit=100")).filter((hit) => hit.match !== "semantic");
    expect(keywordHits).toHaveLength(14);
  });

  it("includes directives by default and narrows to them with type=directive", async ({ server, agent }) => {
    const directive = await write(server, server.owner, { content: "Directive: every heron sighting must be logged", type: "directive" });
    const memory = await write(server, agent, { content: "A heron sighting was logged on Tuesday" });
    const all = (await search(server, agent, "heron sighting logged")).map((hit) => hit.id);
    expect(all).toEqual(expect.arrayContaining([directive.id, memory.id]));
    const onlyDirectives = await search(server, agent, "heron sighting logged", "type=directive");
    expect(onlyDirectives.map((hit) => hit.id)).toEqual([directive.id]);
  });

  it("truncates content to max_content_length code points without an ellipsis and marks it truncated", async ({ server, agent }) => {
    const long = await write(server, agent, { content: "🦩🦩🦩 flamingo émigré pattern with accents" });
    const short = await write(server, agent, { content: "🦩 flamingo" });
    const hits = await search(server, agent, "flamingo", "max_content_length=12");
    const truncated = hits.find((hit) => hit.id === long.id);
    // 12 code points (a UTF-16 slice would stop at "🦩🦩🦩 flami").
    expect(truncated?.content).toBe("🦩🦩🦩 flamingo");
    expect(truncated?.truncated).toBe(true);
    const untouched = hits.find((hit) => hit.id === short.id);
    expect(untouched?.content).toBe("🦩 flamingo");
    expect(untouched).not.toHaveProperty("truncated");
    expect((await server.request<MemoryEntry>(`/memory/${long.id}`, { as: agent })).body.content).toBe(long.content);
  });

  it("keeps only hits within max_distance, dropping keyword-only hits", async ({ server, agent }) => {
    await write(server, agent, { content: "Okapi enclosure cleaning schedule" });
    await write(server, agent, { content: "okapi" });
    const hits = await search(server, agent, "Okapi enclosure cleaning schedule", "max_distance=0.3");
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) {
      expect(hit.match).not.toBe("keyword");
      expect(hit.similarity).toBeGreaterThanOrEqual(0.7 - 1e-6);
    }
  });

  it("re-ranks for diversity with diversify=true", async ({ server, agent }) => {
    for (let index = 0; index < 3; index++) await write(server, agent, { content: "The pangolin release checklist requires a signed tag" });
    const distinct = await write(server, agent, { content: "Pangolin release notes are kept in the changelog file" });
    const plain = await search(server, agent, "pangolin release checklist signed tag", "limit=2");
    expect(new Set(plain.map((hit) => hit.content)).size).toBe(1);
    const diverse = await search(server, agent, "pangolin release checklist signed tag", "limit=2&diversify=true");
    expect(diverse).toHaveLength(2);
    expect(diverse.map((hit) => hit.id)).toContain(distinct.id);
    expect(diverse[0]?.content).toBe("The pangolin release checklist requires a signed tag");
  });

  it("adds embeddings to hits only with include_embedding=true", async ({ server, agent }) => {
    await write(server, agent, { content: "Axolotl tank temperature is 18 degrees" });
    const hits = await search(server, agent, "axolotl tank", "include_embedding=true&limit=1");
    expect(hits[0]?.embedding?.length).toBeGreaterThan(0);
  });
});

describe("search filters apply before ranking", () => {
  const server = serverForSuite();
  const loud = agentForSuite(server, "loud");
  const quiet = agentForSuite(server, "quiet");
  const query = "Kubernetes cluster upgrade procedure";
  beforeAll(async () => {
    await createProject(server, server.owner, "p1");
    // Sixty entries that match the query better than any target, so a filter applied after
    // ranking a bounded candidate pool would find few or none of the targets.
    for (let index = 0; index < 60; index++) {
      await write(server, loud, { content: `Kubernetes cluster upgrade procedure step ${index}`, tags: ["noise"], confidence: 0.3 });
    }
    for (let index = 0; index < 6; index++) {
      await write(server, loud, { content: `Kubernetes doc page ${index} about networking`, type: "doc", tags: ["noise"], confidence: 0.3 });
      await write(server, loud, { content: `Kubernetes tagged note ${index} about storage`, tags: ["special"], confidence: 0.3 });
      await write(server, quiet, { content: `Kubernetes note ${index} from the quiet agent about logging`, confidence: 0.3 });
      await write(server, server.owner, { content: `Kubernetes project note ${index} about ingress`, project: "p1", confidence: 0.3 });
      await write(server, loud, { content: `Kubernetes confident note ${index} about scheduling`, confidence: 0.9 });
    }
  });

  it("ranks the better matches first without a filter", async () => {
    const hits = await search(server, server.owner, query, "limit=20");
    expect(hits.every((hit) => hit.content.startsWith("Kubernetes cluster upgrade procedure step"))).toBe(true);
  });

  it("returns limit hits of the requested type", async () => {
    const hits = await search(server, server.owner, query, "type=doc&limit=5");
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.type === "doc")).toBe(true);
    // Found by both halves: the vector scan applies the filter too, not only the keyword query.
    expect(hits.every((hit) => hit.match === "both")).toBe(true);
  });

  it("returns limit hits carrying the requested tag", async () => {
    const hits = await search(server, server.owner, query, "tag=special&limit=5");
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.tags.includes("special"))).toBe(true);
    expect(hits.every((hit) => hit.match === "both")).toBe(true);
  });

  it("returns limit hits by the requested author", async () => {
    const hits = await search(server, server.owner, query, "agent=quiet&limit=5");
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.agent_id === "quiet")).toBe(true);
    expect(hits.every((hit) => hit.match === "both")).toBe(true);
  });

  it("returns limit hits of the requested project, and only global ones for an empty project", async () => {
    const inProject = await search(server, server.owner, query, "project=p1&limit=5");
    expect(inProject).toHaveLength(5);
    expect(inProject.every((hit) => hit.project === "p1")).toBe(true);
    expect(inProject.every((hit) => hit.match === "both")).toBe(true);
    const global = await search(server, server.owner, "Kubernetes project note about ingress", "project=&limit=50");
    expect(global.length).toBeGreaterThan(0);
    expect(global.every((hit) => hit.project === null)).toBe(true);
  });

  it("returns limit hits at or above confidence_min", async () => {
    const hits = await search(server, server.owner, query, "confidence_min=0.8&limit=5");
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.confidence >= 0.8)).toBe(true);
    expect(hits.every((hit) => hit.match === "both")).toBe(true);
  });

  it("never returns a project's entries to an agent that is not a member", async () => {
    const hits = await search(server, quiet, "Kubernetes project note about ingress", "limit=100");
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.project === null)).toBe(true);
  });
});

describe("search by meaning (use-lite model)", () => {
  const it = test.extend("agent", ({ server }) => server.agent("semantic-searcher"));
  it.override("serverEnv", { EMBEDDING_MODEL: "use-lite" });

  it("finds a paraphrase that shares no keyword with the query, as a semantic match", async ({ server, agent }) => {
    const football = await write(server, agent, { content: "The football match ended in a draw" });
    await write(server, agent, { content: "Bake the bread at 220 degrees for forty minutes" });
    await write(server, agent, { content: "The quarterly invoice is due on the fifth" });
    const hits = await search(server, agent, "soccer game finished tied", "limit=3");
    expect(hits[0]).toMatchObject({ id: football.id, match: "semantic" });
    expect(hits[0]?.similarity).toBeGreaterThan(0.6);
  });
});

describe("search without an embedding model", () => {
  let server: TestServer;
  let agent: Credentials;
  let modelDir: string;
  beforeAll(async () => {
    modelDir = mkdtempSync(join(tmpdir(), "cairn-no-model-"));
    server = await startTestServer({ EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: modelDir });
    agent = await server.agent("keyword-searcher");
  });
  afterAll(async () => {
    await server.close();
    rmSync(modelDir, { recursive: true, force: true });
  });

  it("reports embeddings unavailable in /health", async () => {
    const unavailable = await eventually(
      async () => (await server.request<{ embeddings: string }>("/health")).body.embeddings === "unavailable",
      SLOW_MS,
    );
    expect(unavailable).toBe(true);
  });

  it("still accepts writes with 201, unembedded", async () => {
    const entry = await write(server, agent, { content: "Keyword mode stores the capybara note" });
    expect(entry.embedding_model).toBeNull();
  });

  // Without vectors only the exact rule can apply, so this pins it: trimmed, white space
  // collapsed, case-folded (with hash vectors such variants are also near-identical by cosine).
  it("still detects a duplicate that differs only in case and white space", async () => {
    const first = await write(server, agent, { content: "Keyword mode duplicate about tapirs" });
    const again = await server.request<MemoryEntry & { duplicate_of?: string }>("/memory", {
      as: agent,
      body: { content: "  keyword MODE   duplicate about\ttapirs " },
    });
    expect(again.status).toBe(200);
    expect(again.body.duplicate_of).toBe(first.id);
  });

  it("answers keyword-only hits with X-Search-Mode: keyword, similarity null and match keyword", async () => {
    const entry = await write(server, agent, { content: "The capybara enclosure needs a deeper pond" });
    await write(server, agent, { content: "Unrelated text about spreadsheets" });
    const response = await server.request<SearchHit[]>("/memory/search?q=capybara%20pond", { as: agent });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-search-mode")).toBe("keyword");
    expect(response.body.map((hit) => hit.id)).toContain(entry.id);
    expect(response.body.map((hit) => hit.content)).not.toContain("Unrelated text about spreadsheets");
    for (const hit of response.body) {
      expect(hit.similarity).toBeNull();
      expect(hit.match).toBe("keyword");
    }
  });
});

describe("keywords in paths, hosts and versions", () => {
  const it = test.extend("agent", ({ server }) => server.agent("path-searcher"));
  // No model: only the keyword half can find it.
  it.override("serverEnv", { EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: join(tmpdir(), "cairn-no-model-here") });

  // PostgreSQL's parser keeps `src/build.ts` or `api.example.com` whole; queries are split into
  // words on both backends, so the index must split them the same way.
  it("finds an entry by a file path, a host or a dotted name in its text", async ({ server, agent }) => {
    const entry = await write(server, agent, { content: "The cache bug lives in src/services/build.ts, served from api.example.com by worker.run()" });
    for (const q of ["src/services/build.ts", "build.ts", "api.example.com", "worker.run"]) {
      const hits = await server.request<SearchHit[]>(`/memory/search?q=${encodeURIComponent(q)}`, { as: agent });
      expect(hits.body.map((hit) => hit.id), q).toContain(entry.id);
    }
  });
});

describe("entries written while the model is unavailable", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "cairn-backfill-"));
  const modelDir = mkdtempSync(join(tmpdir(), "cairn-no-model-"));
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(modelDir, { recursive: true, force: true });
  });

  it("are embedded once a model is available and then found by meaning", async () => {
    const before = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "custom", EMBEDDING_MODEL_DIR: modelDir });
    const agent = await before.agent("backfill-writer");
    const written: MemoryEntry[] = [];
    try {
      for (const content of ["Backfill: the gecko terrarium humidity is 70 percent", "Backfill: gecko feeding happens on Mondays"]) {
        written.push(await write(before, agent, { content }));
      }
      expect(written.every((entry) => entry.embedding_model === null)).toBe(true);
    } finally {
      await before.close();
    }

    const after = await startTestServer({ DATA_DIR: dataDir, EMBEDDING_MODEL: "hash" });
    try {
      const embedded = await eventually(async () => {
        const entries = await Promise.all(written.map((entry) => after.request<MemoryEntry>(`/memory/${entry.id}`, { as: agent })));
        return entries.every((entry) => entry.status === 200 && entry.body.embedding_model !== null);
      }, SLOW_MS);
      expect(embedded).toBe(true);
      const hits = await search(after, agent, "Backfill: the gecko terrarium humidity is 70 percent", "max_distance=0.2");
      const hit = hits.find((candidate) => candidate.id === written[0]?.id);
      expect(hit).toBeDefined();
      expect(["semantic", "both"]).toContain(hit?.match);
      expect(hit?.similarity).toBeGreaterThan(0.99);
      expect((await after.request<{ embeddings: string }>("/health")).body.embeddings).toBe("ready");
    } finally {
      await after.close();
    }
  });
});
