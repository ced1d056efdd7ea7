/**
 * Server-sent events over a pull-based ReadableStream: the next event is read from the source
 * only when the client has taken the previous one, so a slow client backs up into the journal's
 * bounded buffer (which then reads it from the database instead) rather than into memory here.
 */
import type { StoredEvent } from "../api/schemas.ts";
import { eventJson } from "./event-json.ts";

export interface KeepAliveTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface SseOptions {
  /** Aborted when the HTTP request ends (client gone). */
  requestSignal?: AbortSignal;
  /** Keep-alive comment interval; 15 s by default. */
  keepAliveMs?: number;
  timers?: KeepAliveTimers;
  /** Called once when the stream ends for any reason. */
  onClose?: () => void;
  onError?: (error: unknown) => void;
}

const encoder = new TextEncoder();

/** One SSE frame. JSON has no raw newlines, so `data:` is always one line. */
export function formatEvent(event: StoredEvent): string {
  const type = event.type.replace(/[\r\n]/g, " ");
  return `id: ${event.seq}\nevent: ${type}\ndata: ${eventJson(event)}\n\n`;
}

const defaultTimers: KeepAliveTimers = {
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

/**
 * A `text/event-stream` response that relays `open(signal)`'s events. `signal` aborts when the
 * client leaves; the stream ends when the source ends.
 */
export function sseResponse(
  open: (signal: AbortSignal) => AsyncIterable<StoredEvent>,
  options: SseOptions = {},
): Response {
  const abort = new AbortController();
  const timers = options.timers ?? defaultTimers;
  let iterator: AsyncIterator<StoredEvent> | undefined;
  let keepAlive: unknown;
  let closed = false;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    if (keepAlive !== undefined) timers.clearInterval(keepAlive);
    options.requestSignal?.removeEventListener("abort", onRequestAbort);
    abort.abort();
    // Fire and forget: a generator parked in `await` finishes its return once it wakes.
    iterator?.return?.().catch(() => {});
    options.onClose?.();
  };
  const onRequestAbort = () => cleanup();

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (options.requestSignal?.aborted) {
        cleanup();
        controller.close();
        return;
      }
      options.requestSignal?.addEventListener("abort", onRequestAbort, { once: true });
      iterator = open(abort.signal)[Symbol.asyncIterator]();
      // A comment first, so clients and proxies see the stream open at once.
      controller.enqueue(encoder.encode(": connected\n\n"));
      keepAlive = timers.setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(": keep-alive\n\n"));
      }, options.keepAliveMs ?? 15_000);
    },
    async pull(controller) {
      if (closed || !iterator) return;
      try {
        const next = await iterator.next();
        if (closed) return;
        if (next.done) {
          cleanup();
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(formatEvent(next.value)));
      } catch (error) {
        if (closed) return;
        options.onError?.(error);
        cleanup();
        controller.close();
      }
    },
    cancel() {
      cleanup();
    },
  }, { highWaterMark: 1 });

  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}
