import { startFeedServer, type FeedServer } from "../helpers/feed-server.js";
import { fixtureDocument } from "../helpers/feed-fixtures.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it, test as base } from "vitest";
import { mcpTools } from "../../src/mcp/tools.js";
import { catalogue } from "../../tools/catalogue.js";
import { inputLayout } from "../../tools/layout.js";
import type { Operation } from "../../tools/operation.js";
import { mcpClient } from "../helpers/mcp.js";
import { startTestServer, type Credentials, type TestServer } from "../helpers/server.js";
import { afterMillisecond } from "../helpers/wait.js";

// One table drives every operation through REST on one server and through MCP on another. Each
// scenario gets two new servers of its own: both start empty and see the same calls in the same
// order, so their answers must match once ids, times, keys and cursors (random by design) are
// masked, and no scenario sees what another left behind, whatever order they run in.

type Who = "alice" | "bob" | "owner" | "archivist";

interface World {
  server: TestServer;
  agents: Record<Who, Credentials>;
  /** A REST call made while setting a scenario up; its body, or it throws. */
  rest<T = { id: string }>(as: Who | Credentials, path: string, options?: { method?: string; body?: unknown }): Promise<T>;
  /** The world's MCP client for an agent, connected on first use. */
  client(as: Credentials): Promise<Client>;
  close(): Promise<void>;
}

/** What a scenario's setup leaves for the compared call: its arguments, or who makes it. */
interface Prepared {
  args?: Record<string, unknown>;
  as?: Credentials;
}

interface Scenario {
  /** Who makes the compared call; default alice. */
  as?: Who;
  setup?: (world: World) => Promise<Prepared>;
  args?: Record<string, unknown>;
  /** The compared call is refused with this code, on both transports. */
  refused?: string;
}

/** Operations without a tool, and why: the table must still account for them. */
const REST_ONLY: Record<string, string> = {
  agent_register: "takes the registration key instead of agent credentials; an MCP session already has an agent",
  agent_self_register: "takes the registration key instead of agent credentials; an MCP session already has an agent",
  event_stream: "a server-sent event stream; over MCP an agent waits with wait_for",
  health: "public liveness check, not a primitive",
  onboard_script: "a public shell script for a machine without an agent yet",
  admin_export: "the owner's JSON Lines file of everything shared: a file to save, not a tool result",
  admin_import: "takes a JSON Lines file as its body: a file to load, not a tool call",
  memory_feed_json: "a JSON Feed for feed readers and peers (application/feed+json), not a tool result",
  memory_feed_atom: "an Atom document for feed readers, not a tool result",
  memory_merkle: "hashes a peer compares with its copy: for machines, not models",
  mesh_token_create: "mesh administration is the owner's, over REST and the UI only (CONTRACT §11)",
  mesh_token_list: "mesh administration is the owner's, over REST and the UI only",
  mesh_token_update: "mesh administration is the owner's, over REST and the UI only",
  mesh_token_revoke: "mesh administration is the owner's, over REST and the UI only",
  mesh_peer_link: "mesh administration is the owner's, over REST and the UI only",
  mesh_peer_list: "mesh administration is the owner's, over REST and the UI only",
  mesh_peer_update: "mesh administration is the owner's, over REST and the UI only",
  mesh_peer_unlink: "mesh administration is the owner's, over REST and the UI only",
  mesh_link_discovered: "mesh administration is the owner's, over REST and the UI only",
  mesh_handshake: "called by a peer with a mesh token, which MCP never takes",
  mesh_gossip: "read by peers with a mesh token, which MCP never takes",
  mesh_peer_sync: "mesh administration is the owner's, over REST and the UI only",
  memory_suppress: "hiding a peer's copy is the owner's call, over REST and the UI only",
  oauth_grant_list: "OAuth grants are the owner's, over REST and the UI only (CONTRACT §11)",
  oauth_grant_revoke: "OAuth grants are the owner's, over REST and the UI only",
  mesh_discovered_list: "the owner's list of instances heard of on the network, for the web UI's Mesh view: linking one is the owner's call, not a model's",
};

const newCapture = async (world: World, content: string): Promise<string> =>
  (await world.rest("alice", "/captures", { body: { content, session_id: "parity-session", project: null } })).id;
const writeNote = async (world: World, content: string, as: Who = "alice"): Promise<string> =>
  (await world.rest(as, "/memory", { body: { content, allow_duplicate: true, project: null } })).id;
