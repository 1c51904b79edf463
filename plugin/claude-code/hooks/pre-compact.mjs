// PreCompact: before the conversation is summarised away, keep a mechanical summary of it (the
// requests, the last answer, the files written) with the session, capture-ready: the session's
// end hands it to Cairn with the handoff.
import { hookInput, recall, remember, sessionFile } from "./cairn.mjs";
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
