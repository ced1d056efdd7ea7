/**
 * Newline-delimited JSON framing over byte streams (the transport codex app-server speaks).
 * Reading splits on "\n" with a streaming decoder and never buffers more than `maxLineLength`
 * characters of one line: a longer line is discarded up to its end and reported with its two
 * ends (so the caller can tell whose it was), and a broken or hostile peer cannot exhaust memory. Writing serializes lines and waits for back-pressure.
 */

export const DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;

/** What is kept of a dropped line: enough to tell whose it was. */
export interface DroppedLine {
  /** Its whole length, in characters. */
  length: number;
  /** Its first and last few thousand characters. */
  head: string;
  tail: string;
}

/** Characters kept from each end of a dropped line. */
const KEPT = 4096;

export interface LineReaderOptions {
  maxLineLength?: number;
  /** Called once for each line dropped for its length, when its end arrives (or the stream's). */
  onOversize?: (dropped: DroppedLine) => void;
  /** Stops reading: the pending read ends and the stream is cancelled. */
  signal?: AbortSignal;
}

function droppedLine(text: string): DroppedLine {
  return { length: text.length, head: text.slice(0, KEPT), tail: text.slice(-KEPT) };
}

/** Yields each complete line (without the newline); a final unterminated line is yielded too. */
export async function* readLines(
  readable: ReadableStream<Uint8Array>,
  options: LineReaderOptions = {},
): AsyncGenerator<string[], void, undefined> {
  const max = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  const decoder = new TextDecoder();
  const reader = readable.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener("abort", cancel, { once: true });
  let partial = "";
  // Inside an over-long line: skip until its newline, keeping its two ends.
  let dropped: DroppedLine | undefined;
  const skip = (text: string) => {
    dropped!.length += text.length;
    // Only the end of a chunk can reach the tail: never copy a whole multi-MiB chunk for it.
    dropped!.tail = (dropped!.tail + text.slice(-KEPT)).slice(-KEPT);
  };
  const finishDropped = () => {
    options.onOversize?.(dropped!);
    dropped = undefined;
  };
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      const lines: string[] = [];
      let start = 0;
      let newline = text.indexOf("\n");
      while (newline !== -1) {
        if (dropped) {
          skip(text.slice(start, newline));
          finishDropped();
        } else {
          const line = partial.length > 0
            ? partial + text.slice(start, newline)
            : text.slice(start, newline);
          partial = "";
          if (line.length > max) options.onOversize?.(droppedLine(line));
          else lines.push(line);
        }
        start = newline + 1;
        newline = text.indexOf("\n", start);
      }
      if (start < text.length) {
        if (dropped) skip(text.slice(start));
        else {
          partial += text.slice(start);
          if (partial.length > max) {
            dropped = droppedLine(partial);
            partial = "";
          }
        }
      }
      // One batch per chunk: the consumer handles a chunk's lines without awaiting in between.
      if (lines.length > 0) yield lines;
    }
    const rest = partial + decoder.decode();
    if (dropped) finishDropped();
    else if (rest.length > 0) yield [rest];
  } finally {
    options.signal?.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}

/** Writes whole lines in order; concurrent callers never interleave. */
export class LineWriter {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #tail: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(writable: WritableStream<Uint8Array>) {
    this.#writer = writable.getWriter();
  }

  /** Resolves once the line was handed to the stream (after back-pressure cleared). */
  write(line: string): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the writer is closed"));
    const bytes = this.#encoder.encode(line + "\n");
    const next = this.#tail.then(async () => {
      await this.#writer.ready;
      await this.#writer.write(bytes);
    });
    // A failed write must not poison later ones' ordering; each caller sees its own error.
    this.#tail = next.catch(() => {});
    return next;
  }

  /** Ends the stream at once, dropping queued lines (a peer that stopped reading). */
  abort(): void {
    this.#closed = true;
    this.#writer.abort().catch(() => {});
  }

  /** Closes the stream (ends the peer's stdin) after queued lines; idempotent, never throws. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await this.#writer.close().catch(() => {});
  }
}
