import { expect } from "vitest";
import type { MemoryEntry as Entry } from "../../src/wire/memory.js";
import type { Message } from "../../src/wire/messages.js";
import type { Task } from "../../src/wire/tasks.js";
import { eventsAfter, type Cluster } from "./group.js";
import type { Credentials } from "./server.js";

// The store's promises raced through the API: each scenario runs against one server (whose
// PostgreSQL pool overlaps transactions as separate servers would) and against three server
// processes on one PostgreSQL database, spreading its requests over whatever servers there are.
// docs/architecture.md lists each promise with the mechanism that keeps it.

const post = <T>(cluster: Cluster, index: number, path: string, as: Credentials, body: unknown = {}, headers: Record<string, string> = {}) =>
  cluster.on(index)<T>(path, { as, body, headers });

/** Sends `count` direct messages from `from` to `to`; returns their ids in order. */
async function sendMany(cluster: Cluster, from: Credentials, to: Credentials, count: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const sent = await post<Message>(cluster, n, "/messages", from, { to: to.agentId, body: `${label} ${n}` });
    expect(sent.status, sent.text).toBe(201);
    ids.push(sent.body.id);
  }
  return ids;
}

const duplicates = (ids: string[]): string[] => ids.filter((id, index) => ids.indexOf(id) !== index);

/** Concurrent consumes hand each unread message to exactly one caller, and mark exactly those read. */
export async function consumeExactlyOnce(cluster: Cluster, rounds = 3): Promise<void> {
  const sender = await cluster.agent("consume-sender", 0);
  const reader = await cluster.agent("consume-reader", 1);
  for (let round = 0; round < rounds; round++) {
    const sent = await sendMany(cluster, sender, reader, 24, `round ${round} message`);
    const batches = await Promise.all(Array.from({ length: 8 }, (_, index) => post<Message[]>(cluster, index, "/messages/inbox/consume", reader, { limit: 5 })));
    for (const batch of batches) expect(batch.status, batch.text).toBe(200);
    const consumed = batches.flatMap((batch) => batch.body.map((message) => message.id));
    expect(duplicates(consumed), `round ${round}: handed out twice`).toEqual([]);
    expect(new Set(consumed)).toEqual(new Set(sent));
    for (const batch of batches) for (const message of batch.body) expect(message.read).toBe(true);
    expect((await post<Message[]>(cluster, round, "/messages/inbox/consume", reader)).body).toEqual([]);
    expect((await cluster.on(round)<{ unread: number }>("/messages/inbox/count", { as: reader })).body.unread).toBe(0);
  }
  const reads = await eventsAfter(cluster.on(0), reader, 0, "message.read");
  const marked = reads.flatMap((event) => event.payload.message_ids as string[]);
  expect(duplicates(marked)).toEqual([]);
  expect(marked).toHaveLength(rounds * 24);
}

/** Read-all racing consumes: every message is marked read by exactly one of them, and counted once. */
export async function readAllRacesConsume(cluster: Cluster, rounds = 3): Promise<void> {
  const sender = await cluster.agent("read-all-sender", 0);
  const reader = await cluster.agent("read-all-reader", 1);
  for (let round = 0; round < rounds; round++) {
    const sent = await sendMany(cluster, sender, reader, 20, `read-all round ${round}`);
    const [consumes, readAlls] = await Promise.all([
      Promise.all(Array.from({ length: 4 }, (_, index) => post<Message[]>(cluster, index, "/messages/inbox/consume", reader, { limit: 4 }))),
      Promise.all(Array.from({ length: 3 }, (_, index) => post<{ marked: number }>(cluster, index + 1, "/messages/inbox/read-all", reader))),
    ]);
    const consumed = consumes.flatMap((batch) => batch.body.map((message) => message.id));
    expect(duplicates(consumed)).toEqual([]);
    const marked = readAlls.reduce((sum, answer) => sum + answer.body.marked, 0);
    expect(consumed.length + marked, `round ${round}: ${consumed.length} consumed, ${marked} marked`).toBe(sent.length);
    expect((await cluster.on(0)<{ unread: number }>("/messages/inbox/count", { as: reader })).body.unread).toBe(0);
  }
}

