/**
 * A web WritableStream over a node Writable (codex's stdin), used instead of `Writable.toWeb`.
 *
 * Why not `Writable.toWeb`: under Deno 2.9 its adapter throws an uncaught TypeError ("Cannot read
 * properties of undefined (reading 'error')") when the node stream finishes or is destroyed
 * other than through the web writer, which is exactly what CodexProcess.stop() does (it ends and,
 * after a grace period, destroys stdin itself). That kills the whole process. This adapter only
 * listens, so ending or destroying the node stream directly is always safe.
 *
 * Back-pressure: each write resolves once node has handed the bytes to the pipe, so a codex that
 * stops reading holds the writer instead of filling memory.
 */
import type { Writable } from "node:stream";

export function webWritable(stream: Writable): WritableStream<Uint8Array> {
  let failure: Error | undefined;
  // Without a listener an EPIPE from a dead codex would be an uncaught exception.
  stream.on("error", (error) => (failure ??= error));
  const closedError = () => failure ?? new Error("codex's stdin is closed");
  return new WritableStream<Uint8Array>({
    write(chunk) {
      return new Promise<void>((resolve, reject) => {
        if (failure || stream.destroyed || stream.writableEnded) return reject(closedError());
        stream.write(chunk, (error) => (error ? reject(error) : resolve()));
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        if (stream.destroyed || stream.writableFinished) return resolve();
        stream.once("finish", () => resolve());
        stream.once("close", () => resolve());
        stream.once("error", () => resolve());
        if (!stream.writableEnded) stream.end();
      });
    },
    abort() {
      stream.destroy();
    },
  });
}
