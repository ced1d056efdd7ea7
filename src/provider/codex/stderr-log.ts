/**
 * codex's stderr lines (already redacted by StderrRing) into the daemon's log, at a level read from
 * codex's own tracing tag, and bounded, so a chatty (or looping) codex cannot flood the log. At most `maxLines` lines
 * per `windowMs`; the lines over it are counted and the count logged once the window ends (or at
 * `flush`), so an operator sees that lines were left out and how many.
 */
import type { Level, Logger } from "../../log.ts";

export interface StderrLogOptions {
  log: Logger["log"];
  /** Lines logged per window (default 50). */
  maxLines?: number;
  /** Default one minute. */
  windowMs?: number;
  /** Milliseconds; default `Date.now` (tests inject a clock). */
  now?: () => number;
  /** Added to every line's data (e.g. the child's pid). */
  context?: Record<string, unknown>;
}

// codex's tracing output: `2026-01-01T00:00:00.000000Z ERROR target: message` (ANSI stripped).
const TRACING_LEVEL = /^\d{4}-\d\d-\d\dT\S+\s+(ERROR|WARN|INFO|DEBUG|TRACE)\s/;

/**
 * codex tags as ERROR what is a problem for codex (no bubblewrap, an untrusted project), not an
 * error of codexd's: it is a warning in codexd's log. Untagged lines (continuations, codex's own
 * `WARNING:` notes) are information.
 */
export function stderrLevel(line: string): Level {
  const tag = TRACING_LEVEL.exec(line)?.[1];
  if (tag === "ERROR" || tag === "WARN") return "warn";
  if (tag === "DEBUG" || tag === "TRACE") return "debug";
  return line.startsWith("WARNING:") ? "warn" : "info";
}

export class StderrLog {
  readonly #options: StderrLogOptions;
  readonly #maxLines: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  #windowStart: number | undefined;
  #logged = 0;
  #suppressed = 0;

  constructor(options: StderrLogOptions) {
    this.#options = options;
    this.#maxLines = options.maxLines ?? 50;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  line(line: string): void {
    const now = this.#now();
    if (this.#windowStart === undefined || now - this.#windowStart >= this.#windowMs) {
      this.flush();
      this.#windowStart = now;
      this.#logged = 0;
    }
    if (this.#logged >= this.#maxLines) {
      this.#suppressed++;
      return;
    }
    this.#logged++;
    this.#options.log(stderrLevel(line), "codex stderr", { ...this.#options.context, line });
  }

  /** Logs how many lines were left out since the last report, if any. */
  flush(): void {
    if (this.#suppressed === 0) return;
    this.#options.log(
      "warn",
      `codex stderr: ${this.#suppressed} lines not logged (over ${this.#maxLines} per ` +
        `${this.#windowMs / 1000} s)`,
      { ...this.#options.context, suppressed: this.#suppressed },
    );
    this.#suppressed = 0;
  }
}
