// Redaction (issue 25): how much of the secret table it removes, how much prose it leaves alone,
// and its CPU per input on realistic and hostile text, in this process (redaction runs inside the
// request that stores a capture or a fact). Each input is timed after a warm-up, best of three,
// with the engine's own work count beside it (the unit test holds that count linear).
import { newMeter, redactSecrets, warmRedaction } from "../src/services/redaction.js";
import { SECRET_LINES, UNTOUCHED_LINES } from "../test/fixtures/secrets.js";
import { progress, round, type Row, type Section } from "./lib.js";

export interface RedactionOptions {
  sizes: number[];
}

/** The largest capture by default (CAPTURE_MAX_BYTES): redaction within it should cost under 100 ms of CPU. */
const CAPTURE_BYTES = 65_536;
const TARGET_MS = 100;

const fill = (unit: string, size: number): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

function inputs(size: number): Record<string, string> {
  const corpus = `${[...SECRET_LINES.map((line) => line.text), ...UNTOUCHED_LINES].join("\n")}\n`;
  const base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  return {
    "the table and prose, repeated": fill(corpus, size),
    "random base64": Array.from({ length: size }, () => base64[Math.floor(random() * 64)]).join(""),
    "a: repeated": fill("a:", size),
    "= repeated": fill("=", size),
    "@ repeated": fill("@", size),
    "-----BEGIN  repeated": fill("-----BEGIN ", size),
    "BEGIN PRIVATE KEY lines, no END": fill("-----BEGIN PRIVATE KEY-----\n", size),
    "key= repeated": fill("key=", size),
    "password=' repeated": fill("password='", size),
    "api_key: x…, dense": fill("api_key: xxxxxxxxxxxxxxxxxxxxxxxx ", size),
    "https://a: repeated": fill("https://a:", size),
    "xoxb-1- repeated": fill("xoxb-1-", size),
    "eyJ….  repeated": fill("eyJabcdefgh.", size),
  };
}

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function tableScore(): { caught: number; exact: number; lines: number; prose: number; touched: number } {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let caught = 0;
  let exact = 0;
  for (const { text, secrets } of SECRET_LINES) {
    const out = redactSecrets(text).text;
    if (secrets.every((secret) => !out.includes(secret))) caught++;
    let pattern = escape(text);
    for (const secret of secrets) pattern = pattern.split(escape(secret)).join("\\[REDACTED:[a-z0-9_]+\\]");
    if (new RegExp(`^${pattern}$`).test(out)) exact++;
  }
  const touched = UNTOUCHED_LINES.filter((line) => redactSecrets(line).text !== line).length;
  return { caught, exact, lines: SECRET_LINES.length, prose: UNTOUCHED_LINES.length, touched };
}

export async function runRedactionBench(options: RedactionOptions): Promise<Section> {
  // The warm-up's CPU, spread by the server over turns of the event loop (no turn longer than ~10 ms).
  const started = process.cpuUsage();
  await warmRedaction();
  const used = process.cpuUsage(started);
  return measure(options, (used.user + used.system) / 1000);
}

function measure(options: RedactionOptions, warmUp: number): Section {
  const score = tableScore();
  const rows: Row[] = [];
  const worst = new Map<number, { name: string; ms: number }>();
  for (const size of options.sizes) {
    for (const [name, text] of Object.entries(inputs(size))) {
      progress(`redaction: ${name}, ${size} bytes`);
      redactSecrets(text);
      const meter = newMeter();
      redactSecrets(text, meter);
      const ms = Math.min(...[0, 1, 2].map(() => cpuMs(() => redactSecrets(text))));
      if (ms > (worst.get(size)?.ms ?? -1)) worst.set(size, { name, ms });
      const perKiB = (ms * 1000) / (size / 1024);
      rows.push({
        scenario: `${name}, ${size / 1024} KiB`,
        n: size,
        p50Ms: null,
        p95Ms: null,
        opsPerSec: null,
        cpuMsPerOp: round(ms, 1),
        rssMb: null,
        note: `${round(perKiB, 0)} µs/KiB; work ${round(meter.chars / size, 0)} chars/char in ${meter.searches} searches`,
      });
    }
  }
  const atCapture = worst.get(CAPTURE_BYTES);
  return {
    name: "redaction",
    title: "Redaction: the secret table, prose, and CPU per input (in process)",
    rows,
    targets: [
      { what: "secrets of the table removed", goal: `${score.lines}/${score.lines}`, measured: `${score.caught}/${score.lines} (${score.exact} with the text around kept)`, met: score.caught === score.lines },
      { what: "prose lines touched", goal: "0", measured: `${score.touched}/${score.prose}`, met: score.touched === 0 },
      {
        what: `worst CPU for a ${CAPTURE_BYTES / 1024} KiB capture`,
        goal: `< ${TARGET_MS} ms`,
        measured: atCapture ? `${round(atCapture.ms, 1)} ms (${atCapture.name})` : "not run",
        met: atCapture ? atCapture.ms < TARGET_MS : null,
      },
    ],
    details: { warmUpMs: round(warmUp, 0), score, worst: Object.fromEntries([...worst].map(([size, value]) => [size, value])) },
  };
}
