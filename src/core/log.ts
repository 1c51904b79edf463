export type LogLevel = "debug" | "info" | "warn" | "error";
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

// Field names that may carry a secret are dropped, whatever the caller passes.
const SECRET_FIELD = /(^|[_-])(key|secret|password|token|authorization|cookie|session)s?$/i;

function clean(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(name)) continue;
    out[name] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}

/** Structured JSON lines on stderr (stdout belongs to the MCP stdio transport). */
export function createLogger(
  level: LogLevel,
  base: LogFields = {},
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const emit = (at: LogLevel, msg: string, fields: LogFields = {}): void => {
    if (rank[at] < rank[level]) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...clean(base), ...clean(fields) })}\n`);
  };
  return {
    debug: (msg, fields) => emit("debug", msg, fields),
    info: (msg, fields) => emit("info", msg, fields),
    warn: (msg, fields) => emit("warn", msg, fields),
    error: (msg, fields) => emit("error", msg, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

export const silentLogger: Logger = createLogger("error", {}, () => undefined);