// Global, so every agent of the table sees them whatever project the author joined last.
const savePair = (world: World): Promise<unknown> =>
  world.rest("alice", "/blueprints", {
    body: { name: "run-plan", title: "Run", project: null, params: [{ name: "who", type: "string" }], nodes: [{ id: "first", title: "First for {{params.who}}" }, { id: "second", title: "Second", needs: ["first"] }] },
  });
/** A running run of a two-node blueprint; its id. */
const startPair = async (world: World): Promise<string> => {
  await savePair(world);
  return (await world.rest("alice", "/blueprints/run-plan/instantiate", { body: { project: null, params: { who: "parity" } } })).id;
};
const newTask = async (world: World, title: string, as: Who = "alice"): Promise<string> =>
  (await world.rest(as, "/tasks", { body: { title, project: null } })).id;
const claimed = async (world: World, title: string): Promise<string> => {
  const id = await newTask(world, title);
  await world.rest("alice", `/tasks/${id}/claim`, { method: "POST" });
  return id;
};
const sentToBob = async (world: World, body: string): Promise<string> => (await world.rest("alice", "/messages", { body: { to: "parity-bob", body } })).id;
const registered = async (world: World, agentId: string): Promise<Credentials> => {
  const body = await world.rest<{ agent_id: string; api_key: string }>("owner", "/agents/self-register", { body: { agent_id: agentId } });
  return { agentId: body.agent_id, apiKey: body.api_key };
};
/**
 * Lists sort by time, then by insertion: an update that shares a millisecond with a later write
 * sorts before it on one server and after it on the other. A change made after the clock has moved
 * on sorts last on both.
 */
const onLaterMillisecond = (): Promise<void> => afterMillisecond(new Date().toISOString());

/** Notes of two authors, so lists, searches and deltas have something to answer with. */
async function someNotes(world: World): Promise<Prepared> {
  await writeNote(world, "Parity note: deploys go out on Tuesdays");
  await writeNote(world, "the staging database is reset every night", "bob");
  await writeNote(world, "builds take four minutes on two cores");
  return {};
}
/** Notes written, one of them changed and another deleted: a delta holds all three kinds. */
async function changedNotes(world: World): Promise<Prepared> {
  const changed = await writeNote(world, "a note that will change");
  const deleted = await writeNote(world, "a note that will go", "bob");
  await writeNote(world, "a note left as it is");
  await onLaterMillisecond();
  await world.rest("alice", `/memory/${changed}`, { method: "PATCH", body: { content: "a note that changed" } });
  await onLaterMillisecond();
  await world.rest("bob", `/memory/${deleted}`, { method: "DELETE" });
  return {};
}
/** Alice's project "parity-project", with bob in it when `withBob`. */
async function parityProject(world: World, withBob: boolean): Promise<Prepared> {
  await world.rest("alice", "/projects", { body: { name: "Parity Project", description: "for the parity table" } });
  if (withBob) await world.rest("bob", "/projects/parity-project/join", { method: "POST" });
  return {};
}
/** Alice's project and bob's: only one of them is alice's own. */
async function twoProjects(world: World): Promise<Prepared> {
  await parityProject(world, false);
  await world.rest("bob", "/projects", { body: { name: "Bob's Garden" } });
  return {};
}
/** Open, claimed, completed and failed tasks of different priorities. */
async function someTasks(world: World): Promise<Prepared> {
  await world.rest("alice", "/tasks", { body: { title: "an urgent task", priority: "high", tags: ["parity"], project: null } });
  await newTask(world, "a task nobody took", "bob");
  await claimed(world, "a task in hand");
  await world.rest("alice", `/tasks/${await claimed(world, "a task done")}/complete`, { method: "POST", body: { output: { pr: 7 } } });
  await world.rest("alice", `/tasks/${await claimed(world, "a task that failed")}/fail`, { method: "POST", body: { comment: "blocked" } });
  return {};
}
/** A function of src/parity.ts at one version of its text (the sha is the version's digit, repeated). */
const codeUnit = (symbol: string, version = 1, uses: string[] = []) => ({
  path: "src/parity.ts",
  symbol,
  kind: "function",
  lang: "typescript",
  start_line: 1,
  end_line: 4,
  sha: String(version).repeat(64),
  description: `function ${symbol}(): void`,
  deps: uses.map((name) => ({ kind: "symbol", name })),
});
const compiled = async (world: World, units: unknown[]): Promise<string[]> =>
  (await world.rest<{ memory_ids: string[] }>("alice", "/compile", { body: { project: null, commit: "parity", units } })).memory_ids;
