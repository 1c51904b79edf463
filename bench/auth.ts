// Credential checks under attack (CONTRACT §2.2a): whether a wrong key for an existing agent takes
// measurably longer than any key for an unknown one, how many keys a guesser gets checked, and
// whether junk client ids can grow the server's memory.
import { randomBytes } from "node:crypto";
import { judge, latencyStats, newDataDir, progress, round, runClients, withServer, type Credentials, type Row, type Section } from "./lib.js";

export interface AuthOptions {
  /** Agents whose ids the timing run guesses wrong keys for. */
  agents: number;
  /** Timed pairs: one wrong key for an existing agent, one key for an unknown agent. */
  pairs: number;
  /** Distinct junk client ids sent to /oauth/token. */
  junkIds: number;
  /** Requests whose client id is 1 MB of junk (the review's heap-exhaustion case). */
  hugeIds: number;
}

const wrongKey = (): string => `cairn_${randomBytes(32).toString("base64url")}`;
const median = (values: number[]): number => latencyStats(values).p50;

/** The middle 90 % of the values: robust to the scheduler's occasional long pause. */
function trimmed(values: number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length * 0.05);
  return sorted.slice(cut, sorted.length - cut);
}

/** A row of request times measured in microseconds. */
const timingRow = (scenario: string, samplesUs: number[]): Row => ({
  scenario,
  n: samplesUs.length,
  p50Ms: round(median(samplesUs) / 1000, 3),
  p95Ms: round(latencyStats(samplesUs).p95 / 1000, 3),
  opsPerSec: null,
  cpuMsPerOp: null,
  rssMb: null,
});