/** Marking one message read from many requests at once changes it once: one message.read event. */
export async function markReadOnce(cluster: Cluster): Promise<void> {
  const sender = await cluster.agent("mark-sender", 0);
  const reader = await cluster.agent("mark-reader", 1);
  const ids = await sendMany(cluster, sender, reader, 5, "marked once");
  await Promise.all(ids.flatMap((id) => Array.from({ length: 6 }, (_, index) => post(cluster, index, `/messages/${id}/read`, reader))));
  const reads = await eventsAfter(cluster.on(2), reader, 0, "message.read");
  expect(reads.flatMap((event) => event.payload.message_ids as string[]).sort()).toEqual([...ids].sort());
}

/**
 * Two dependencies that would close a cycle together, added at once on disjoint tasks: one is
 * refused. (With b → c and d → a in place, a → b and c → d each pass a check that does not see
 * the other: a → b → c → d → a.)
 */
export async function dependencyCycleOnce(cluster: Cluster, rounds = 12): Promise<void> {
  const planner = await cluster.agent("cycle-planner", 0);
  const create = async (title: string, index: number): Promise<string> => (await post<Task>(cluster, index, "/tasks", planner, { title })).body.id;
  const depend = (index: number, task: string, on: string) => post(cluster, index, `/tasks/${task}/dependencies`, planner, { depends_on: on });
  for (let round = 0; round < rounds; round++) {
    const [a, b, c, d] = await Promise.all(["a", "b", "c", "d"].map((name, index) => create(`cycle ${name} ${round}`, index)));
    if (!a || !b || !c || !d) throw new Error("tasks not created");
    expect((await depend(round, b, c)).status).toBe(201);
    expect((await depend(round + 1, d, a)).status).toBe(201);
    const answers = await Promise.all([depend(round, a, b), depend(round + 1, c, d)]);
    expect(answers.map((answer) => answer.status).sort(), `round ${round}`).toEqual([201, 409]);
  }
}

/** The same Idempotency-Key sent to every server at once acts once, and every answer is the first's. */
export async function sameKeyActsOnce(cluster: Cluster, rounds = 5): Promise<void> {
  const agent = await cluster.agent("same-key-agent", 0);
  for (let round = 0; round < rounds; round++) {
    const body = { title: `keyed once, round ${round}` };
    const headers = { "idempotency-key": `same-key-${round}` };
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => post<Task>(cluster, index, "/tasks", agent, body, headers)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(201);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    const listed = await cluster.on(round)<Task[]>(`/tasks?limit=500&agent=${agent.agentId}`, { as: agent });
    expect(listed.body.filter((task) => task.title === body.title)).toHaveLength(1);
  }
}

/**
 * A claim racing a new dependency of the same task: either the claim goes first (and says the task
 * was not blocked) or it is refused as blocked — never a claim that answers "claimed, blocked".
 */
export async function claimRacesNewDependency(cluster: Cluster, rounds = 20): Promise<void> {
  const planner = await cluster.agent("blocking-planner", 0);
  const worker = await cluster.agent("blocked-worker", 1);
  for (let round = 0; round < rounds; round++) {
    const task = (await post<Task>(cluster, round, "/tasks", planner, { title: `claimable ${round}` })).body;
    const blocker = (await post<Task>(cluster, round + 1, "/tasks", planner, { title: `blocker ${round}` })).body;
    const [added, claim] = await Promise.all([
      post<Task>(cluster, round, `/tasks/${task.id}/dependencies`, planner, { depends_on: blocker.id }),
      post<Task>(cluster, round + 1, `/tasks/${task.id}/claim`, worker),
    ]);
    expect(added.status, added.text).toBe(201);
    if (claim.status === 200) expect(claim.body.blocked, `round ${round}: claimed while blocked`).toBe(false);
    else expect(claim.body, `round ${round}`).toMatchObject({ detail: "task is blocked" });
  }
}

