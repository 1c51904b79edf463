// ISO 8601 durations for timer gates (CONTRACT §17: `after`, at most 30 days). Only the parts
// that have a fixed length: weeks, days, hours, minutes and seconds. Months and years have none.

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

export const MAX_TIMER_MS = 30 * 86_400_000;

/** Milliseconds of a duration such as `PT2H` or `P1DT12H`; null when it is not one or is empty. */
export function durationMs(value: string): number | null {
  const match = DURATION.exec(value);
  if (!match || value === "P" || value.endsWith("T")) return null;
  const [, weeks, days, hours, minutes, seconds] = match;
  const parts = [weeks, days, hours, minutes, seconds];
  if (parts.every((part) => part === undefined)) return null;
  const number = (part: string | undefined): number => (part === undefined ? 0 : Number(part));
  return Math.round(((number(weeks) * 7 + number(days)) * 86_400 + number(hours) * 3600 + number(minutes) * 60 + number(seconds)) * 1000);
}
