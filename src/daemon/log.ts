/**
 * The daemon's JSON log: one line per entry on stderr,
 * `{"level","time","message","data"}`. An `Error` anywhere in `data` is written with its name,
 * message, stack, code and cause (JSON.stringify alone writes an Error as `{}`).
 */

export type Level = "debug" | "info" | "warn" | "error";

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: unknown;
  cause?: unknown;
  errors?: unknown[];
}

const MAX_CAUSE_DEPTH = 8;

/** An Error as plain JSON: name, message, stack, `code` if it has one, its cause(s), recursively. */
export function serializeError(error: Error, depth = 0): SerializedError {
  const out: SerializedError = { name: error.name, message: error.message };
  if (error.stack !== undefined) out.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (error.cause !== undefined) {
    out.cause = depth >= MAX_CAUSE_DEPTH
      ? "[cause chain too deep]"
      : error.cause instanceof Error
      ? serializeError(error.cause, depth + 1)
      : error.cause;
  }
  if (error instanceof AggregateError) {
    out.errors = error.errors.map((e) =>
      e instanceof Error && depth < MAX_CAUSE_DEPTH ? serializeError(e, depth + 1) : e
    );
  }
  return out;
}

/** A JSON.stringify replacer that writes Errors with {@link serializeError}. */
export function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? serializeError(value) : value;
}

/** One JSON log line (debug only with $CODEXD_DEBUG). */
export function formatLogLine(level: Level, message: string, data?: unknown): string {
  const line = { level, time: new Date().toISOString(), message, ...(data ? { data } : {}) };
  return JSON.stringify(line, errorReplacer);
}

export function log(level: Level, message: string, data?: unknown): void {
  if (level === "debug" && !process.env.CODEXD_DEBUG) return;
  process.stderr.write(formatLogLine(level, message, data) + "\n");
}

/** What the HTTP layer calls with an unexpected error: an `error` line with the whole Error. */
export function logUnexpected(message: string, error: unknown): void {
  log("error", message, { error });
}