/** A task waiting on several, whose last ones complete at once: exactly one `task.unblocked` for it. */
export async function fanInUnblockedOnce(cluster: Cluster, rounds = 10): Promise<void> {
  const planner = await cluster.agent("fan-in-planner", 0);
  const workers = await Promise.all(Array.from({ length: 4 }, (_, index) => cluster.agent(`fan-in-worker-${index}`, index)));
  const start = (await eventsAfter(cluster.on(0), planner, 0)).at(-1)?.seq ?? 0;
  const joins: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const parts = await Promise.all(workers.map(async (worker, index) => {
      const task = (await post<Task>(cluster, index, "/tasks", planner, { title: `part ${index} of ${round}` })).body;
      expect((await post(cluster, index, `/tasks/${task.id}/claim`, worker)).status).toBe(200);
      return task.id;
    }));
    const join = (await post<Task>(cluster, round, "/tasks", planner, { title: `join ${round}`, depends_on: parts })).body;
    joins.push(join.id);
    const done = await Promise.all(workers.map((worker, index) => post(cluster, index + round, `/tasks/${parts[index] ?? ""}/complete`, worker)));
    for (const answer of done) expect(answer.status, answer.text).toBe(200);
  }
  const unblocked = (await eventsAfter(cluster.on(1), planner, start, "task.unblocked")).map((event) => event.payload.task_id);
  for (const join of joins) expect(unblocked.filter((id) => id === join), `join ${join}`).toHaveLength(1);
}

/**
 * Removing a task's dependency while another of its dependencies completes: however they
 * interleave, the task is announced unblocked exactly once when it ends unblocked.
 */
export async function removeDependencyRacesCompletion(cluster: Cluster, rounds = 12): Promise<void> {
  const planner = await cluster.agent("unblock-planner", 0);
  const worker = await cluster.agent("unblock-worker", 1);
  for (let round = 0; round < rounds; round++) {
    const open = (await post<Task>(cluster, round, "/tasks", planner, { title: `left open ${round}` })).body;
    const claimed = (await post<Task>(cluster, round, "/tasks", planner, { title: `finished ${round}` })).body;
    expect((await post(cluster, round, `/tasks/${claimed.id}/claim`, worker)).status).toBe(200);
    // Both shapes: the removed dependency is the open one (the other completes), or the one completing.
    const removed = round % 2 === 0 ? open : claimed;
    const dependsOn = round % 2 === 0 ? [open.id, claimed.id] : [claimed.id];
    const waiting = (await post<Task>(cluster, round, "/tasks", planner, { title: `waiting ${round}`, depends_on: dependsOn })).body;
    const before = (await eventsAfter(cluster.on(0), planner, 0)).at(-1)?.seq ?? 0;
    const [removal, completion] = await Promise.all([
      cluster.on(round)(`/tasks/${waiting.id}/dependencies/${removed.id}`, { as: planner, method: "DELETE" }),
      post(cluster, round + 1, `/tasks/${claimed.id}/complete`, worker),
    ]);
    expect(completion.status, completion.text).toBe(200);
    // Removing the dependency the other request completes may find it already complete: either answer is whole.
    expect([200, 404], removal.text).toContain(removal.status);
    const state = (await cluster.on(round)<Task>(`/tasks/${waiting.id}`, { as: planner })).body;
    const announced = (await eventsAfter(cluster.on(round + 1), planner, before, "task.unblocked")).filter((event) => event.payload.task_id === waiting.id);
    expect(announced, `round ${round}`).toHaveLength(state.blocked ? 0 : 1);
  }
}

/** Writing an entry's exact content again while its author edits it: the edit is never lost to the reinforcement. */
export async function reinforcementKeepsEdits(cluster: Cluster, rounds = 12): Promise<void> {
  const author = await cluster.agent("edited-author", 0);
  const echo = await cluster.agent("echoing-writer", 1);
  for (let round = 0; round < rounds; round++) {
    const content = `the deploy script for round ${round} needs the staging token`;
    const entry = (await post<Entry>(cluster, round, "/memory", author, { content, project: null, confidence: 0.5 })).body;
    const [edit, again] = await Promise.all([
      cluster.on(round)<Entry>(`/memory/${entry.id}`, { as: author, method: "PATCH", body: { confidence: 0.9 }, headers: { "if-match": `"${entry.version}"` } }),
      post<Entry>(cluster, round + 1, "/memory", echo, { content, project: null }),
    ]);
    expect(edit.status, edit.text).toBe(200);
    expect([200, 201]).toContain(again.status);
    const final = (await cluster.on(round + 2)<Entry>(`/memory/${entry.id}`, { as: author })).body;
    // The edit first then a reinforcement of it (0.92), or a new entry after the edit (0.9); never the edit lost (0.6).
    expect([0.9, 0.92], `round ${round}: ${final.confidence}`).toContain(final.confidence);
  }
}

