import { beforeAll, describe, expect, it } from "vitest";
import { write, type SearchHit } from "../helpers/memory.js";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";
import { agentForSuite, serverForSuite } from "../helpers/suite.js";

// Ranking on hand-built cases, on whichever backend the run uses: each query has one note that
// answers it among notes that share words or topics with it.
const NOTES = [
  "The football match ended in a draw after extra time.",
  "Deploys to production go through the release pipeline on Fridays only.",
  "The nightly export crashes when the disk of the worker fills up.",
  "Call parseConfigFile from src/config/loader.ts before the server starts.",
  "The pangolin feature flag turns the new checkout on for one percent of users.",
  "Rate limiting allows six hundred requests per minute per client.",
  "The API returns a 404 error for resources the caller cannot see.",
  "Our database backups run every night at 2am and are kept for thirty days.",
  "The login page times out when the session cookie is missing.",
  "Release notes are written by the engineer who merges the change.",
  "Export jobs write their files to the shared bucket under exports/.",
  "The worker restarts itself when its memory passes two gigabytes.",
];

async function search(server: TestServer, as: Credentials, q: string): Promise<SearchHit[]> {
  const response = await server.request<SearchHit[]>(`/memory/search?q=${encodeURIComponent(q)}&limit=5`, { as });
  expect(response.status).toBe(200);
  return response.body;
}

const writeNotes = async (server: TestServer, agent: Credentials): Promise<void> => {
  for (const content of NOTES) await write(server, agent, { content });
};

describe("search ranks hand-built cases", () => {
  const server = serverForSuite({ EMBEDDING_MODEL: "use-lite" });
  const agent = agentForSuite(server, "ranking-reader");
  beforeAll(() => writeNotes(server, agent));
  const first = async (q: string): Promise<string | undefined> => (await search(server, agent, q))[0]?.content;

  it("puts the note holding a rare exact word first", async () => {
    expect(await first("pangolin")).toBe(NOTES[4]);
  });

  it("finds a paraphrase that shares no word with its note", async () => {
    const [hit] = await search(server, agent, "soccer game finished tied");
    expect(hit).toMatchObject({ content: NOTES[0], match: "semantic" });
  });

  it("finds an identifier and a file path as written", async () => {
    expect(await first("parseConfigFile")).toBe(NOTES[3]);
    expect(await first("loader.ts")).toBe(NOTES[3]);
  });

  it("matches another form of the same word (stemming)", async () => {
    // "crashed" is not written anywhere; "crashes" is.
    const hits = await search(server, agent, "export crashed");
    expect(hits[0]?.content).toBe(NOTES[2]);
    expect(hits[0]?.match).toBe("both");
  });

  it("prefers the note that answers more of the query to one sharing a single word", async () => {
    const hits = await search(server, agent, "when are release notes written");
    expect(hits[0]?.content).toBe(NOTES[9]);
    const deploys = hits.findIndex((hit) => hit.content === NOTES[1]);
    expect(deploys === -1 || deploys > 0).toBe(true);
  });

  it("returns nothing for a query about something no note mentions", async () => {
    expect(await search(server, agent, "recipe for lemon meringue pie")).toEqual([]);
    expect(await search(server, agent, "humpback whale songs")).toEqual([]);
  });

  it("scores on 0..1, best first", async () => {
    const hits = await search(server, agent, "worker memory restarts");
    expect(hits.length).toBeGreaterThan(0);
    for (const [index, hit] of hits.entries()) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
      if (index > 0) expect(hit.score).toBeLessThanOrEqual(hits[index - 1]?.score ?? 1);
    }
  });
});

describe("the score floor (SEARCH_MIN_SCORE) at its edges", () => {
  const QUERY = "export files bucket";
  const open = serverForSuite({ EMBEDDING_MODEL: "use-lite", SEARCH_MIN_SCORE: "0" });
  const openReader = agentForSuite(open, "open-reader");
  beforeAll(() => writeNotes(open, openReader));

  it("keeps a hit whose score is the floor, and drops it just above", async () => {
    const unfloored = await search(open, openReader, QUERY);
    expect(unfloored.length).toBeGreaterThan(1);
    const weakest = unfloored.at(-1) as SearchHit;
    // Scores are reported to six decimals; a millionth either side of the reported score is on
    // that side of the real one.
    for (const [floor, kept] of [
      [weakest.score - 0.000001, true],
      [weakest.score + 0.000001, false],
    ] as const) {
      const floored = await startTestServer({ EMBEDDING_MODEL: "use-lite", SEARCH_MIN_SCORE: String(floor) });
      try {
        const reader = await floored.agent("edge-reader");
        await writeNotes(floored, reader);
        const hits = await search(floored, reader, QUERY);
        expect(hits.some((hit) => hit.content === weakest.content), `floor ${floor}`).toBe(kept);
        expect(hits.every((hit) => hit.score >= floor)).toBe(true);
      } finally {
        await floored.close();
      }
    }
  });
});
