// Shared by the hooks: a bounded call to the Cairn server, and the hook's input. A hook must never
// hold up the host or fail a session because Cairn is down: every failure is silence.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const url = (process.env.CAIRN_URL || "http://127.0.0.1:8470").replace(/\/+$/, "");

/** The JSON answer of a GET, or null on any problem (no credentials, no server, slow, refused). */
export async function cairnGet(path) {
  const agentId = process.env.CAIRN_AGENT_ID;
  const apiKey = process.env.CAIRN_API_KEY;
  if (!agentId || !apiKey) return null;
  try {
    const response = await fetch(`${url}${path}`, {
      headers: { "X-Agent-ID": agentId, "X-API-Key": apiKey },
      signal: AbortSignal.timeout(2000),
    });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** The hook's JSON input on stdin ({} when there is none). */
export function hookInput() {
  try {
    return JSON.parse(readFileSync(0, "utf8") || "{}");
  } catch {
    return {};
  }
}

/** Where the session's start time is kept between its SessionStart and Stop hooks. */
export function sessionMarker(sessionId) {
  const dir = join(tmpdir(), "cairn-claude-code");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${String(sessionId || "unknown").replace(/[^A-Za-z0-9_-]/g, "_")}.start`);
}

export function remember(path, value) {
  try {
    writeFileSync(path, value, { mode: 0o600 });
  } catch {
    // Only the Stop reminder depends on it.
  }
}

export function recall(path) {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
}
