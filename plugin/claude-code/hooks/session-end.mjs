// SessionEnd: the session is really over. If the model did not hand off during it, hand off on its
// behalf from the transcript, so the next session (or a teammate) learns where this one stopped.
// Nothing here can reach the model any more, so there is nothing to remind: the handoff is made.
// Alongside, what the session said since its last capture goes to Cairn as a capture.
import { cairn, hookInput, identity, recall, sessionFile } from "./cairn.mjs";
import { captureSession } from "./capture.mjs";
import { summarise } from "./transcript.mjs";

const input = hookInput();
const who = identity(input);
const capture = captureSession(who, input, `at its end (${input.reason ?? "exit"})`);
const started = recall(sessionFile(input.session_id, "start"))?.trim() ?? null;
const pack = await cairn(who, "/sessions/handoff?peek=true");
const handedOff = pack?.last_handoff && started !== null && pack.last_handoff.created_at >= started;
if (pack && !handedOff) {
  const now = input.transcript_path ? summarise(input.transcript_path) : null;
  let compactions = [];
  try {
    compactions = JSON.parse(recall(sessionFile(input.session_id, "compactions")) ?? "[]");
  } catch {
    compactions = [];
  }
  const requests = [...compactions.flatMap((part) => part.requests ?? []), ...(now?.requests ?? [])].slice(-5);
  const files = [...new Set([...compactions.flatMap((part) => part.files ?? []), ...(now?.files ?? [])])].slice(-20);
  const parts = [`Session ended (${input.reason ?? "exit"}) without a handoff; recorded by the Claude Code plugin.`];
  if (requests.length) parts.push(`Asked: ${requests.join(" | ")}`);
  if (now?.last_answer) parts.push(`Last answer: ${now.last_answer}`);
  if (files.length) parts.push(`Files written: ${files.join(", ")}`);
  await cairn(who, "/sessions/handoff", {
    summary: parts.join("\n").slice(0, 8000),
    in_progress: (pack.claimed_tasks ?? []).map((task) => task.id),
    next_steps: [],
    host: "claude-code",
  });
}
await capture;
