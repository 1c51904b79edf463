// Outbound calls (CONTRACT §11): every host spelling and URL case of the refusal table, fetched for
// real under the `feeds` policy against a canary listening on loopback, with the step that refused
// it and the connections the canary saw (it must see none). Public addresses are judged, never
// fetched: nothing here leaves the machine. Then the rules per kind under every policy. In process,
// a second or two.
import { defaultOutboundSettings, addressRules, judgeAddress, type OutboundPolicy, type OutboundSettings } from "../src/net/policy.js";
import { OutboundFailure, OutboundRefusal } from "../src/net/errors.js";
import { OutboundFetcher, systemResolver, type Resolver } from "../src/net/fetch.js";
import { parseHost } from "../src/net/host-literal.js";
import { addressKinds } from "../src/net/address-ranges.js";
import { HOST_CASES, INVALID_HOSTS } from "../test/fixtures/outbound-hosts.js";
import { startCanary, type Canary } from "../test/helpers/canary.js";
import type { Row, Section } from "./lib.js";

interface Outcome {
  verdict: string;
  step: string;
  reachedCanary: number;
}

/** Names for the resolver this bench plays: each points at loopback, the last one only in part. */
const NAMES: Record<string, string[]> = {
  "evil.test": ["127.0.0.1"],
  "v6.evil.test": ["::1"],
  "mapped.evil.test": ["::ffff:127.0.0.1"],
  "metadata.evil.test": ["169.254.169.254"],
  "mixed.evil.test": ["93.184.215.14", "127.0.0.1"],
  "origin.test": ["127.0.0.1"],
};

