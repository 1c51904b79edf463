// PreCompact: before the conversation is summarised away, keep a mechanical summary of it (the
// requests, the last answer, the files written) with the session, for the session's end to hand
// on with the handoff; and send what the session said since its last capture to Cairn as a
// capture, for the archivist to distil into memory.
import { hookInput, identity, recall, remember, sessionFile } from "./cairn.mjs";
import { captureSession } from "./capture.mjs";
import { summarise } from "./transcript.mjs";

const input = hookInput();
const summary = input.transcript_path ? summarise(input.transcript_path) : null;
if (summary) {
  const file = sessionFile(input.session_id, "compactions");
  const earlier = (() => {
    try {
      return JSON.parse(recall(file) ?? "[]");
    } catch {
      return [];
    }
  })();
  earlier.push({ at: new Date().toISOString(), trigger: input.trigger ?? "auto", ...summary });
  remember(file, JSON.stringify(earlier.slice(-10)));
}
await captureSession(identity(input), input, `before a compaction (${input.trigger ?? "auto"})`);
