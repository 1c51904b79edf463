// Shared by the hooks: who this project's agent is, a bounded call to the Cairn server, the hook's
// input and the session's notes. A hook must never hold up the host or fail a session because
// Cairn is down or not set up: every failure is silence.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The hook's JSON input on stdin ({} when there is none). */
export function hookInput() {
  try {
    return JSON.parse(readFileSync(0, "utf8") || "{}");
  } catch {
    return {};
  }
}

const readKey = (file) => {
  try {
    return readFileSync(file, "utf8").trim() || null;
  } catch {
    return null;
  }
};

/**
 * The project's agent: the CAIRN_* environment when set, else what onboarding recorded for the
 * project directory (or the nearest directory above it) in ~/.cairn/connections.tsv — the same
 * record `cairn mcp` uses, so the hooks and the MCP server are the same agent with nothing exported.
 */
export function identity(input) {
  try {
    return identityOf(input);
  } catch {
    // An unreadable record is no agent.
    return null;
  }
}

function identityOf(input) {
  const env = process.env;
  if (env.CAIRN_AGENT_ID && (env.CAIRN_API_KEY || env.CAIRN_KEY_FILE)) {
    const apiKey = env.CAIRN_API_KEY || readKey(env.CAIRN_KEY_FILE);
    return apiKey ? { url: env.CAIRN_URL || "http://127.0.0.1:8470", agentId: env.CAIRN_AGENT_ID, apiKey } : null;
  }
  const file = join(env.CAIRN_DIR || join(homedir(), ".cairn"), "connections.tsv");
  if (!existsSync(file)) return null;
  const byDir = new Map();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [dir, agentId, url, keyFile] = line.split("\t");
    if (dir && agentId && url && keyFile) byDir.set(dir, { agentId, url, keyFile });
  }
  for (let dir = resolve(env.CLAUDE_PROJECT_DIR || input.cwd || process.cwd()); ; dir = dirname(dir)) {
    const found = byDir.get(dir);
    if (found) {
      const apiKey = readKey(found.keyFile);
      return apiKey ? { url: found.url, agentId: found.agentId, apiKey } : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

// Claude Code gives a hook 5 s (hooks.json): each request gets at most 2.5 s, and all of a hook's
// requests together end within 4 s of its start, so the process is gone before it is killed.
const REQUEST_MS = 2500;
const deadline = Date.now() + 4000;

/** The answer of a request, `{status, body}` (body null when not JSON), or null when it got none (no agent, no server, slow). */
export async function request(who, path, body) {
  const remaining = Math.min(REQUEST_MS, deadline - Date.now());
  if (!who || remaining < 50) return null;
  try {
    const response = await fetch(`${who.url.replace(/\/+$/, "")}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "X-Agent-ID": who.agentId, "X-API-Key": who.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(remaining),
    });
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    return { status: response.status, body: answer };
  } catch {
    return null;
  }
}

/** The JSON answer of a request, or null on any problem (no agent, no server, slow, refused). */
export async function cairn(who, path, body) {
  const answer = await request(who, path, body);
  return answer && answer.status >= 200 && answer.status < 300 ? answer.body : null;
}

/** Where a session's notes (its start, its compaction summaries) live between its hooks. */
export function sessionFile(sessionId, kind) {
  const dir = join(tmpdir(), "cairn-claude-code");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${String(sessionId || "unknown").replace(/[^A-Za-z0-9_-]/g, "_")}.${kind}`);
}

export function remember(path, value) {
  try {
    writeFileSync(path, value, { mode: 0o600 });
  } catch {
    // Only the session's end depends on it.
  }
}

export function recall(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