// `localhost` is the system's to answer (from /etc/hosts); every other name is the table's.
const resolver: Resolver = (hostname) => {
  if (hostname === "localhost") return systemResolver(hostname);
  const answers = NAMES[hostname.toLowerCase()];
  if (!answers) return Promise.reject(Object.assign(new Error("not found"), { code: "ENOTFOUND" }));
  return Promise.resolve(answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
};

async function attempt(canary: Canary, url: string, fetcher: OutboundFetcher): Promise<Outcome> {
  const before = canary.connections();
  try {
    const response = await fetcher.request(url, { policy: "feeds", maxBodyBytes: 64 * 1024, timeoutMs: 2000 });
    return { verdict: `allowed (HTTP ${response.status})`, step: "—", reachedCanary: canary.connections() - before };
  } catch (error) {
    const reached = canary.connections() - before;
    if (error instanceof OutboundRefusal) return { verdict: `refused${error.kind ? ` (${error.kind})` : ""}`, step: error.step === error.rule ? error.step : `${error.step} (${error.rule})`, reachedCanary: reached };
    if (error instanceof OutboundFailure) return { verdict: `failed: ${error.kind}`, step: "—", reachedCanary: reached };
    throw error;
  }
}

const COLUMNS: { name: string; policy: OutboundPolicy; settings: Partial<OutboundSettings>; allowlisted?: boolean }[] = [
  { name: "feeds", policy: "feeds", settings: {} },
  { name: "feeds+FEEDS_ALLOW_PRIVATE", policy: "feeds", settings: { feedsAllowPrivate: true } },
  { name: "mesh", policy: "mesh", settings: {} },
  { name: "mesh, MESH_ALLOW_PRIVATE=false", policy: "mesh", settings: { meshAllowPrivate: false } },
  { name: "operator", policy: "operator", settings: {} },
  { name: "any, in OUTBOUND_ALLOWLIST", policy: "feeds", settings: {}, allowlisted: true },
];

export async function runOutboundRefusalBench(): Promise<Section> {
  const canary = await startCanary();
  const origin = await startCanary((request, response) => {
    const target = decodeURIComponent((request.url ?? "/").slice("/to/".length));
    response.writeHead(302, { location: target }).end();
  });
  const rows: Row[] = [];
  const add = (scenario: string, outcome: Outcome, expectRefused = true): void => {
    rows.push({
      scenario,
      n: outcome.reachedCanary,
      p50Ms: null,
      p95Ms: null,
      opsPerSec: null,
      cpuMsPerOp: null,
      rssMb: null,
      note: `${outcome.verdict}${outcome.step === "—" ? "" : ` at ${outcome.step}`}${expectRefused && !outcome.verdict.startsWith("refused") ? "  ← NOT REFUSED" : ""}`,
    });
  };
  const plain = new OutboundFetcher({ settings: defaultOutboundSettings, resolve: resolver });
  const viaOrigin = new OutboundFetcher({ settings: { ...defaultOutboundSettings, allowlist: ["origin.test"] }, resolve: resolver });
  const port = canary.port;
  let refusedAsExpected = 0;
  let expectedRefusals = 0;
  try {
    for (const { host, kind, note } of HOST_CASES) {
      const label = `http://${host}:<canary>/${note ? `  (${note})` : ""}`;
      if (kind === "public") {
        // Judged only: a public address is somewhere else, and this bench stays on the machine.
        const parsed = parseHost(host);
        const allowed = parsed.type === "address" && judgeAddress(parsed.address, addressRules("feeds")).allowed;
        add(label, { verdict: allowed ? "allowed (public; judged, not fetched)" : "refused", step: "—", reachedCanary: 0 }, false);
        continue;
      }
      expectedRefusals++;
      const outcome = await attempt(canary, `http://${host}:${port}/`, plain);
      if (outcome.verdict.startsWith("refused") && outcome.reachedCanary === 0) refusedAsExpected++;
      add(label, outcome);
    }
    const urlCases: [string, string][] = [
      ...INVALID_HOSTS.map((host): [string, string] => [`http://${host}:<canary>/`, `http://${host}:${port}/`]),
      ["file:///etc/passwd", "file:///etc/passwd"],
      ["ftp://<canary>/", `ftp://127.0.0.1:${port}/`],
      ["gopher://<canary>/", `gopher://127.0.0.1:${port}/_`],
      ["data:text/plain,x", "data:text/plain,x"],
      ["javascript:alert(1)", "javascript:alert(1)"],
      ["http://user:pw@evil.test:<canary>/", `http://user:pw@evil.test:${port}/`],
      ["http://localhost:<canary>/  (system resolver)", `http://localhost:${port}/`],
      ...Object.keys(NAMES)
        .filter((name) => name !== "origin.test")
        .map((name): [string, string] => [`http://${name}:<canary>/  (resolves to ${NAMES[name]?.join(", ")})`, `http://${name}:${port}/`]),
    ];
    for (const [label, url] of urlCases) {
      expectedRefusals++;
      const outcome = await attempt(canary, url, plain);
      if (outcome.verdict.startsWith("refused") && outcome.reachedCanary === 0) refusedAsExpected++;
      add(label, outcome);
    }
    const redirects = [`http://127.0.0.1:${port}/`, `http://2130706433:${port}/`, `http://[::ffff:7f00:1]:${port}/`, `http://0.0.0.0:${port}/`, `http://evil.test:${port}/`, "file:///etc/passwd", `http://user:pw@origin.test:${port}/`];
    for (const target of redirects) {
      expectedRefusals++;
      const outcome = await attempt(canary, `http://origin.test:${origin.port}/to/${encodeURIComponent(target)}`, viaOrigin);
      if (outcome.verdict.startsWith("refused") && outcome.reachedCanary === 0) refusedAsExpected++;
      add(`origin.test (allowlisted) redirects to ${target.replace(String(port), "<canary>")}`, outcome);
    }
    const chain = (hops: number): string => {
      let url = `http://origin.test:${origin.port}/to/${encodeURIComponent("http://127.0.0.1/never")}`;
      for (let hop = 0; hop < hops; hop++) url = `http://origin.test:${origin.port}/to/${encodeURIComponent(url)}`;
      return url;
    };
    expectedRefusals++;
    const tooMany = await attempt(canary, chain(4), viaOrigin);
    if (tooMany.verdict.startsWith("refused") && tooMany.reachedCanary === 0) refusedAsExpected++;
    add("origin.test redirects 5 times in a row", tooMany);
    // The rules per kind, under each policy and setting.
    for (const kind of addressKinds) {
      const example = HOST_CASES.find((entry) => entry.kind === kind);
      const parsed = example ? parseHost(example.host) : null;
      if (!example || parsed?.type !== "address") continue;
      const cells = COLUMNS.map((column) => {
        const settings = { ...defaultOutboundSettings, ...column.settings, allowlist: column.allowlisted ? [parsed.address.toString()] : [] };
        return `${column.name} ${judgeAddress(parsed.address, addressRules(column.policy, settings)).allowed ? "✓" : "✗"}`;
      });
      rows.push({ scenario: `rules: ${kind.padEnd(13)} e.g. ${example.address}`, n: 0, p50Ms: null, p95Ms: null, opsPerSec: null, cpuMsPerOp: null, rssMb: null, note: cells.join(" · ") });
    }
  } finally {
    await canary.close();
    await origin.close();
  }
  return {
    name: "outbound-refusals",
    title: "Outbound refusals: every case of the table under feeds, refused at which step (n: connections the loopback canary saw)",
    rows,
    targets: [
      { what: "cases refused before any connection", goal: `${expectedRefusals}/${expectedRefusals}`, measured: `${refusedAsExpected}/${expectedRefusals}`, met: refusedAsExpected === expectedRefusals },
      { what: "connections the canary saw", goal: "0", measured: String(canary.connections()), met: canary.connections() === 0 },
    ],
    details: { cases: rows.length },
  };
}
