import { describe, expect, it } from "vitest";
import { CRASH_POINTS, type CrashPoint } from "../../src/core/crash-points.js";
import { cliEnv, startServe, type ServeProcess } from "../helpers/cli.js";
import { request, tempDir, type Credentials } from "../helpers/server.js";

// A keyed request cut by `kill -9` at every step between its start and its reply, then retried on
// the restarted server: the change is made exactly once, and the retry answers as the first
// request would have (CONTRACT §2, Idempotency-Key). A crash before the change commits leaves
// nothing, so the retry runs it; a crash after leaves the change with its answer, so the retry
// replays it. Each operation's kind of change: a create, a create whose status depends on what it
// found, an action on an existing row, and a consume that hands out messages.

interface Case {
  name: string;
  /** Makes what the request needs; returns its path and body. */
  prepare(url: string, as: Credentials, other: Credentials): Promise<{ path: string; body: unknown }>;
  /** How many times the change was made, read after the retry. */
  effects(url: string, as: Credentials): Promise<number>;
}

const post = async <T>(url: string, path: string, as: Credentials, body: unknown = {}): Promise<T> => {
  const answer = await request<T>(url, path, { as, body });
  if (answer.status >= 300) throw new Error(`${path}: ${answer.status} ${answer.text}`);
  return answer.body;
};

const CASES: Case[] = [
  {
    name: "task_create",
    prepare: () => Promise.resolve({ path: "/tasks", body: { title: "made once through a crash", project: null } }),
    effects: async (url, as) => (await request<{ title: string }[]>(url, "/tasks?limit=500", { as })).body.filter((task) => task.title === "made once through a crash").length,
  },
  {
    name: "memory_write",
    prepare: () => Promise.resolve({ path: "/memory", body: { content: "a note written once through a crash", allow_duplicate: true, project: null } }),
    effects: async (url, as) =>
      (await request<{ content: string }[]>(url, "/memory?limit=500", { as })).body.filter((entry) => entry.content === "a note written once through a crash").length,
  },
  {
    name: "task_claim",
    async prepare(url, as, other) {
      const task = await post<{ id: string }>(url, "/tasks", other, { title: "claimed once through a crash", project: null });
      return { path: `/tasks/${task.id}/claim`, body: { comment: "mine" } };
    },
    effects: async (url, as) => {
      const [task] = (await request<{ id: string; title: string }[]>(url, "/tasks?limit=500", { as })).body.filter((row) => row.title === "claimed once through a crash");
      const comments = await request<{ kind: string }[]>(url, `/tasks/${task?.id ?? "none"}/comments`, { as });
      return comments.body.filter((comment) => comment.kind === "claim").length;
    },
  },
  {
    name: "message_consume",
    async prepare(url, as, other) {
      for (let n = 0; n < 3; n++) await post(url, "/messages", other, { to: as.agentId, body: `consumed once ${n}` });
      return { path: "/messages/inbox/consume", body: { limit: 10 } };
    },
    effects: async (url, as) =>
      (await request<{ payload: { count: number } }[]>(url, "/events?since=seq:0&type=message.read", { as })).body.reduce((sum, event) => sum + event.payload.count, 0) / 3,
  },
];

/** Points before which the change has not committed: the retry runs the request. */
const BEFORE_CHANGE = new Set<CrashPoint>(["idempotency:before-run", "idempotency:before-commit"]);

async function crashAndRetry(point: CrashPoint, testCase: Case): Promise<void> {
  const dataDir = tempDir();
  // Only a keyed request reaches a crash point: the armed server itself makes what the request needs.
  const doomed = await startServe(cliEnv(dataDir, { CAIRN_CRASH_AT: point }));
  let server: ServeProcess | undefined;
  try {
    const register = async (id: string): Promise<Credentials> => {
      const { body } = await request<{ agent_id: string; api_key: string }>(doomed.url, "/agents/self-register", { body: { agent_id: id } });
      return { agentId: body.agent_id, apiKey: body.api_key };
    };
    const as = await register("crash-agent");
    const other = await register("crash-other");
    const { path, body } = await testCase.prepare(doomed.url, as, other);

    const headers = { "idempotency-key": `crash-${point}` };
    await expect(request(doomed.url, path, { as, body, headers })).rejects.toThrow();
    expect((await doomed.kill()).code).toBeNull();

    server = await startServe(cliEnv(dataDir));
    const retried = await request<unknown>(server.url, path, { as, body, headers });
    expect(retried.status, retried.text).toBeLessThan(300);
    expect(retried.headers.get("idempotent-replayed")).toBe(BEFORE_CHANGE.has(point) ? null : "true");
    const again = await request<unknown>(server.url, path, { as, body, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(retried.body);
    expect(await testCase.effects(server.url, as)).toBe(1);
  } finally {
    await doomed.kill();
    await server?.stop();
  }
}

describe("a keyed request killed at every step, then retried", () => {
  for (const point of CRASH_POINTS) {
    for (const testCase of CASES) {
      it(`${testCase.name}, killed at ${point}: one change, and the retry answers`, { timeout: 60_000 }, async () => {
        await crashAndRetry(point, testCase);
      });
    }
  }
});
