/** All timestamps are RFC 3339 UTC with milliseconds, so string order is time order. */
export const now = (): string => new Date().toISOString();

const RFC3339 =
  /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Normalises any RFC 3339 time to the canonical form; undefined when it is not one. */
export function normalizeTimestamp(input: string): string | undefined {
  if (!RFC3339.test(input)) return undefined;
  const date = new Date(input.replace(" ", "T"));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export const addSeconds = (timestamp: string, seconds: number): string =>
  new Date(Date.parse(timestamp) + seconds * 1000).toISOString();
