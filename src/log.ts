/**
 * codexd's one logger: JSON lines `{"level","time","message",...context,"data"}` on stderr.
 * `child({sessionId, threadId, turnId})` adds context to every line of a part of the daemon. An
 * `Error` anywhere in `data` is written with its name, message, stack, code and cause (JSON.stringify
 * alone writes an Error as `{}`).
 *
 * It sits beside errors.ts, below the provider, approval and daemon layers, so every layer logs
 * through the same type. Hand-written on purpose: the whole of it is the line format and a level
 * threshold; pino and friends bring transports, workers and their own error shape.
 */
import process from "node:process";

export type Level = "debug" | "info" | "warn" | "error";

/** Fields a child logger adds to each of its lines (sessionId, threadId, turnId, childId, …). */
export type LogContext = Record<string, unknown>;

export interface Logger {
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
  /** For callers that pick the level at run time. */
  log(level: Level, message: string, data?: unknown): void;
  /** A logger whose lines also carry `context` (added to this logger's own). */
  child(context: LogContext): Logger;
}

export interface LoggerOptions {
  /** Where a finished line goes (without its newline); stderr by default. */
  write?: (line: string) => void;
  /** The least severe level written; `info` by default. */
  level?: Level;
  /** The clock of `time` (tests fix it). */
  now?: () => Date;
  context?: LogContext;
}

const SEVERITY: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

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

/** One JSON log line; context fields never override level, time or message. */
export function formatLogLine(
  level: Level,
  message: string,
  data?: unknown,
  context: LogContext = {},
  time: Date = new Date(),
): string {
  const line: Record<string, unknown> = { level, time: time.toISOString(), message };
  for (const [key, value] of Object.entries(context)) if (!(key in line)) line[key] = value;
  if (data !== undefined) line.data = data;
  return JSON.stringify(line, errorReplacer);
}

function writeStderr(line: string): void {
  process.stderr.write(line + "\n");
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? writeStderr;
  const threshold = SEVERITY[options.level ?? "info"];
  const now = options.now ?? (() => new Date());
  const context = options.context ?? {};
  const log = (level: Level, message: string, data?: unknown): void => {
    if (SEVERITY[level] < threshold) return;
    write(formatLogLine(level, message, data, context, now()));
  };
  return {
    debug: (message, data) => log("debug", message, data),
    info: (message, data) => log("info", message, data),
    warn: (message, data) => log("warn", message, data),
    error: (message, data) => log("error", message, data),
    log,
    child: (more) => createLogger({ ...options, context: { ...context, ...more } }),
  };
}

/** A logger that writes nothing (library defaults, tests that do not look at the log). */
export const silentLogger: Logger = createLogger({ write: () => {} });
