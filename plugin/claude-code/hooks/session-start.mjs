// SessionStart: put the Cairn context pack (last handoff, memory changes, unread messages, held
// tasks, directives) in front of the model. Peeks, so the MCP session_start call still sees the delta.
import { cairn, hookInput, identity, remember, sessionFile } from "./cairn.mjs";

const input = hookInput();
remember(sessionFile(input.session_id, "start"), new Date().toISOString());
const pack = await cairn(identity(input), "/sessions/handoff?peek=true");
if (pack) {
  const lines = ["# Cairn: where your team left off"];
  if (pack.last_handoff) {
    lines.push(`Last handoff (${pack.last_handoff.created_at}): ${pack.last_handoff.summary}`);
    if (pack.last_handoff.next_steps?.length) lines.push(`Next steps: ${pack.last_handoff.next_steps.join("; ")}`);
  }
  for (const directive of pack.directives ?? []) lines.push(`Directive: ${directive.content}`);
  for (const task of pack.claimed_tasks ?? []) lines.push(`You hold task ${task.id}: ${task.title}`);
  for (const message of pack.unread_messages ?? []) lines.push(`Unread from ${message.from}: ${message.subject || message.body.slice(0, 200)}`);
  const changes = pack.memory_delta_since_last_seen?.length ?? 0;
  if (changes > 0) lines.push(`${changes}${pack.delta_truncated ? "+" : ""} memory entries changed since your last session: call session_start for them.`);
  lines.push("Follow the directives. Search Cairn (memory_search) before starting work, and call session_handoff before you stop.");
  process.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: lines.join("\n") } })}\n`);
}
