import { beforeAll, describe, expect, it } from "vitest";
import { SEARCH_FLOORS } from "../../src/embed/models.js";
import { offTopicQueries, paraphrases } from "../fixtures/paraphrases.js";
import { corpus, queries } from "../fixtures/search-corpus.js";
import { write, type SearchHit } from "../helpers/memory.js";
import type { Credentials, TestServer } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";

/** The search floor (CONTRACT §10a): a hit that matches no keyword must be close enough to the query. */

async function search(server: TestServer, as: Credentials, q: string, query = ""): Promise<SearchHit[]> {
  const response = await server.request<SearchHit[]>(`/memory/search?q=${encodeURIComponent(q)}${query ? `&${query}` : ""}`, { as });
  expect(response.status).toBe(200);
  expect(response.headers.get("x-search-mode")).toBe("hybrid");
  return response.body;
}

/** The fixtures' notes: the search corpus and one side of every paraphrase pair. */
function writeNotesBeforeAll(server: TestServer, agent: Credentials): void {
  beforeAll(async () => {
    for (const content of [...corpus, ...paraphrases.map((pair) => pair.a)]) await write(server, agent, { content });
  });
}

describe("the search floor with the bundled model (use-lite)", () => {
  const server = serverForSuite({ EMBEDDING_MODEL: "use-lite" });
  const agent = agentForSuite(server, "floor-reader");
  const floor = SEARCH_FLOORS["use-lite"];
  writeNotesBeforeAll(server, agent);

  it("returns [] for queries about something no entry mentions", async () => {
    for (const q of offTopicQueries) expect(await search(server, agent, q), q).toEqual([]);
  });

  it("returns only hits that match a keyword or reach the floor", async () => {
    for (const { q } of queries) {
      for (const hit of await search(server, agent, q)) {
        if (hit.match === "semantic") expect(hit.similarity, `${q} -> ${hit.content}`).toBeGreaterThanOrEqual(floor);
      }
    }
  });

  it("still finds a paraphrase that shares no keyword with the query", async () => {
    const [first] = await search(server, agent, "soccer game finished tied");
    expect(first).toMatchObject({ content: corpus[0], match: "semantic" });
    expect(first?.similarity).toBeGreaterThanOrEqual(floor);
  });

  it("keeps a keyword match whose similarity is below the floor", async () => {
    const entry = await write(server, agent, { content: "The marmot table layout alternates row colours in the admin list." });
    const hit = (await search(server, agent, "marmot")).find((candidate) => candidate.id === entry.id);
    expect(hit?.match).toBe("both");
    expect(hit?.similarity).toBeLessThan(floor);
  });
});

describe("an explicit SEARCH_MIN_SIMILARITY with the bundled model", () => {
  const open = serverForSuite({ EMBEDDING_MODEL: "use-lite", SEARCH_MIN_SIMILARITY: "0", SEARCH_MIN_SCORE: "0" });
  const openReader = agentForSuite(open, "open-reader");
  writeNotesBeforeAll(open, openReader);
  const strict = serverForSuite({ EMBEDDING_MODEL: "use-lite", SEARCH_MIN_SIMILARITY: "0.95" });
  const strictReader = agentForSuite(strict, "strict-reader");
  writeNotesBeforeAll(strict, strictReader);

  it("replaces the model's default: at 0, with no score floor, an off-topic query gets its nearest neighbours back", async () => {
    const hits = await search(open, openReader, "zebras grazing on the savanna", "limit=5");
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.match === "semantic")).toBe(true);
  });

  it("replaces the model's default: at 0.95 a paraphrase without a shared keyword is dropped, a keyword match is not", async () => {
    expect(await search(strict, strictReader, "soccer game finished tied")).toEqual([]);
    const hits = await search(strict, strictReader, "football draw");
    expect(hits.map((hit) => hit.content)).toContain(corpus[0]);
    expect(hits.every((hit) => hit.match !== "semantic")).toBe(true);
  });
});

describe("the search floor with the hash embedder", () => {
  const server = serverForSuite({ EMBEDDING_MODEL: "hash" });
  const agent = agentForSuite(server, "hash-floor-reader");
  writeNotesBeforeAll(server, agent);

  it("returns [] for queries about something no entry mentions", async () => {
    for (const q of offTopicQueries) expect(await search(server, agent, q), q).toEqual([]);
  });

  it("returns only hits that match a keyword or reach the floor, keyword matches below it included", async () => {
    let belowFloor = 0;
    for (const { q } of queries) {
      for (const hit of await search(server, agent, q)) {
        if (hit.match === "semantic") expect(hit.similarity, `${q} -> ${hit.content}`).toBeGreaterThanOrEqual(SEARCH_FLOORS.hash);
        else if ((hit.similarity ?? 0) < SEARCH_FLOORS.hash) belowFloor++;
      }
    }
    expect(belowFloor).toBeGreaterThan(0);
  });
});