/** Bob's note grounded by parse, whose code then changed: a stale entry. */
async function staleNote(world: World): Promise<Prepared> {
  const [parse] = await compiled(world, [codeUnit("parse")]);
  const note = await writeNote(world, "parse() skips blank lines", "bob");
  await world.rest("alice", "/graph/edge", { body: { src: parse, dst: note, rel: "grounds" } });
  await compiled(world, [codeUnit("parse", 2)]);
  return {};
}
const newDecision = async (world: World, decision: string, extra: Record<string, unknown> = {}, as: Who = "alice"): Promise<string> =>
  (await world.rest(as, "/decisions", { body: { decision, rationale: "it is simpler", project: null, ...extra } })).id;
/** A decision superseded by bob's, one about a task, and one of bob's own. */
async function someDecisions(world: World): Promise<Prepared> {
  const first = await newDecision(world, "Deploy with rsync", { tags: ["deploy"] });
  await newDecision(world, "Deploy with containers", { supersedes: first, alternatives: ["rsync", { option: "scp", reason_rejected: "no resume" }] }, "bob");
  await newDecision(world, "Ship the fix first", { task_id: await newTask(world, "a task decided on") });
  await newDecision(world, "Keep logs for a week", {}, "bob");
  return {};
}

/** Where alice left off: a handoff, changed notes, a message from bob and a task she holds. */
async function aliceMidSession(world: World): Promise<Prepared> {
  await world.rest("alice", "/sessions/handoff", { body: { summary: "halfway through", in_progress: [], next_steps: ["finish"], host: "parity" } });
  await changedNotes(world);
  await world.rest("bob", "/messages", { body: { to: "parity-alice", body: "ping me when done" } });
  await claimed(world, "a task alice holds");
  return {};
}

/** The feed every world subscribes to: a real server on loopback, shared by both worlds of a scenario. */
let feedSource: FeedServer;
beforeAll(async () => {
  feedSource = await startFeedServer();
  feedSource.route("/parity.xml", { headers: { "content-type": "application/rss+xml" }, body: fixtureDocument("rss-2.0", 3, { name: "parity" }).body });
});
afterAll(() => feedSource.close());
const feedArgs = (): Record<string, unknown> => ({ url: `${feedSource.url}/parity.xml`, project: null, tags: ["parity"], max_items_per_poll: 2 });
const newFeed = async (world: World): Promise<string> => (await world.rest<{ id: string }>("alice", "/feeds", { body: feedArgs() })).id;

