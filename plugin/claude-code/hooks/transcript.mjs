// What a session did, read from Claude Code's transcript (JSON Lines): the requests, the last
// answer, the files written. Mechanical and bounded: no model is asked, nothing is sent but this.
import { readFileSync, statSync } from "node:fs";

const MAX_READ = 4 * 1024 * 1024;
const clip = (text, length) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

const textOf = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.filter((part) => part && part.type === "text" && typeof part.text === "string").map((part) => part.text).join("\n")
      : "";

/** The session so far, or null when there is no readable transcript. */
export function summarise(transcriptPath) {
  let lines;
  try {
    const size = statSync(transcriptPath).size;
    // A long session's tail holds what matters; the file itself may be large.
    const text = readFileSync(transcriptPath, "utf8");
    lines = (size > MAX_READ ? text.slice(-MAX_READ) : text).split("\n");
  } catch {
    return null;
  }
  const requests = [];
  const files = new Set();
  let answer = "";
  for (const line of lines) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const message = entry && entry.message;
    if (!message) continue;
    if (entry.type === "user" && typeof message.content === "string" && !message.content.startsWith("<")) requests.push(message.content);
    if (entry.type === "assistant" && Array.isArray(message.content)) {
      const said = textOf(message.content);
      if (said.trim()) answer = said;
      for (const part of message.content) {
        const path = part && part.type === "tool_use" && part.input && (part.input.file_path || part.input.notebook_path);
        if (typeof path === "string") files.add(path);
      }
    }
  }
  return {
    requests: requests.slice(-5).map((request) => clip(request.trim(), 300)),
    last_answer: clip(answer.trim(), 1500),
    files: [...files].slice(-30),
  };
}
