import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Bonjour from "bonjour-service";
import { cliEnv, startServe, type ServeProcess } from "./cli.js";
import { request, tempDir, type Credentials } from "./server.js";

// Run by test/integration/mesh-mdns.test.ts inside a network namespace of its own (`unshare -n`),
// never on the host's network: it makes a link there, starts real `cairn serve` processes on it,
// and prints what each one discovered as one line of JSON. Its multicast never leaves the namespace.

const SUBNET = "10.77.0";
const WAIT_MS = 30_000;

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** A new namespace holds `lo` alone: anything else means this is not one, and nothing is touched. */
function ensureFreshNamespace(): void {
  const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.split(":")[1]?.trim());
  if (links.length !== 1 || links[0] !== "lo") throw new Error(`not in a new network namespace (links: ${links.join(", ")}); refusing to change interfaces`);
}

/**
 * `cairn0` with three addresses, carrying multicast: one end of a veth pair (a dummy link would do,
 * but container kernels often lack the module). Every server joins the group on it, so each one's
 * looped-back copy of a packet reaches the others.
 */
function makeLink(): void {
  ip("link", "set", "lo", "up");
  ip("link", "add", "cairn0", "type", "veth", "peer", "name", "cairn1");
  for (const host of [1, 2, 3]) ip("addr", "add", `${SUBNET}.${host}/24`, "dev", "cairn0");
  ip("link", "set", "cairn1", "up");
  ip("link", "set", "cairn0", "up", "multicast", "on");
  ip("route", "add", "224.0.0.0/4", "dev", "cairn0");
}

interface Instance {
  serve: ServeProcess;
  id: string;
  url: string;
  owner: Credentials;
}

interface Discovered {
  instance_id: string;
  name: string;
  url: string;
  via: string;
  last_seen_at: string;
  linked: boolean;
}

async function start(name: string, host: string, mdns: "on" | "off" | null): Promise<Instance> {
  const dataDir = tempDir(`cairn-mdns-${name}-`);
  const env = cliEnv(dataDir, { HOST: host, INSTANCE_NAME: name, ...(mdns === null ? {} : { MESH_MDNS: mdns }) });
  const serve = await startServe(env);
  const health = await request<{ instance_id: string }>(serve.url, "/health");
  const credentials = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8")) as { agents: Record<string, { agent_id: string; api_key: string }> };
  const human = credentials.agents.human;
  if (!human) throw new Error(`no owner credentials in ${dataDir}`);
  return { serve, id: health.body.instance_id, url: serve.url, owner: { agentId: human.agent_id, apiKey: human.api_key } };
}

async function discoveredBy(instance: Instance): Promise<Discovered[]> {
  const response = await request<Discovered[]>(instance.url, "/mesh/discovered", { as: instance.owner });
  if (response.status !== 200) throw new Error(`GET /mesh/discovered: ${response.status} ${response.text}`);
  return response.body;
}

/** Polls until `instance` lists `other`; the list then, and how long it took. */
async function waitToSee(instance: Instance, other: Instance): Promise<{ list: Discovered[]; ms: number }> {
  const started = Date.now();
  for (;;) {
    const list = await discoveredBy(instance);
    if (list.some((peer) => peer.instance_id === other.id)) return { list, ms: Date.now() - started };
    if (Date.now() - started > WAIT_MS) throw new Error(`${instance.url} never discovered ${other.url}: ${JSON.stringify(list)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A peer that is no Cairn, advertised as one with a well-formed TXT record: what the servers must record. */
const IMPOSTOR = { id: "9e8d7c6b-5a49-4382-9716-a5b4c3d2e1f0", name: "mdns-impostor", url: `http://${SUBNET}.9:8080` };
/** Malformed TXT records the servers must ignore, by service name. */
const MALFORMED: Record<string, Record<string, string>> = {
  "bad-id": { id: "not-a-uuid", name: "bad-id", url: `http://${SUBNET}.9:8081` },
  "bad-url": { id: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", name: "bad-url", url: `http://user:secret@${SUBNET}.9:8082` },
  "bad-name": { id: "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", name: "Bad Name", url: `http://${SUBNET}.9:8083` },
};

/**
 * A Bonjour of our own on the link: it advertises the impostor and the malformed records, and
 * notes what answers a `_cairn._tcp` browse, and which services say goodbye.
 */
function listen(): { heard: Map<string, string>; gone: Set<string>; close(): Promise<void> } {
  const bonjour = new Bonjour({ interface: `${SUBNET}.3`, bind: "0.0.0.0" } as object);
  bonjour.publish({ name: IMPOSTOR.name, type: "cairn", port: 8080, txt: IMPOSTOR, probe: false });
  for (const [name, txt] of Object.entries(MALFORMED)) bonjour.publish({ name, type: "cairn", port: 8081, txt, probe: false });
  const heard = new Map<string, string>();
  const gone = new Set<string>();
  const browser = bonjour.find({ type: "cairn" });
  browser.on("up", (service) => heard.set(service.name, String((service.txt as Record<string, unknown> | undefined)?.id)));
  browser.on("down", (service) => gone.add(service.name));
  return { heard, gone, close: () => new Promise((resolve) => bonjour.destroy(resolve)) };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  ensureFreshNamespace();
  makeLink();
  const started: Instance[] = [];
  try {
    // The silent one first, so the others browse while it runs.
    const silent = await start("mdns-silent", `${SUBNET}.3`, null);
    started.push(silent);
    const [a, b] = await Promise.all([start("mdns-a", `${SUBNET}.1`, "on"), start("mdns-b", `${SUBNET}.2`, "on")]);
    started.push(a, b);
    const [aSaw, bSaw] = await Promise.all([waitToSee(a, b), waitToSee(b, a)]);
    const listener = listen();
    // Longer than the announcements take to arrive, and than the silent server has had to answer.
    await sleep(3_000);
    const later = { a: await discoveredBy(a), b: await discoveredBy(b), silent: await discoveredBy(silent) };
    const heard = Object.fromEntries(listener.heard);
    await b.serve.stop();
    await sleep(1_500);
    const goodbye = [...listener.gone];
    await listener.close();
    const stopped = await Promise.all([a.serve.stop(), silent.serve.stop()]);
    process.stdout.write(
      `${JSON.stringify({
        instances: { a: { id: a.id, url: a.url }, b: { id: b.id, url: b.url }, silent: { id: silent.id, url: silent.url } },
        first: { a: aSaw, b: bSaw },
        later,
        heard,
        impostor: IMPOSTOR,
        malformed: Object.values(MALFORMED).map((txt) => txt.id),
        goodbye,
        exits: stopped.map((run) => run.code),
      })}\n`,
    );
  } finally {
    await Promise.all(started.map((instance) => instance.serve.kill()));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
