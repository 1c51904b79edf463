/** All timestamps are RFC 3339 UTC with milliseconds, so string order is time order. */
export const now = (): string => new Date().toISOString();

export const addSeconds = (timestamp: string, seconds: number): string =>
  new Date(Date.parse(timestamp) + seconds * 1000).toISOString();