export async function runAuthBench(options: AuthOptions): Promise<Section> {
  return withServer(
    newDataDir(),
    16,
    async (server) => {
      await server.waitForHealth();
      progress(`auth: registering ${options.agents} agents`);
      const agents: Credentials[] = [];
      // Real ids are the even numbers, unknown ones the odd numbers between them: the same length, spread alike.
      for (let index = 0; index < options.agents; index++) agents.push(await server.client.registerAgent(`bench-auth-${100_000 + 2 * index}`));

      // Each agent id, and each unknown id, is tried pairs/agents times: below the throttle, so every
      // key is checked, and both kinds carry the same failure history in it.
      progress(`auth: ${options.pairs.toLocaleString("en")} interleaved pairs of wrong-key and unknown-agent requests`);
      const existing: number[] = [];
      const unknown: number[] = [];
      const timed = async (as: Credentials, into: number[]): Promise<void> => {
        const started = process.hrtime.bigint();
        const reply = await server.client.get("/agents/me", as);
        into.push(Number(process.hrtime.bigint() - started) / 1000);
        if (reply.status !== 401) throw new Error(`expected 401, got ${reply.status} ${reply.body}`);
      };
      for (let index = 0; index < options.pairs; index++) {
        const known = { agentId: (agents[index % agents.length] as Credentials).agentId, apiKey: wrongKey() };
        // Ids of the same length as the real ones: the server's work may depend on length, which a guesser chooses anyway.
        const ghost = { agentId: `bench-auth-${100_001 + 2 * (index % agents.length)}`, apiKey: wrongKey() };
        // Alternate the order so neither kind always runs on a warmer cache.
        if (index % 2 === 0) {
          await timed(known, existing);
          await timed(ghost, unknown);
        } else {
          await timed(ghost, unknown);
          await timed(known, existing);
        }
      }
      const medianGap = median(existing) - median(unknown);
      // Pairs ran back to back, so their differences cancel the machine's drift.
      const differences = trimmed(existing.map((value, index) => value - (unknown[index] as number)));
      const meanGap = differences.reduce((sum, value) => sum + value, 0) / differences.length;
      const spread = Math.sqrt(differences.reduce((sum, value) => sum + (value - meanGap) ** 2, 0) / (differences.length - 1));
      const margin = (1.96 * spread) / Math.sqrt(differences.length);

      progress("auth: 200 guesses at one agent's key from one address");
      const target = await server.client.registerAgent("bench-auth-target");
      const statuses: Record<string, number> = {};
      const guessStarted = performance.now();
      for (let index = 0; index < 200; index++) {
        const reply = await server.client.get("/agents/me", { agentId: target.agentId, apiKey: wrongKey() });
        statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      }
      const guessMs = performance.now() - guessStarted;

      progress(`auth: ${options.junkIds.toLocaleString("en")} junk client ids and ${options.hugeIds} of 1 MB at /oauth/token`);
      const before = server.memory();
      const junk = await runClients(server, 16, options.junkIds, async (index) => {
        const reply = await server.client.post("/oauth/token", { grant_type: "client_credentials", client_id: `junk-${index}-${randomBytes(4).toString("hex")}`, client_secret: "x" });
        if (reply.status !== 401) throw new Error(`junk id: expected 401, got ${reply.status}`);
      });
      const megabyte = "j".repeat(1024 * 1024 - 200);
      await runClients(server, 4, options.hugeIds, async (index) => {
        const reply = await server.client.post("/oauth/token", { grant_type: "client_credentials", client_id: `${megabyte}${index}`, client_secret: "x" });
        if (reply.status !== 401 && reply.status !== 413) throw new Error(`huge id: got ${reply.status}`);
      });
      const after = server.memory();
      const growth = after.rssMb - before.rssMb;

      return {
        name: "auth",
        title: "Credential checks under attack",
        rows: [
          timingRow("wrong key, existing agent (401)", existing),
          timingRow("any key, unknown agent (401)", unknown),
          {
            scenario: "200 guesses at one agent id, one address",
            n: 200,
            p50Ms: null,
            p95Ms: null,
            opsPerSec: round((200 * 1000) / guessMs, 1),
            cpuMsPerOp: null,
            rssMb: null,
            note: Object.entries(statuses).map(([status, count]) => `${count}×${status}`).join(", "),
          },
          {
            scenario: `${options.junkIds.toLocaleString("en")} junk client ids + ${options.hugeIds} × 1 MB ids`,
            n: options.junkIds + options.hugeIds,
            p50Ms: round(latencyStats(junk.latencies).p50, 2),
            p95Ms: round(latencyStats(junk.latencies).p95, 2),
            opsPerSec: round((options.junkIds * 1000) / junk.wallMs, 1),
            cpuMsPerOp: null,
            rssMb: after.rssMb,
            note: `RSS ${before.rssMb} → ${after.rssMb} MB, peak ${after.peakRssMb} MB`,
          },
        ],
        targets: [
          {
            what: "time of a wrong key for an existing agent minus a key for an unknown one (mean of paired differences, 95 % interval)",
            goal: "no gap: the interval holds 0, or the gap is under 1 µs (the review measured ~8 µs)",
            measured: `${round(meanGap, 2)} ± ${round(margin, 2)} µs (medians differ by ${round(medianGap, 2)} µs)`,
            met: judge(meanGap, (gap) => Math.abs(gap) <= margin || Math.abs(gap) < 1),
          },
          {
            what: "keys checked for one agent id from one address in a minute",
            goal: "≤ 20 (the review: ~1,900 a second)",
            measured: `${statuses["401"] ?? 0} checked, ${statuses["429"] ?? 0} refused unchecked`,
            met: judge(statuses["401"] ?? 0, (checked) => checked <= 20),
          },
          {
            what: "RSS growth over the junk client ids",
            goal: "≤ 100 MB (the review: 111 MB → 4 GB heap limit)",
            measured: `${round(growth)} MB`,
            met: judge(growth, (grown) => grown <= 100),
          },
        ],
        details: { guess_statuses: statuses, paired_gap_us: round(meanGap, 3), paired_gap_margin_us: round(margin, 3), median_gap_us: round(medianGap, 3) },
      };
    },
    // The rate limit on, as shipped: its table is one of those junk ids used to grow.
    { EMBEDDING_MODEL: "hash", RATE_LIMIT_PER_MINUTE: "600" },
  );
}
