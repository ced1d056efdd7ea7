/**
 * A web ReadableStream over a node Readable (codex's stdout), used instead of `Readable.toWeb`.
 *
 * Why not `Readable.toWeb`: its adapter settles a promise and re-arms node's `readable` machinery
 * for every chunk, and codex writes a chunk per streamed delta; in a 10,000-delta stream the
 * adapter was about a tenth of the daemon's CPU (scripts/bench.ts --cpu-prof). This one enqueues
 * each `data` chunk as it comes.
 *
 * Back-pressure: past `highWaterMark` queued chunks the node stream is paused until the reader
 * pulls again, so a reader that stops holds codex's output in the pipe instead of in memory.
 */
import type { Readable } from "node:stream";

/** Chunks queued before node's stream is paused. */
const HIGH_WATER_MARK = 64;

export function webReadable(stream: Readable): ReadableStream<Uint8Array> {
  let done = false;
  const off = () => {
    done = true;
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("close", onEnd);
    stream.off("error", onError);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Uint8Array | string) => {
    if (done) return;
    controller.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    if ((controller.desiredSize ?? 1) <= 0) stream.pause();
  };
  const onEnd = () => {
    if (done) return;
    off();
    controller.close();
  };
  const onError = (error: unknown) => {
    if (done) return;
    off();
    controller.error(error);
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (stream.readableEnded || stream.destroyed) {
        done = true;
        c.close();
        return;
      }
      stream.on("data", onData);
      stream.on("end", onEnd);
      // Destroyed without an end (the child killed): what was read is all there is.
      stream.on("close", onEnd);
      stream.on("error", onError);
    },
    pull() {
      if (!done && stream.isPaused()) stream.resume();
    },
    cancel() {
      off();
      stream.destroy();
    },
  }, { highWaterMark: HIGH_WATER_MARK });
}
