// Captures (CONTRACT §13): before a compaction and at the session's end, the conversation since the
// session's last capture goes to Cairn (POST /captures) as readable text, for the archivist to
// distil into memory. The server redacts secrets before it stores anything. How far the transcript
// was captured is kept with the session's other notes, so each capture holds only what is new;
// a capture that fails is sent again (with what follows it) the next time. CAIRN_CAPTURE=off
// turns this off.
import { Buffer } from "node:buffer";
import { recall, remember, request, sessionFile } from "./cairn.mjs";
import { linesSince, render } from "./transcript.mjs";

// The server's CAPTURE_MAX_BYTES by default; a server set lower says its limit in its 413.
const MAX_BYTES = 65536;
const MIN_BYTES = 1024;
const CUT = "[… the earlier part of this stretch of the session was cut to fit …]\n";

/** Whether the user turned captures off (CAIRN_CAPTURE=off, or 0, false, no). */
export const capturesOff = () => /^(off|0|false|no)$/i.test((process.env.CAIRN_CAPTURE ?? "").trim());

/**
 * `header` and `body` within `maxBytes` of UTF-8: when they do not fit, the most recent part of
 * the body, starting at a character and, where there is one, at a line (so no secret is kept
 * without the part that makes it recognisable, nor a private key's body without its armour).
 */
export function fit(header, body, maxBytes) {
  const whole = `${header}\n\n${body}`;
  if (Buffer.byteLength(whole, "utf8") <= maxBytes) return whole;
  const lead = `${header}\n\n${CUT}`;
  const bytes = Buffer.from(body, "utf8");
  let start = Math.max(0, bytes.length - Math.max(0, maxBytes - Buffer.byteLength(lead, "utf8")));
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  const newline = start > 0 && bytes[start - 1] !== 0x0a ? bytes.indexOf(0x0a, start) : -1;
  if (newline !== -1 && newline + 1 < bytes.length) start = newline + 1;
  let kept = bytes.subarray(start).toString("utf8");
  const keyEnd = /-----END [A-Z0-9 ]*PRIVATE KEY-----/.exec(kept);
  const keyBegin = kept.indexOf("-----BEGIN");
  if (keyEnd && (keyBegin === -1 || keyBegin > keyEnd.index)) kept = kept.slice(keyEnd.index + keyEnd[0].length).replace(/^\n/, "");
  return lead + kept;
}

function captured(stateFile) {
  try {
    const state = JSON.parse(recall(stateFile) ?? "null");
    return state && typeof state.transcript === "string" && Number.isSafeInteger(state.offset) ? state : null;
  } catch {
    return null;
  }
}

/**
 * Sends the session's transcript since its last capture (all of it the first time) as a capture
 * in the agent's current project; nothing when there is nothing new. `moment` says when, for the
 * reader ("before a compaction (auto)"). Never throws, never prints.
 */
export async function captureSession(who, input, moment) {
  try {
    if (!who || capturesOff() || !input.session_id || typeof input.transcript_path !== "string") return;
    const stateFile = sessionFile(input.session_id, "captured");
    const state = captured(stateFile);
    const from = state && state.transcript === input.transcript_path ? state.offset : 0;
    const delta = linesSince(input.transcript_path, from);
    if (!delta) return;
    const done = () => remember(stateFile, JSON.stringify({ transcript: input.transcript_path, offset: delta.end, at: new Date().toISOString() }));
    const body = render(delta.lines);
    if (!body) {
      if (delta.end !== from) done();
      return;
    }
    const sessionId = String(input.session_id).slice(0, 128);
    const where = typeof input.cwd === "string" && input.cwd ? `, in ${input.cwd.slice(0, 200)}` : "";
    const header = `Claude Code session ${sessionId}, ${moment}${where}${from > 0 && delta.start >= from ? "; continues its previous capture" : ""}:`;
    // The agent host, as the handoff names it: the machine says nothing the agent id does not.
    const host = "claude-code";
    // No project: the server puts the capture in the agent's current project, as it does the
    // agent's memory writes (its private scope when it has none).
    const post = (maxBytes) => request(who, "/captures", { content: fit(header, body, maxBytes), session_id: sessionId, host });
    let answer = await post(MAX_BYTES);
    if (answer?.status === 413) {
      const limit = Number(/exceeds (\d+) bytes/.exec(String(answer.body?.detail ?? ""))?.[1]);
      if (Number.isSafeInteger(limit) && limit >= MIN_BYTES && limit < MAX_BYTES) answer = await post(limit);
    }
    if (answer && (answer.status === 200 || answer.status === 201)) done();
  } catch {
    // A capture is worth having, never worth failing a hook for.
  }
}
