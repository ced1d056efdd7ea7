/**
 * A bounded ring of codex's recent stderr lines, kept so a failure message can quote what codex
 * said last. Bounded by line count and by bytes: a chatty codex must not grow the daemon's memory.
 */

// ECMA-48 CSI and OSC sequences; codex's tracing output colours every line.
// deno-lint-ignore no-control-regex
const ANSI_PATTERN = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, "");
}

export interface StderrRingOptions {
  /** Most lines kept (default 200). */
  maxLines?: number;
  /** Most UTF-16 code units kept over all lines (default 64 KiB). */
  maxChars?: number;
  /** Longest single line kept; longer lines are cut with a marker (default 4 KiB). */
  maxLineChars?: number;
  /** Applied to each line before it is kept or returned (secrets out). */
  redact?: (line: string) => string;
}

export class StderrRing {
  readonly #maxLines: number;
  readonly #maxChars: number;
  readonly #maxLineChars: number;
  readonly #redact: (line: string) => string;
  #lines: string[] = [];
  #chars = 0;
  /** An unterminated tail of the last chunk, completed by the next one. */
  #partial = "";

  constructor(options: StderrRingOptions = {}) {
    this.#maxLines = options.maxLines ?? 200;
    this.#maxChars = options.maxChars ?? 64 * 1024;
    this.#maxLineChars = options.maxLineChars ?? 4 * 1024;
    this.#redact = options.redact ?? ((line) => line);
  }

  /** Feeds decoded text; returns the complete lines it finished (ANSI stripped, redacted). */
  write(text: string): string[] {
    const parts = (this.#partial + text).split(/\r?\n/);
    this.#partial = parts.pop() ?? "";
    if (this.#partial.length > this.#maxLineChars) {
      // A line with no newline in sight: keep it as a line rather than buffer without bound.
      parts.push(this.#partial);
      this.#partial = "";
    }
    const finished: string[] = [];
    for (const part of parts) {
      const line = this.#clean(part);
      if (line.trim() === "") continue;
      this.#push(line);
      finished.push(line);
    }
    return finished;
  }

  /** Ends the stream: a last line without newline becomes a line. */
  flush(): string[] {
    if (this.#partial === "") return [];
    const rest = this.#partial;
    this.#partial = "";
    return this.write(rest + "\n");
  }

  /** The last `n` lines kept (all by default), oldest first. */
  lines(n?: number): string[] {
    const all = this.#partial === "" ? this.#lines : [...this.#lines, this.#clean(this.#partial)];
    return n === undefined ? [...all] : all.slice(Math.max(0, all.length - n));
  }

  // Redacted before clipping, so a secret cut in two by the clip is still found whole.
  #clean(text: string): string {
    return this.#clip(this.#redact(stripAnsi(text)));
  }

  #clip(line: string): string {
    return line.length > this.#maxLineChars
      ? `${line.slice(0, this.#maxLineChars)}… [${line.length - this.#maxLineChars} more chars]`
      : line;
  }

  #push(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    while (
      this.#lines.length > this.#maxLines ||
      (this.#chars > this.#maxChars && this.#lines.length > 1)
    ) {
      this.#chars -= this.#lines.shift()!.length;
    }
  }
}