/**
 * One fact written at once by six agents, three with the same text and three with other
 * punctuation (other content keys, the same meaning): one entry is stored, and every other write
 * reinforces it. A write inserts its entry before it takes its project's lock; of two that did,
 * the second to take it must see the first.
 */
export async function duplicatesStoredOnce(cluster: Cluster, rounds = 8): Promise<void> {
  const writers = await Promise.all(Array.from({ length: 6 }, (_, index) => cluster.agent(`fact-writer-${index}`, index)));
  for (let round = 0; round < rounds; round++) {
    const fact = `the release train for sprint ${round} leaves on thursday`;
    const texts = [fact, fact, fact, `${fact}!`, `${fact}.`, `The release train, for sprint ${round}, leaves on Thursday`];
    const responses = await Promise.all(
      writers.map((writer, index) => post<Entry & { duplicate_of?: string }>(cluster, round + index, "/memory", writer, { content: texts[index], project: null, confidence: 0.5 })),
    );
    const created = responses.filter((response) => response.status === 201);
    expect(created.length, `round ${round}: ${responses.map((response) => response.status).join(", ")}`).toBe(1);
    const id = created[0]?.body.id;
    const reinforcing = responses.filter((response) => response.status === 200);
    expect(reinforcing.map((response) => response.body.duplicate_of)).toEqual(Array.from({ length: 5 }, () => id));
    const stored = await cluster.on(round)<Entry & { reinforcement_count: number }>(`/memory/${id}`, { as: writers[0] as Credentials });
    expect(stored.body.reinforcement_count, `round ${round}`).toBe(5);
  }
}

/** A project cleared while one of its entries moves to another project: the moved entry survives. */
export async function clearRacesMove(cluster: Cluster, rounds = 12): Promise<void> {
  const owner = await cluster.agent("clear-owner", 0);
  for (let round = 0; round < rounds; round++) {
    const [from, to] = [`clear-from-${round}`, `clear-to-${round}`];
    for (const name of [from, to]) expect((await post(cluster, round, "/projects", owner, { name })).status).toBe(201);
    const entry = (await post<Entry>(cluster, round, "/memory", owner, { content: `moved note ${round}`, project: from })).body;
    const [cleared, moved] = await Promise.all([
      post(cluster, round, `/projects/${from}/clear`, owner, { memory: true }),
      cluster.on(round + 1)<Entry>(`/memory/${entry.id}`, { as: owner, method: "PATCH", body: { project: to } }),
    ]);
    expect(cleared.status, cleared.text).toBe(200);
    if (moved.status === 200) expect((await cluster.on(round + 2)(`/memory/${entry.id}`, { as: owner })).status, `round ${round}`).toBe(200);
    else expect(moved.status).toBe(404);
  }
}

/** An agent deleted by the owner while it renames itself: one of the two wins; a delete that answers 204 deleted it. */
export async function deleteRacesRename(cluster: Cluster, rounds = 12): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const agent = await cluster.agent(`renaming-${round}`, round);
    const [removal, rename] = await Promise.all([
      cluster.on(round)(`/agents/${agent.agentId}`, { as: cluster.owner, method: "DELETE" }),
      cluster.on(round + 1)(`/agents/me`, { as: agent, method: "PATCH", body: { agent_id: `renamed-${round}` } }),
    ]);
    const renamed = { agentId: `renamed-${round}`, apiKey: agent.apiKey };
    const alive = (await cluster.on(round + 2)("/agents/me", { as: renamed })).status === 200;
    if (removal.status === 204) expect(alive, `round ${round}: deleted yet alive as renamed-${round}`).toBe(false);
    else expect([removal.status, rename.status, alive]).toEqual([404, 200, true]);
  }
}

/** Wrong keys for one agent id sent all at once: no more are checked than the throttle allows. */
export async function guessingBurstThrottled(cluster: Cluster, limit: number): Promise<void> {
  const target = await cluster.agent("guessed-at-once", 0);
  const answers = await Promise.all(
    Array.from({ length: limit * 3 }, (_, index) => cluster.on(index)("/agents/me", { as: { agentId: target.agentId, apiKey: `cairn_wrong_${index}` } })),
  );
  const statuses = answers.map((answer) => answer.status);
  expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(limit * cluster.size);
  expect((await cluster.on(1)("/agents/me", { as: target })).status).toBe(429);
}

