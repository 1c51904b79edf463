// Stop: if this session has not handed off to Cairn, ask the model (once) to do it before stopping.
import { cairnGet, hookInput, recall, sessionMarker } from "./cairn.mjs";

const input = hookInput();
// Already continuing because of a Stop hook: never loop.
if (!input.stop_hook_active) {
  const started = recall(sessionMarker(input.session_id));
  const pack = await cairnGet("/sessions/handoff?peek=true");
  const handedOff = pack?.last_handoff && started !== null && pack.last_handoff.created_at >= started;
  if (pack && started !== null && !handedOff) {
    const reason =
      "Before you stop, hand off to your team in Cairn: call session_handoff with a summary of this session, " +
      "in_progress (task ids still open) and next_steps, after writing anything they should know with memory_write.";
    process.stdout.write(`${JSON.stringify({ decision: "block", reason })}\n`);
  }
}