const SCENARIOS: Record<string, Scenario> = {
  feed_subscribe: { setup: () => Promise.resolve({ args: feedArgs() }) },
  feed_list: { setup: async (world) => (await newFeed(world), {}), args: { limit: 5 } },
  feed_get: { setup: async (world) => ({ args: { id: await newFeed(world) } }) },
  feed_update: { setup: async (world) => ({ args: { id: await newFeed(world), name: "Parity releases", paused: true, interval_minutes: 120 } }) },
  feed_delete: { setup: async (world) => ({ args: { id: await newFeed(world) } }) },
  feed_poll: { setup: async (world) => ({ args: { id: await newFeed(world) } }) },
  memory_write: { args: { content: "Parity note: deploys go out on Tuesdays", tags: ["deploy"] } },
  memory_list: { setup: someNotes, args: { limit: 5 } },
  memory_search: { setup: someNotes, args: { q: "when do deploys go out" } },
  memory_delta: { setup: changedNotes, args: { since: "2000-01-01T00:00:00Z", limit: 10 } },
  memory_directives: {
    as: "owner",
    setup: async (world) => {
      await world.rest("owner", "/memory", { body: { content: "Parity directive: keep answers short", type: "directive" } });
      return {};
    },
  },
  memory_get: { setup: async (world) => ({ args: { id: await writeNote(world, "a note to read back") } }) },
  memory_update: { setup: async (world) => ({ args: { id: await writeNote(world, "a note to change"), content: "a changed note", tags: ["changed"] } }) },
  memory_delete: { setup: async (world) => ({ args: { id: await writeNote(world, "a note to delete") } }) },
  memory_delete_many: {
    setup: async (world) => ({ args: { ids: [await writeNote(world, "first of two to delete"), await writeNote(world, "second of two to delete")] } }),
  },
  memory_set_headline: { as: "archivist", setup: async (world) => ({ args: { id: await writeNote(world, "a long note that deserves a headline"), headline: "Headline" } }) },
  project_create: { args: { name: "Parity Project", description: "for the parity table" } },
  project_list: { setup: twoProjects },
  project_mine: { setup: twoProjects },
  project_join: { as: "bob", setup: (world) => parityProject(world, false), args: { id: "parity-project" } },
  project_leave: { as: "bob", setup: (world) => parityProject(world, true), args: { id: "parity-project" } },
  project_members: { setup: (world) => parityProject(world, true), args: { id: "parity-project" } },
  project_clear: {
    setup: async (world) => {
      await world.rest("alice", "/projects", { body: { name: "Clear Me" } });
      await world.rest("alice", "/memory", { body: { content: "a note in the project to clear", project: "clear-me" } });
      return { args: { id: "clear-me", memory: true, tasks: true, messages: true } };
    },
  },
  task_create: { args: { title: "Parity task", tags: ["parity"], priority: "high", project: null } },
  task_list: { setup: someTasks, args: { limit: 5 } },
  task_recommended: { setup: someTasks, args: { limit: 5 } },
  task_counts: { setup: someTasks, args: {} },
  task_get: { setup: async (world) => ({ args: { id: await newTask(world, "a task to read") } }) },
  task_update: { setup: async (world) => ({ args: { id: await newTask(world, "a task to change"), priority: "low", tags: ["later"] } }) },
  task_claim: { setup: async (world) => ({ args: { id: await newTask(world, "a task to claim"), comment: "mine" } }) },
  task_unclaim: { setup: async (world) => ({ args: { id: await claimed(world, "a task to release") } }) },
  task_complete: { setup: async (world) => ({ args: { id: await claimed(world, "a task to finish"), output: { pr: 7 } } }) },
  task_fail: { setup: async (world) => ({ args: { id: await claimed(world, "a task that fails"), comment: "blocked upstream" } }) },
  task_reopen: {
    setup: async (world) => {
      const id = await claimed(world, "a task to reopen");
      await world.rest("alice", `/tasks/${id}/complete`, { method: "POST" });
      return { args: { id } };
    },
  },
  task_heartbeat: { setup: async (world) => ({ args: { id: await claimed(world, "a task kept alive") } }) },
  task_comments: {
    setup: async (world) => {
      const id = await newTask(world, "a task with comments");
      await world.rest("alice", `/tasks/${id}/comments`, { body: { comment: "first thought" } });
      return { args: { id } };
    },
  },
  task_comment: { setup: async (world) => ({ args: { id: await newTask(world, "a task to comment on"), comment: "looks good" } }) },
  task_add_dependency: {
    setup: async (world) => ({ args: { id: await newTask(world, "a dependent task"), depends_on: await newTask(world, "its dependency") } }),
  },
  task_remove_dependency: {
    setup: async (world) => {
      const dependency = await newTask(world, "a dependency to drop");
      const id = (await world.rest("alice", "/tasks", { body: { title: "a task that depended", depends_on: [dependency] } })).id;
      return { args: { id, dep_id: dependency } };
    },
  },
  decision_record: {
    setup: async (world) => ({
      args: {
        decision: "Parity decision: release on Tuesdays",
        rationale: "the fewest people are away",
        alternatives: ["Mondays", { option: "Fridays", reason_rejected: "nobody to fix a bad release" }],
        task_id: await newTask(world, "a task the decision settles"),
        memory_refs: [await writeNote(world, "most of the team is in on Tuesdays")],
        supersedes: await newDecision(world, "Parity decision: release when ready"),
        tags: ["release"],
        project: null,
      },
    }),
  },
  decision_list: { setup: someDecisions, args: { limit: 5, include_superseded: true } },
  decision_get: { setup: async (world) => ({ args: { id: await newDecision(world, "a decision to read back") } }) },
  capture_add: { args: { content: "we chose vite; the token was password=hunter2", session_id: "parity-session", host: "parity-host", project: null } },
  capture_list: { as: "archivist", setup: async (world) => (await newCapture(world, "a session to distil"), {}), args: { limit: 5 } },
  capture_digest: { as: "archivist", setup: async (world) => ({ args: { results: [{ id: await newCapture(world, "a session digested"), outcome: "failed", error: "no model" }] } }) },
  message_send: { args: { to: "parity-bob", subject: "hi", body: "Parity message" } },
  message_inbox: { as: "bob", setup: async (world) => (await sentToBob(world, "first for bob"), await sentToBob(world, "second for bob"), {}) },
  message_unread_count: { as: "bob", setup: async (world) => (await sentToBob(world, "one unread"), await sentToBob(world, "two unread"), {}) },
  message_consume: { as: "bob", setup: async (world) => (await sentToBob(world, "to consume"), {}) },
  message_read_all: { as: "bob", setup: async (world) => (await sentToBob(world, "to mark with read-all"), {}) },
  message_list: {
    setup: async (world) => {
      await sentToBob(world, "from alice to bob");
      await world.rest("bob", "/messages", { body: { to: "parity-alice", subject: "re", body: "from bob to alice" } });
      return {};
    },
    args: { limit: 5 },
  },
  message_get: { as: "bob", setup: async (world) => ({ args: { id: await sentToBob(world, "to read one") } }) },
  message_mark_read: { as: "bob", setup: async (world) => ({ args: { id: await sentToBob(world, "to mark read") } }) },
  session_handoff: { args: { summary: "Parity session done", in_progress: [], next_steps: ["review"], host: "parity" } },
  session_start: { setup: aliceMidSession, args: { peek: true } },
  session_load_agent: { as: "owner", setup: aliceMidSession, args: { agent_id: "parity-alice", peek: true } },
  session_latest: {
    as: "owner",
    setup: async (world) => {
      await world.rest("alice", "/sessions/handoff", { body: { summary: "alice stopped here", in_progress: [], next_steps: ["review"], host: "parity" } });
      await world.rest("bob", "/sessions/handoff", { body: { summary: "bob stopped there", in_progress: [], next_steps: [], host: "parity" } });
      return {};
    },
    args: { limit: 5 },
  },
  agent_performance: { setup: someTasks, args: {} },
  agent_list: { args: { limit: 50 } },
  agent_me: { args: {} },
  agent_update_me: { as: "bob", args: { display_name: "Bob the Parity Tester" } },
  agent_delete_me: { setup: async (world) => ({ as: await registered(world, "parity-leaver") }) },
  agent_update: { as: "owner", setup: async (world) => ((await registered(world, "parity-target")), { args: { id: "parity-target", display_name: "Target" } }) },
  agent_delete: { as: "owner", setup: async (world) => ((await registered(world, "parity-gone")), { args: { id: "parity-gone" } }) },
  agent_rotate_key: { as: "owner", setup: async (world) => ((await registered(world, "parity-rotated")), { args: { id: "parity-rotated" } }) },
  event_emit: { args: { type: "parity.ping", payload: { n: 1 } } },
  event_list: {
    setup: async (world) => {
      await writeNote(world, "a note that makes an event");
      await world.rest("bob", "/events", { body: { type: "parity.ping", payload: { n: 1 } } });
      return {};
    },
    args: { since: "seq:0", limit: 30 },
  },
  event_wait: { args: { types: ["never.happens"], timeout: 1 } },
  plugin_install: { args: { host: "codex", transport: "http" } },
  graph_link: {
    setup: async (world) => ({ args: { src: await writeNote(world, "an edge's source note"), dst: await writeNote(world, "an edge's target note"), rel: "supports", note: "parity" } }),
  },
  graph_list: {
    setup: async (world) => {
      await world.rest("alice", "/graph/edge", { body: { src: await writeNote(world, "a claim"), dst: await writeNote(world, "its evidence", "bob"), rel: "supports" } });
      return {};
    },
    args: { limit: 5 },
  },
  graph_node: {
    setup: async (world) => {
      const src = await writeNote(world, "a node with an edge");
      await world.rest("alice", "/graph/edge", { body: { src, dst: await writeNote(world, "the node's neighbour"), rel: "relates_to" } });
      return { args: { node_id: src } };
    },
  },
  memory_related: {
    setup: async (world) => {
      const src = await writeNote(world, "a seed with a supporter");
      await world.rest("alice", "/graph/edge", { body: { src: await writeNote(world, "the seed's supporter"), dst: src, rel: "supports" } });
      return { args: { id: src, include_similar: false } };
    },
  },
  memory_central: {
    setup: async (world) => {
      await world.rest("alice", "/graph/edge", { body: { src: await writeNote(world, "a leaf"), dst: await writeNote(world, "the hub"), rel: "supports" } });
      return {};
    },
    args: { limit: 5 },
  },
  pulse_get: {
    setup: async (world) => {
      await world.rest("alice", "/graph/edge", { body: { src: await writeNote(world, "a pulse leaf"), dst: await writeNote(world, "a pulse hub"), rel: "derived_from" } });
      return {};
    },
  },
  blueprint_save: { args: { name: "parity-plan", title: "Parity plan", project: null, nodes: [{ id: "first", title: "First" }, { id: "second", title: "Second", needs: ["first"] }] } },
  blueprint_list: {
    setup: async (world) => (await world.rest("alice", "/blueprints", { body: { name: "listed-plan", title: "Listed", project: null, nodes: [{ id: "one", title: "One" }] } }), {}),
    args: { limit: 5 },
  },
  blueprint_get: {
    setup: async (world) => {
      await parityProject(world, false);
      await world.rest("alice", "/blueprints", { body: { name: "read-plan", title: "Read", project: "parity-project", nodes: [{ id: "one", title: "One" }] } });
      return {};
    },
    args: { name: "read-plan", project: "parity-project" },
  },
  blueprint_instantiate: {
    setup: async (world) => (await savePair(world), {}),
    args: { name: "run-plan", project: null, params: { who: "parity" } },
  },
  blueprint_run_list: {
    setup: async (world) => (await startPair(world), {}),
    args: { limit: 5 },
  },
  blueprint_run_get: { setup: async (world) => ({ args: { run_id: await startPair(world) } }) },
  blueprint_run_cancel: { setup: async (world) => ({ args: { run_id: await startPair(world) } }) },
  compile_run: { args: { project: null, commit: "parity", units: [codeUnit("parse"), codeUnit("render", 1, ["parse"])] } },
  compile_check: {
    setup: async (world) => (await compiled(world, [codeUnit("parse"), codeUnit("render")]), {}),
    args: {
      project: null,
      units: [
        { path: "src/parity.ts", symbol: "parse", sha: "1".repeat(64) },
        { path: "src/parity.ts", symbol: "render", sha: "2".repeat(64) },
        { path: "src/other.ts", symbol: "", sha: "3".repeat(64) },
      ],
    },
  },
  // Alice has no current project: the reads look at global code.
  compile_anchors: { setup: async (world) => (await compiled(world, [codeUnit("parse"), codeUnit("render")]), {}), args: { limit: 5 } },
  compile_stale: { setup: staleNote, args: { limit: 5 } },
  archivist_lease: { as: "archivist", args: { holder: "parity-archivist", ttl_seconds: 60 } },
  archivist_status: {
    as: "owner",
    setup: async (world) => (await world.rest("archivist", "/archivist/lease", { body: { holder: "parity-archivist", ttl_seconds: 60 } }), {}),
  },
  archivist_state_put: { as: "archivist", args: { key: "parity:put", value: { seen: 3 } } },
  archivist_state_get: {
    as: "archivist",
    setup: async (world) => {
      await world.rest("archivist", "/archivist/state/parity:get", { method: "PUT", body: { value: "kept" } });
      return { args: { key: "parity:get" } };
    },
  },
  archivist_set_confidence: { as: "archivist", setup: async (world) => ({ args: { updates: [{ id: await writeNote(world, "a note that fades"), confidence: 0.5 }] } }) },
  archivist_merge: {
    as: "archivist",
    setup: async (world) => ({
      args: {
        sources: [
          { id: await writeNote(world, "builds take four minutes"), version: 1 },
          { id: await writeNote(world, "builds take about four minutes", "bob"), version: 1 },
        ],
        content: "Builds take about four minutes.",
      },
    }),
  },
  log_write: { as: "archivist", args: { source: "archivist", action: "parity", message: "a pass", details: { entries: 2 } } },
  log_list: {
    as: "owner",
    setup: async (world) => (await world.rest("archivist", "/logs", { body: { source: "archivist", action: "parity", message: "a pass", details: { entries: 2 } } }), {}),
    args: { limit: 5 },
  },
};