/** Two sessions of one agent loading their handoff at once: the memory cursor ends at the later, never back. */
export async function handoffCursorNeverBack(cluster: Cluster, rounds = 10): Promise<void> {
  const reader = await cluster.agent("handoff-reader", 0);
  const writer = await cluster.agent("handoff-writer", 1);
  for (let round = 0; round < rounds; round++) {
    expect((await post(cluster, round, "/memory", writer, { content: `first news of round ${round}`, project: null })).status).toBe(201);
    const first = cluster.on(round)("/sessions/handoff", { as: reader });
    expect((await post(cluster, round + 1, "/memory", writer, { content: `second news of round ${round}`, project: null })).status).toBe(201);
    const second = cluster.on(round + 1)("/sessions/handoff", { as: reader });
    await Promise.all([first, second]);
    const peek = await cluster.on(round + 2)<{ memory_delta_since_last_seen: unknown[] }>("/sessions/handoff?peek=true", { as: reader });
    expect(peek.status, peek.text).toBe(200);
    expect(peek.body.memory_delta_since_last_seen, `round ${round}`).toEqual([]);
  }
}

interface Comment {
  agent_id: string;
  kind: string;
}

/** Replays a task's log: each step must be legal from the state the steps before it left. */
function replayLog(log: Comment[], label: string): { status: string; assignee: string | null } {
  let status = "open";
  let assignee: string | null = null;
  for (const step of log) {
    if (step.kind === "claim") {
      expect(status, `${label}: claimed while ${status}`).toBe("open");
      [status, assignee] = ["claimed", step.agent_id];
    } else if (step.kind === "unclaim") {
      expect(status, `${label}: released while ${status}`).toBe("claimed");
      [status, assignee] = ["open", null];
    } else if (step.kind === "complete") {
      expect(status, `${label}: completed while ${status}`).toBe("claimed");
      expect(step.agent_id, `${label}: completed by another than its assignee`).toBe(assignee);
      status = "completed";
    }
  }
  return { status, assignee };
}

/**
 * Claims whose leases lapse while their assignee comes back to complete them, rivals claim them
 * and the owner releases some: every task's log is a legal sequence, and ends as the task is.
 */
