import { seededUniform } from "./random-vectors.js";
import type { Credentials, TestServer } from "./server.js";

// Seeded values for fuzzing the API (test/integration/edge-fuzz.test.ts, mcp-fuzz.test.ts): every
// wrong shape a field could be given, and values an input's own JSON Schema takes. FUZZ_SEED picks
// the sequence, so a failure runs again the same way.

/** How many requests a fuzz sends per route or tool (FUZZ_ROUNDS). */
export const PER_ROUTE = Number(process.env.FUZZ_ROUNDS ?? 12);

const uniform = seededUniform(Number(process.env.FUZZ_SEED ?? 0x5eed_2026));
/** In [0, 1), from the seed. */
export const random = (): number => uniform() + 0.5;
export const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const deep = (levels: number): unknown => (levels === 0 ? "x" : { a: deep(levels - 1), b: [deep(levels - 1)] });

/** Values each field may be given: wrong types, edges of ranges, odd text, ids that are and are not. */
export const VALUES: readonly unknown[] = [
  "",
  " ",
  "x",
  "a".repeat(5_000),
  "0badc0de-0000-4000-8000-000000000000",
  "0badc0de",
  "not-a-uuid",
  "../../../etc/passwd",
  "%00",
  "seq:-1",
  "seq:99999999999999999999",
  "2026-13-45T99:99:99Z",
  "1970-01-01T00:00:00Z",
  "9999-12-31T23:59:59Z",
  "🙂🙃".repeat(50),
  "a,b,,c,",
  "*",
  "task.*",
  "W/\"1\"",
  "project:nope",
  "global",
  -1,
  0,
  1,
  2 ** 53,
  -(2 ** 53),
  1.5,
  1e308,
  true,
  false,
  null,
  [],
  [""],
  ["x", 1, null],
  Array.from({ length: 40 }, (_, index) => `t${index}`),
  {},
  { a: 1 },
  deep(12),
];

export const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** Values a caller would send, the ids of things that exist among them: a request made of these gets past validation and into the services. */
const plausible: unknown[] = ["fuzz", "a fuzz note about the cache", "open", "high", "memory", "project", "task.*", 1, 5, 50, 0.5, true, false, ["fuzz"], null];
/** Most fields get a plausible value, some a wrong one. */
export const valueFor = (): unknown => (random() < 0.65 ? pick(plausible) : pick(VALUES));

/** The part of JSON Schema the operations' inputs use. */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  format?: string;
  pattern?: string;
  default?: unknown;
}

const WORDS = ["fuzz", "cache", "deploy", "the", "lockfile", "retries", "queue", "x"];

/** A string as the schema would take it, mostly: an existing id where one fits. */
function stringFor(schema: Schema): string {
  if (schema.format === "uuid" || (schema.minLength === 6 && schema.maxLength === 64)) return String(pick(plausible.filter((value) => typeof value === "string" && /^[0-9a-f]{8}-/.test(value))));
  if (schema.format === "date-time") return new Date(Date.now() + (random() - 0.3) * 86_400_000 * 30).toISOString();
  // Never a name to resolve: tests send traffic to loopback only (the guarded fetcher refuses it).
  if (schema.format === "uri") return pick(["http://127.0.0.1:1/feed.xml", "https://[::1]/x", "not a url"]);
  if (schema.pattern?.startsWith("^[a-z0-9]")) return pick(["fuzz", "web", "fuzzer", "nope"]);
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 80, 80);
  let text = "";
  while (text.length < min || (text.length < max && random() < 0.6)) text += (text ? " " : "") + pick(WORDS);
  return text.slice(0, Math.max(min, Math.min(max, text.length)));
}

/** A value the schema takes, most of the time; now and then one of every wrong shape. */
export function valueOf(schema: Schema, depth = 0): unknown {
  // The input itself stays an object: the operations' own fields are what is being tried.
  if (depth > 0 && random() < 0.06) return pick(VALUES);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return pick(schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return valueOf(pick(branches), depth);
  const type = Array.isArray(schema.type) ? pick(schema.type) : schema.type;
  switch (type) {
    case "string":
      return stringFor(schema);
    case "integer":
    case "number": {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? 0;
      const max = schema.maximum ?? min + 100;
      const value = pick([min, max, min + (max - min) * random()]);
      return type === "integer" ? Math.round(value) : value;
    }
    case "boolean":
      return random() < 0.5;
    case "null":
      return null;
    case "array": {
      const count = Math.min(schema.maxItems ?? 3, (schema.minItems ?? 0) + Math.floor(random() * 3));
      return depth > 4 ? [] : Array.from({ length: count }, () => valueOf(schema.items ?? {}, depth + 1));
    }
    case "object": {
      const object: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if ((schema.required ?? []).includes(key) || random() < 0.4) object[key] = depth > 4 ? null : valueOf(property, depth + 1);
      }
      return object;
    }
    default:
      return pick(plausible);
  }
}


/**
 * Things to act on, made by the owner, their ids among the plausible values so that requests reach
 * them: a project `agent` joins, two entries, two tasks (one depending on the other), a message to
 * `agent`, a decision.
 */
export async function seedFuzzTargets(server: TestServer, agent: Credentials): Promise<void> {
  const made = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const response = await server.request<{ id: string }>(path, { as: server.owner, body });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.body.id;
  };
  const project = await made("/projects", { name: "fuzz" });
  await server.request(`/projects/${project}/join`, { as: agent, method: "POST" });
  const task = await made("/tasks", { title: "a task to fuzz", project });
  plausible.push(
    project,
    await made("/memory", { content: "an entry to fuzz", project }),
    await made("/memory", { content: "another entry to fuzz, about the deploy queue", project }),
    task,
    await made("/tasks", { title: "another task to fuzz", project, depends_on: [task] }),
    await made("/messages", { to: agent.agentId, body: "a message to fuzz" }),
    await made("/decisions", { decision: "fuzz the routes", rationale: "to find what fails", task_id: task }),
    agent.agentId,
    server.owner.agentId,
  );
}