/**
 * What only a tool takes: `verbose` on a search, a list written as one comma-separated string. REST
 * answers the same call without `verbose`, and reads the string as its query does.
 */
const TOOL_FORMS: [string, Scenario][] = [
  ["memory_search", { setup: someNotes, args: { q: "when do deploys go out", verbose: true } }],
  ["memory_write", { args: { content: "Parity note: the whole entry on request", verbose: true } }],
  ["event_wait", { args: { types: "never.happens,also.never", timeout: 1 } }],
];

/** Refusals must match too: the same code over both transports. */
const REFUSALS: [string, Scenario][] = [
  ["memory_write", { args: { content: "a rule from an agent", type: "directive" }, refused: "FORBIDDEN" }],
  ["task_get", { args: { id: "0badc0de-0000-4000-8000-000000000000" }, refused: "NOT_FOUND" }],
  ["task_complete", { as: "bob", setup: async (world) => ({ args: { id: await claimed(world, "alice's, not bob's") } }), refused: "FORBIDDEN" }],
  ["memory_list", { args: { limit: 0 }, refused: "VALIDATION_FAILED" }],
  ["decision_get", { args: { id: "0badc0de-0000-4000-8000-000000000000" }, refused: "NOT_FOUND" }],
  ["blueprint_instantiate", { setup: async (world) => (await savePair(world), {}), args: { name: "run-plan", project: null, params: { who: 7 } }, refused: "VALIDATION_FAILED" }],
  ["blueprint_run_cancel", { as: "bob", setup: async (world) => ({ args: { run_id: await startPair(world) } }), refused: "FORBIDDEN" }],
  [
    "decision_record",
    {
      as: "bob",
      setup: async (world) => {
        const superseded = await newDecision(world, "Parity: tabs");
        await newDecision(world, "Parity: spaces", { supersedes: superseded });
        return { args: { decision: "Parity: both", rationale: "why not", supersedes: superseded, project: null } };
      },
      refused: "CONFLICT",
    },
  ],
  ["log_list", { args: {}, refused: "FORBIDDEN" }],
  ["compile_stale", { args: { project: "nowhere" }, refused: "NOT_FOUND" }],
  [
    "archivist_set_confidence",
    {
      as: "archivist",
      setup: async (world) => ({
        args: { updates: [{ id: (await world.rest("owner", "/memory", { body: { content: "Parity rule: never decay me", type: "directive", project: null } })).id, confidence: 0.1 }] },
      }),
      refused: "VALIDATION_FAILED",
    },
  ],
];

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const KEY = /cairn_[A-Za-z0-9_-]{20,}/g;
const URL_OF_SERVER = /http:\/\/127\.0\.0\.1:\d+/g;

