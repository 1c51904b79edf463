// How times, ids and numbers read in the UI.

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : absolute.format(date);
}

/** "12 s ago", "5 min ago", "3 h ago", "4 d ago"; "in 2 h" for the future. */
export function relativeTime(iso: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now - then) / 1000);
  const size = Math.abs(seconds);
  let text: string;
  if (size < 5) return "just now";
  if (size < 60) text = `${size} s`;
  else if (size < 3600) text = `${Math.floor(size / 60)} min`;
  else if (size < 86_400) text = `${Math.floor(size / 3600)} h`;
  else text = `${Math.floor(size / 86_400)} d`;
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

export const shortId = (id: string): string => id.slice(0, 8);

export const percent = (value: number): string => `${Math.round(value * 100)}%`;

export const fixed = (value: number, digits = 3): string => value.toFixed(digits);

export function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

/** Comma- or newline-separated words, trimmed, without empties or repeats. */
export function splitList(text: string): string[] {
  return [...new Set(text.split(/[,\n]/).map((part) => part.trim()).filter((part) => part !== ""))];
}

/** A `<input type="datetime-local">` value as RFC 3339 UTC, or null when empty. */
export function localInputToIso(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** RFC 3339 as a `<input type="datetime-local">` value in local time. */
export function isoToLocalInput(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
