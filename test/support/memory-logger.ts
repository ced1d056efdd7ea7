/** A Logger that keeps its lines (parsed) for a test to look at. */
import { createLogger, type Level, type Logger } from "../../src/log.ts";

export interface LoggedLine {
  level: Level;
  time: string;
  message: string;
  data?: Record<string, unknown>;
  [context: string]: unknown;
}

export function memoryLogger(level: Level = "debug"): { logger: Logger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const logger = createLogger({ level, write: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}