/** Masks what is random by design, so two servers that did the same things compare equal. */
function mask(value: unknown, key = ""): unknown {
  if (key === "next_cursor" && typeof value === "string") return "<cursor>";
  // Measured durations: how long a claim took depends on the clock, not on the transport.
  if (key === "median_seconds" && typeof value === "number") return "<duration>";
  if (typeof value === "string") return value.replace(UUID, "<id>").replace(TIME, "<time>").replace(KEY, "<key>").replace(URL_OF_SERVER, "<url>");
  if (Array.isArray(value)) return value.map((item) => mask(item));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, mask(item, name)]));
  return value;
}

const tools = new Map(mcpTools(catalogue, "all").map((tool) => [tool.operation.name, tool]));

/** The REST answer in the shape the tool answers with. */
async function viaRest(world: World, operation: Operation, as: Credentials, args: Record<string, unknown>): Promise<unknown> {
  const layout = inputLayout(operation);
  let path = operation.http.path;
  const { verbose, ...given } = args;
  // A tool with a compact form answers with it unless asked for `verbose`: over REST that is `compact=true`.
  const rest: Record<string, unknown> = tools.get(operation.name)?.compacts && verbose !== true ? { ...given, compact: true } : given;
  for (const name of layout.path) {
    path = path.replace(`:${name}`, encodeURIComponent(String(rest[name])));
    delete rest[name];
  }
  let body: unknown;
  if (layout.inBody) body = rest;
  else {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(rest)) query.set(name, Array.isArray(value) ? value.join(",") : String(value));
    if (query.size > 0) path += `?${query.toString()}`;
  }
  const response = await world.server.request<Record<string, unknown>>(path, { as, method: operation.http.method, ...(body === undefined ? {} : { body }) });
  if (response.status >= 400) return { refused: response.body.code };
  const shape = tools.get(operation.name)?.shape;
  const payload = response.status === 204 ? undefined : response.body;
  if (shape === "list") return { items: payload, next_cursor: response.headers.get("x-next-cursor") };
  if (shape === "wrapped") return { result: payload ?? null };
  return payload ?? null;
}

