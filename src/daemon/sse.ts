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

/** A batch of waiting events is cut at about this size, so one chunk never grows unbounded. */
const MAX_CHUNK_CHARS = 64 * 1024;

/**
 * Raced against the source's next event: an already settled `next()` (the event sat in the
 * journal's buffer) wins, since Promise.race settles with the first argument already settled.
 */
const NOT_READY_VALUE = Symbol("not ready");
const NOT_READY = Promise.resolve(NOT_READY_VALUE);

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
  /** A `next()` asked for while batching that had no event ready yet: the next pull awaits it. */
  let waiting: Promise<IteratorResult<StoredEvent>> | undefined;
  let keepAlive: unknown;
  let closed = false;

  const cleanup = () => {
    if (closed) return;
    closed = true;
    if (keepAlive !== undefined) timers.clearInterval(keepAlive);
    options.requestSignal?.removeEventListener("abort", onRequestAbort);
    abort.abort();
    // A next() left waiting by the last batch settles once the source ends; nobody awaits it.
    waiting?.catch(() => {});
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
      let frames = "";
      try {
        let next = await (waiting ?? iterator.next());
        waiting = undefined;
        if (closed) return;
        // Events that are already waiting go out in one chunk: one write to the socket (and one
        // read for the client) for a burst of streamed deltas instead of one per event.
        while (!next.done) {
          frames += formatEvent(next.value);
          if (frames.length >= MAX_CHUNK_CHARS) break;
          const following = iterator.next();
          const ready = await Promise.race([following, NOT_READY]);
          if (closed) return;
          if (ready === NOT_READY_VALUE) {
            waiting = following;
            break;
          }
          next = ready;
        }
        if (frames !== "") controller.enqueue(encoder.encode(frames));
        frames = "";
        if (next.done) {
          cleanup();
          controller.close();
        }
      } catch (error) {
        if (closed) return;
        // What was read before the source failed still reaches the client.
        if (frames !== "") controller.enqueue(encoder.encode(frames));
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
