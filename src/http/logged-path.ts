import type { Request } from "express";

/**
 * A request's path as logs and metrics record it: never its query string, which on the feed and
 * merkle routes may carry an API key (CONTRACT §2.2, §15) and elsewhere whatever a client put there.
 * Every log line that names a request takes its path from here.
 */
export const loggedPath = (request: Request): string => request.originalUrl.split("?")[0] ?? "";