async function viaMcp(client: Client, operation: Operation, args: Record<string, unknown>): Promise<unknown> {
  const tool = tools.get(operation.name);
  const result = await client.callTool({ name: tool?.name ?? operation.name, arguments: args });
  if (result.isError) return { refused: (result.structuredContent as { code: string }).code };
  return result.structuredContent ?? null;
}

/** A new server with alice and bob registered: the world of one scenario over one transport. */
async function newWorld(): Promise<World> {
  const server = await startTestServer({ DIRECTIVE_WRITERS: "human", FEEDS_ALLOW_PRIVATE: "true" });
  const agents = {
    alice: await server.agent("parity-alice"),
    bob: await server.agent("parity-bob"),
    owner: server.owner,
    archivist: server.archivist,
  };
  const clients = new Map<string, Client>();
  return {
    server,
    agents,
    async rest<T>(as: Who | Credentials, path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
      const credentials = typeof as === "string" ? agents[as] : as;
      const response = await server.request<T>(path, { as: credentials, ...options });
      if (response.status >= 300) throw new Error(`setup ${options.method ?? (options.body ? "POST" : "GET")} ${path}: ${response.status} ${response.text}`);
      return response.body;
    },
    async client(as) {
      let client = clients.get(as.agentId);
      if (!client) {
        client = await mcpClient(server, as);
        clients.set(as.agentId, client);
      }
      return client;
    },
    async close() {
      for (const client of clients.values()) await client.close();
      await server.close();
    },
  };
}