export async function leaseExpiryRacesClaims(cluster: Cluster, leaseSeconds: number): Promise<void> {
  const worker = await cluster.agent("lapsing-worker", 0);
  const rivals = await Promise.all(Array.from({ length: 3 }, (_, index) => cluster.agent(`lease-rival-${index}`, index + 1)));
  const tasks: string[] = [];
  for (let n = 0; n < 12; n++) {
    const task = (await post<Task>(cluster, n, "/tasks", cluster.owner, { title: `lapsing ${n}` })).body;
    expect((await post(cluster, n, `/tasks/${task.id}/claim`, worker)).status).toBe(200);
    tasks.push(task.id);
  }
  // Silent past the lease, then everyone at once: the worker completing, rivals claiming, the owner releasing.
  await new Promise((resolve) => setTimeout(resolve, leaseSeconds * 1000 + 300));
  const deadline = Date.now() + (leaseSeconds + 8) * 1000;
  await Promise.all([
    ...tasks.map((id, index) => post(cluster, index, `/tasks/${id}/complete`, worker)),
    ...tasks.filter((_, index) => index % 4 === 0).map((id, index) => post(cluster, index + 1, `/tasks/${id}/unclaim`, cluster.owner)),
    ...rivals.map(async (rival, index) => {
      for (let round = 0; Date.now() < deadline; round++) {
        const open = await cluster.on(index + round)<Task[]>("/tasks?status=open&limit=50", { as: rival });
        const mine = open.body.filter((task) => tasks.includes(task.id));
        if (mine.length === 0 && round > 3) return;
        await Promise.all(mine.map((task) => post(cluster, index + round, `/tasks/${task.id}/claim`, rival)));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  ]);
  for (const [index, id] of tasks.entries()) {
    const log = (await cluster.on(index)<Comment[]>(`/tasks/${id}/comments?limit=100`, { as: cluster.owner })).body;
    const replayed = replayLog(log, `task ${index}`);
    const stored = (await cluster.on(index + 1)<Task>(`/tasks/${id}`, { as: cluster.owner })).body;
    expect({ status: stored.status, assignee: stored.status === "open" ? null : stored.assigned_to }, `task ${index}`).toEqual(replayed);
  }
}

/**
 * Writes into several projects at once while an agent keeps loading its handoff: every entry
 * written reaches it in some delta (a cursor of writers' clocks skipped a write that took its time
 * earlier and committed later).
 */
export async function handoffMissesNothing(cluster: Cluster, seconds = 4): Promise<void> {
  const reader = await cluster.agent("delta-reader", 0);
  const writers = await Promise.all(Array.from({ length: 6 }, (_, index) => cluster.agent(`delta-writer-${index}`, index)));
  for (const [index, writer] of writers.entries()) {
    expect((await post(cluster, index, "/projects", writer, { name: `delta-${index}` })).status).toBe(201);
    expect((await post(cluster, index, `/projects/delta-${index}/join`, reader)).status).toBe(200);
  }
  const written = new Set<string>();
  const seen = new Set<string>();
  const load = async (index: number): Promise<void> => {
    for (;;) {
      const pack = await cluster.on(index)<{ memory_delta_since_last_seen: { id: string }[]; delta_truncated: boolean }>("/sessions/handoff", { as: reader });
      expect(pack.status, pack.text).toBe(200);
      for (const change of pack.body.memory_delta_since_last_seen) seen.add(change.id);
      if (!pack.body.delta_truncated) return;
    }
  };
  let writing = true;
  const writes = Promise.all(writers.map(async (writer, index) => {
    for (let n = 0; writing; n++) {
      const entry = await post<Entry>(cluster, index + n, "/memory", writer, { content: `delta note ${n} of writer ${index}`, project: `delta-${index}`, allow_duplicate: true });
      expect(entry.status, entry.text).toBe(201);
      written.add(entry.body.id);
    }
  }));
  const stopAt = Date.now() + seconds * 1000;
  for (let n = 0; Date.now() < stopAt; n++) await load(n);
  writing = false;
  await writes;
  await load(0);
  expect([...written].filter((id) => !seen.has(id))).toEqual([]);
  expect(written.size).toBeGreaterThan(20);
}

interface FeedPage {
  items: { id: string; _cairn: { version: number; change_seq: number; deleted_at?: string } }[];
  _cairn: { max_change_seq: number };
}

/** One follower of the feed by `change_seq`, as a peer pulls: its cursor and what it has met. */
class FeedFollower {
  cursor = 0;
  readonly seen = new Map<string, { version: number; deleted: boolean }>();

  constructor(
    private readonly cluster: Cluster,
    private readonly as: Credentials,
  ) {}

  /** Reads the next page through server `index`; returns how many changes it held. */
  async next(index: number): Promise<number> {
    const page = await this.cluster.on(index)<FeedPage>(`/memory/feed.json?order=changes&include_deleted=true&project=feed-race&limit=7&since_seq=${this.cursor}`, { as: this.as });
    expect(page.status, page.text).toBe(200);
    for (const item of page.body.items) {
      expect(item._cairn.change_seq, `a change numbered ${item._cairn.change_seq} after ${this.cursor}`).toBeGreaterThan(this.cursor);
      this.cursor = item._cairn.change_seq;
      this.seen.set(item.id, { version: item._cairn.version, deleted: item._cairn.deleted_at !== undefined });
    }
    return page.body.items.length;
  }
}

/**
 * Writers create, edit and delete entries while followers page `GET /memory/feed.json?order=changes`
 * from their last `change_seq`, as peers pull: the numbers each meets only ever rise, and once the
 * writers stop each has met every entry in its final state (its last version, deleted or not). A
 * cursor that passed a change committing later with a lower number would leave that entry behind.
 */
export async function feedFollowersMissNothing(cluster: Cluster, seconds = 4): Promise<void> {
  const reader = await cluster.agent("feed-follower", 0);
  const writers = await Promise.all(Array.from({ length: 6 }, (_, index) => cluster.agent(`feed-writer-${index}`, index)));
  expect((await post(cluster, 0, "/projects", writers[0] as Credentials, { name: "feed-race" })).status).toBe(201);
  for (const [index, agent] of [reader, ...writers].entries()) expect((await post(cluster, index, "/projects/feed-race/join", agent)).status).toBe(200);

  const final = new Map<string, { version: number; deleted: boolean }>();
  let writing = true;
  const writes = Promise.all(
    writers.map(async (writer, index) => {
      // This writer's entries not deleted yet, oldest first: every third write edits one, every fifth deletes one.
      // Five writes at least, however slow the machine: the followers' time alone may see too few.
      const live: string[] = [];
      for (let n = 0; writing || n < 5; n++) {
        const at = index + n;
        const entry = await post<Entry>(cluster, at, "/memory", writer, { content: `feed race note ${n} of writer ${index}`, project: "feed-race", allow_duplicate: true });
        expect(entry.status, entry.text).toBe(201);
        final.set(entry.body.id, { version: entry.body.version, deleted: false });
        live.push(entry.body.id);
        if (n % 3 === 1) {
          const id = live[Math.floor(live.length / 2)] as string;
          const edited = await cluster.on(at + 1)<Entry>(`/memory/${id}`, { as: writer, method: "PATCH", body: { content: `feed race note ${id} edited at ${n}` } });
          expect(edited.status, edited.text).toBe(200);
          final.set(id, { version: edited.body.version, deleted: false });
        }
        if (n % 5 === 4) {
          const id = live.shift() as string;
          expect((await cluster.on(at + 2)(`/memory/${id}`, { as: writer, method: "DELETE" })).status).toBe(204);
          // A deletion is the entry's next version.
          final.set(id, { version: (final.get(id)?.version ?? 0) + 1, deleted: true });
        }
      }
    }),
  );
  const followers = Array.from({ length: 3 }, () => new FeedFollower(cluster, reader));
  const stopAt = Date.now() + seconds * 1000;
  await Promise.all(followers.map(async (follower, offset) => {
    for (let n = offset; Date.now() < stopAt; n++) await follower.next(n);
  }));
  writing = false;
  await writes;

  expect(final.size).toBeGreaterThan(20);
  for (const follower of followers) {
    for (let n = 0; (await follower.next(n)) > 0; n++);
    const missed = [...final].filter(([id, state]) => follower.seen.get(id)?.version !== state.version || follower.seen.get(id)?.deleted !== state.deleted);
    expect(missed.map(([id, state]) => ({ id, state, seen: follower.seen.get(id) }))).toEqual([]);
    const last = await cluster.on(1)<FeedPage>(`/memory/feed.json?order=changes&include_deleted=true&project=feed-race&since_seq=${follower.cursor}`, { as: reader });
    expect(last.body.items).toEqual([]);
    expect(last.body._cairn.max_change_seq).toBe(follower.cursor);
  }
}

/** Two decisions superseding the same one at once: one supersedes it, the other is refused. */
export async function supersedeOnce(cluster: Cluster, rounds = 10): Promise<void> {
  const author = await cluster.agent("superseding-author", 0);
  for (let round = 0; round < rounds; round++) {
    const first = await post<{ id: string }>(cluster, round, "/decisions", author, { decision: `use plan A, round ${round}`, rationale: "cheapest", project: null });
    expect(first.status, first.text).toBe(201);
    const answers = await Promise.all(
      ["B", "C"].map((plan, index) => post(cluster, round + index, "/decisions", author, { decision: `use plan ${plan}, round ${round}`, rationale: "changed our mind", project: null, supersedes: first.body.id })),
    );
    expect(answers.map((answer) => answer.status).sort(), `round ${round}`).toEqual([201, 409]);
  }
}

const unitSha = (text: string): string => [...text].reduce((hash, char) => (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0, 7).toString(16).padStart(8, "0").repeat(8);

/** A compile rewriting a unit's entry while the entry is deleted: a deleted entry never comes back into search. */
export async function compileRacesDelete(cluster: Cluster, rounds = 8): Promise<void> {
  const coder = await cluster.agent("compiling-coder", 0);
  const unit = (round: number, version: number) => ({
    path: `src/race-${round}.ts`,
    symbol: "build",
    kind: "function",
    lang: "typescript",
    start_line: 1,
    end_line: 5,
    sha: unitSha(`build ${round} v${version}`),
    signature: "function build(): void",
    description: `function build(): void\nAssembles the bundle for release train ${round}, version ${version}.`,
    deps: [],
  });
  for (let round = 0; round < rounds; round++) {
    const first = await post<{ memory_ids: string[] }>(cluster, round, "/compile", coder, { project: null, units: [unit(round, 1)] });
    expect(first.status, first.text).toBe(200);
    const entry = first.body.memory_ids[0] as string;
    const [removed, again] = await Promise.all([
      cluster.on(round)(`/memory/${entry}`, { as: coder, method: "DELETE" }),
      post<{ memory_ids: string[] }>(cluster, round + 1, "/compile", coder, { project: null, units: [unit(round, 2)] }),
    ]);
    expect(removed.status, removed.text).toBe(204);
    expect(again.status, again.text).toBe(200);
    const found = await cluster.on(round + 2)<{ id: string }[]>(`/memory/search?q=${encodeURIComponent(`release train ${round} version 2`)}&limit=20`, { as: coder });
    expect(found.body.map((hit) => hit.id), `round ${round}: the deleted entry is found`).not.toContain(entry);
    const [anchor] = (await cluster.on(round)<{ memory_id: string | null }[]>(`/compile/anchors?path=${encodeURIComponent(`src/race-${round}.ts`)}`, { as: coder })).body;
    if (anchor?.memory_id) expect((await cluster.on(round)(`/memory/${anchor.memory_id}`, { as: coder })).status, `round ${round}: the anchor's entry`).toBe(200);
  }
}

/** Entries expiring while their author extends them: an extension that answered 200 keeps its entry. */
export async function expiryRacesExtension(cluster: Cluster, rounds = 3): Promise<void> {
  const author = await cluster.agent("extending-author", 0);
  for (let round = 0; round < rounds; round++) {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const entries = await Promise.all(
      Array.from({ length: 10 }, async (_, index) => (await post<Entry>(cluster, index, "/memory", author, { content: `fleeting ${round}.${index}`, project: null, expires_at: expiresAt })).body),
    );
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() - 60));
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const extended = await Promise.all(
      entries.map(async (entry, index) => {
        await new Promise((resolve) => setTimeout(resolve, index * 12));
        return cluster.on(index)<Entry>(`/memory/${entry.id}`, { as: author, method: "PATCH", body: { expires_at: later } });
      }),
    );
    for (const [index, answer] of extended.entries()) {
      const entry = entries[index] as Entry;
      if (answer.status === 200) expect((await cluster.on(index + 1)(`/memory/${entry.id}`, { as: author })).status, `round ${round}: ${entry.id} extended, then gone`).toBe(200);
      else expect(answer.status).toBe(404);
    }
  }
}

/** Searches and reads of the same entries from many callers at once: each read counted exactly once. */
export async function searchReadsCountedOnce(cluster: Cluster, searchesPerReader = 12): Promise<void> {
  const author = await cluster.agent("counted-author", 0);
  const readers = await Promise.all(Array.from({ length: 4 }, (_, index) => cluster.agent(`counted-reader-${index}`, index)));
  const ids: string[] = [];
  for (let index = 0; index < 6; index++) {
    const written = await post<Entry>(cluster, index, "/memory", author, { content: `the quokka ledger keeps invoice batch ${index} for the auditors`, project: null });
    expect(written.status, written.text).toBe(201);
    ids.push(written.body.id);
  }
  await Promise.all(
    readers.flatMap((reader, index) => [
      ...Array.from({ length: searchesPerReader }, async (_, n) => {
        const hits = await cluster.on(index + n)<Entry[]>("/memory/search?q=quokka%20ledger%20invoice&limit=10", { as: reader });
        expect(hits.status, hits.text).toBe(200);
        expect(hits.body.map((hit) => hit.id).sort()).toEqual([...ids].sort());
      }),
      ...ids.map(async (id, n) => expect((await cluster.on(index + n + 1)(`/memory/${id}`, { as: reader })).status).toBe(200)),
    ]),
  );
  // Search reads are written a moment later, on whichever server answered the search.
  const expected = readers.length * (searchesPerReader + 1);
  for (const id of ids) {
    await expect
      .poll(async () => (await cluster.on(0)<Entry & { read_count: number; distinct_readers: number }>(`/memory/${id}`, { as: author })).body, { timeout: 15_000 })
      .toMatchObject({ read_count: expected, distinct_readers: readers.length });
  }
}
