// What a session did, read from Claude Code's transcript (JSON Lines): the requests, the last
// answer, the files written (`summarise`), and the conversation as readable text from a point on
// (`linesSince`, `render`) for a capture. Mechanical and bounded: no model is asked.
import { Buffer } from "node:buffer";
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";

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

// A capture keeps the most recent 64 KiB of text, far less than the JSON it comes from: more than
// this much new transcript is read from its end.
const MAX_DELTA_READ = 16 * 1024 * 1024;

/**
 * The transcript's lines from byte `from` on, the byte they were read from (`start`) and `end`:
 * the byte after the last one read. A last line still being written (no newline, not yet JSON) is
 * left for the next time. A file shorter than `from` is another transcript, read from its start.
 * Null when it cannot be read.
 */
export function linesSince(transcriptPath, from) {
  let fd;
  try {
    fd = openSync(transcriptPath, "r");
    const size = fstatSync(fd).size;
    let start = Number.isSafeInteger(from) && from >= 0 && from <= size ? from : 0;
    const clipped = size - start > MAX_DELTA_READ;
    if (clipped) start = size - MAX_DELTA_READ;
    const buffer = Buffer.alloc(size - start);
    for (let read = 0; read < buffer.length; ) {
      const got = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (got === 0) break;
      read += got;
    }
    let end = buffer.lastIndexOf(0x0a) + 1;
    const lines = buffer.subarray(0, end).toString("utf8").split("\n");
    const rest = buffer.subarray(end).toString("utf8");
    if (rest.trim()) {
      try {
        JSON.parse(rest);
        lines.push(rest);
        end = buffer.length;
      } catch {
        // Half written: the next capture has it whole.
      }
    }
    // Read from the middle of the file: its first line is probably a piece of one.
    if (clipped) lines.shift();
    return { lines, start, end: start + end };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const TEXT_CHARS = 8000;
const TOOL_INPUT_CHARS = 200;
const TOOL_RESULT_CHARS = 400;
// The inputs that say what a tool call was about, shown before (or instead of) the rest.
const TOOL_KEYS = ["file_path", "notebook_path", "path", "command", "pattern", "glob", "url", "query", "description", "subagent_type", "skill"];

const cut = (text, length) => (text.length > length ? `${text.slice(0, length)}… [${text.length - length} more characters]` : text);

/** A user's words without what Claude Code wraps around them: reminders, local command output; a slash command as typed. */
function userWords(text) {
  const command = /<command-name>([\s\S]*?)<\/command-name>/.exec(text);
  if (command) {
    const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim();
    return `${command[1].trim()}${args ? ` ${args}` : ""}`;
  }
  return text
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "")
    .replace(/<local-command-(?:stdout|stderr|caveat)>[\s\S]*?<\/local-command-(?:stdout|stderr|caveat)>/g, "")
    .trim();
}

function toolInput(input) {
  if (!input || typeof input !== "object") return "";
  const shown = TOOL_KEYS.filter((key) => typeof input[key] === "string" && input[key].trim()).map((key) => `${key}: ${input[key].trim().replace(/\s+/g, " ")}`);
  const text = shown.length ? shown.join(", ") : JSON.stringify(input);
  return cut(text === "{}" ? "" : text, TOOL_INPUT_CHARS);
}

function toolResult(content) {
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((part) => (part && part.type === "text" && typeof part.text === "string" ? part.text : part && part.type === "image" ? "[image]" : "")).join("\n") : "";
  return cut(text.trim().replace(/\n{3,}/g, "\n\n"), TOOL_RESULT_CHARS);
}

/**
 * Transcript lines as a conversation a reader (the archivist) can follow: the user's and the
 * assistant's words, each tool call with its main inputs, each tool's output cut short. Thinking,
 * subagents' own turns, Claude Code's notes and the compaction's summary (the text before it was
 * captured already) are left out. "" when there is nothing to say.
 */
export function render(lines) {
  const out = [];
  for (const line of lines) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const message = entry && entry.message;
    if (!message || entry.isSidechain || entry.isMeta || entry.isCompactSummary) continue;
    const parts = typeof message.content === "string" ? [{ type: "text", text: message.content }] : Array.isArray(message.content) ? message.content : [];
    for (const part of parts) {
      if (!part || typeof part !== "object") continue;
      if (entry.type === "user") {
        if (part.type === "text" && typeof part.text === "string") {
          const words = userWords(part.text);
          if (words) out.push(`User: ${cut(words, TEXT_CHARS)}`);
        } else if (part.type === "tool_result") {
          const result = toolResult(part.content);
          out.push(`  ${part.is_error ? "error" : "result"}: ${result || "(empty)"}`);
        } else if (part.type === "image") {
          out.push("User: [image]");
        }
      } else if (entry.type === "assistant") {
        if (part.type === "text" && typeof part.text === "string" && part.text.trim()) out.push(`Assistant: ${cut(part.text.trim(), TEXT_CHARS)}`);
        else if (part.type === "tool_use") {
          const input = toolInput(part.input);
          out.push(`  tool ${typeof part.name === "string" ? part.name : "?"}${input ? ` (${input})` : ""}`);
        }
      }
    }
  }
  return out.join("\n");
}