const test = base
  // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter, which must be a pattern
  .extend("restWorld", async ({}, { onCleanup }) => {
    const world = await newWorld();
    onCleanup(() => world.close());
    return world;
  })
  // eslint-disable-next-line no-empty-pattern -- as above
  .extend("mcpWorld", async ({}, { onCleanup }) => {
    const world = await newWorld();
    onCleanup(() => world.close());
    return world;
  });

describe("REST and MCP parity", () => {
  it("has a scenario for every operation of the catalogue, or says why it has no tool", () => {
    for (const operation of catalogue) {
      const covered = operation.name in SCENARIOS || operation.name in REST_ONLY;
      expect(covered, `${operation.name} has no parity scenario`).toBe(true);
      expect(tools.has(operation.name), operation.name).toBe(!(operation.name in REST_ONLY));
    }
  });

  // Each scenario has two servers of its own: a few run at once (on PostgreSQL most of a scenario is waiting for the database).
  test.concurrent.for([...Object.entries(SCENARIOS), ...TOOL_FORMS, ...REFUSALS])("%s answers the same over REST and MCP", async ([name, scenario], { restWorld, mcpWorld }) => {
    const operation = catalogue.find((candidate) => candidate.name === name) as Operation;
    const prepare = (world: World): Promise<Prepared> => scenario.setup?.(world) ?? Promise.resolve({});
    const [restPrepared, mcpPrepared] = await Promise.all([prepare(restWorld), prepare(mcpWorld)]);
    const who = scenario.as ?? "alice";
    const mcpClientOfCaller = await mcpWorld.client(mcpPrepared.as ?? mcpWorld.agents[who]);
    // The two worlds share nothing, so the compared calls may run side by side.
    const [restAnswer, mcpAnswer] = await Promise.all([
      viaRest(restWorld, operation, restPrepared.as ?? restWorld.agents[who], restPrepared.args ?? scenario.args ?? {}),
      viaMcp(mcpClientOfCaller, operation, mcpPrepared.args ?? scenario.args ?? {}),
    ]);
    if (scenario.refused) expect(restAnswer).toEqual({ refused: scenario.refused });
    else expect((restAnswer as { refused?: string } | null)?.refused).toBeUndefined();
    expect(mask(mcpAnswer)).toEqual(mask(restAnswer));
  });
});
