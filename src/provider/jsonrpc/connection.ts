/**
 * A JSON-RPC 2.0 connection over a pair of byte streams, knowing nothing of the peer's methods:
 * request correlation, per-request timeouts and abort, notifications and server requests handed
 * to one handler each, and an orderly close. Framing is framing.ts; what the messages mean (and
 * retries) belongs to the layer above (for codex: src/provider/codex/router.ts).
 *
 * - Every request ends by its response, its timeout, its AbortSignal, or the connection closing.
 * - Server requests go to one handler; its result (or thrown RpcError) is the response. With no
 *   handler they are answered -32601 at once, so the peer never waits on us.
 * - The reader survives garbage: non-JSON and wrongly shaped lines are logged and skipped, and a
 *   line over `maxLineLength` is dropped without being buffered whole and reported to
 *   `onOversizeLine`, which may end the request it answered with `failRequest`.
 * - `onClose` fires exactly once (end of stream, read error, or `stop`). Lines received before
 *   the end are handled before pending requests fail, so a response racing a crash is delivered.
 */
import {
  ConnectionClosed,
  errorMessage,
  RequestAborted,
  RequestTimeout,
  RpcError,
  WriteFailed,
} from "../../errors.ts";
import type { Level, Logger } from "../../log.ts";
import { DEFAULT_MAX_LINE_LENGTH, type DroppedLine, LineWriter, readLines } from "./framing.ts";
import {
  classify,
  type IncomingNotification,
  type IncomingRequest,
  type IncomingResponse,
  type RequestId,
} from "./messages.ts";

export interface JsonRpcOptions {
  maxLineLength?: number;
  /** Applies to requests that give no `timeoutMs`; 0 or Infinity disables it. */
  defaultTimeoutMs?: number;
  /** Called for each line dropped for its length (see framing.ts for what is kept of it). */
  onOversizeLine?: (dropped: DroppedLine) => void;
  log?: Logger["log"];
}

export interface RequestOptions {
  /** 0 or Infinity: no timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type NotificationListener = (method: string, params: unknown) => void;
export type ServerRequestHandler = (
  request: { id: RequestId; method: string; params?: unknown },
) => Promise<unknown>;

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
  cleanup: () => void;
}

export interface ConnectionStats {
  messagesIn: number;
  messagesOut: number;
  parseErrors: number;
  droppedLines: number;
  unknownResponses: number;
}

export class JsonRpcConnection implements AsyncDisposable {
  readonly #writer: LineWriter;
  readonly #options: JsonRpcOptions;
  readonly #pending = new Map<number, Pending>();
  #notificationHandler: NotificationListener | undefined;
  readonly #closeListeners = new Set<(cause: Error) => void>();
  #serverRequestHandler: ServerRequestHandler | undefined;
  #nextId = 0;
  #closeCause: Error | undefined;
  readonly #readerDone: Promise<void>;
  readonly #stopReading = new AbortController();
  readonly stats: ConnectionStats = {
    messagesIn: 0,
    messagesOut: 0,
    parseErrors: 0,
    droppedLines: 0,
    unknownResponses: 0,
  };

  constructor(
    readable: ReadableStream<Uint8Array>,
    writable: WritableStream<Uint8Array>,
    options: JsonRpcOptions = {},
  ) {
    this.#options = options;
    this.#writer = new LineWriter(writable);
    this.#readerDone = this.#readLoop(readable);
  }

  get closed(): boolean {
    return this.#closeCause !== undefined;
  }

  /** Why the connection closed, once it has. */
  get closeCause(): Error | undefined {
    return this.#closeCause;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  // -------------------------------------------------------------------------------------------
  // Outgoing

  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.#closeCause) {
      return Promise.reject(
        new ConnectionClosed(`Cannot send ${method}: the connection is closed`, this.#closeCause),
      );
    }
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new RequestAborted(method, signal.reason));
    const id = ++this.#nextId;
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.#options.defaultTimeoutMs ?? 0;
      const timer = timeoutMs > 0 && Number.isFinite(timeoutMs)
        ? setTimeout(() => this.#settle(id, new RequestTimeout(method, timeoutMs)), timeoutMs)
        : undefined;
      const onAbort = () => this.#settle(id, new RequestAborted(method, signal?.reason));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, {
        method,
        resolve: resolve as (result: unknown) => void,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      });
      this.#send({ jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) })
        .catch((error) => this.#settle(id, new WriteFailed(method, error)));
    });
  }

  /**
   * Ends pending request `id` now with `error(method)`, as if it had been answered with an
   * error; false when no such request is pending. For a layer that knows its answer was lost.
   */
  failRequest(id: number, error: (method: string) => Error): boolean {
    const pending = this.#pending.get(id);
    if (!pending) return false;
    this.#settle(id, error(pending.method));
    return true;
  }

  notify(method: string, params?: unknown): Promise<void> {
    if (this.#closeCause) {
      return Promise.reject(
        new ConnectionClosed(`Cannot send ${method}: the connection is closed`),
      );
    }
    return this.#send({ jsonrpc: "2.0", method, ...(params !== undefined && { params }) })
      .catch((error) => {
        throw new WriteFailed(method, error);
      });
  }

  /** Answers a server request; `id` is echoed exactly as the peer sent it. */
  respond(id: RequestId, result: unknown): Promise<void> {
    return this.#send({ jsonrpc: "2.0", id, result: result ?? null });
  }

  respondError(id: RequestId, code: number, message: string, data?: unknown): Promise<void> {
    return this.#send({
      jsonrpc: "2.0",
      id,
      error: { code, message, ...(data !== undefined && { data }) },
    });
  }

  #send(message: Record<string, unknown>): Promise<void> {
    this.stats.messagesOut++;
    return this.#writer.write(JSON.stringify(message));
  }

  // -------------------------------------------------------------------------------------------
  // Handlers

  /** Every notification goes to `handler` (replacing any; undefined: they are dropped). */
  onNotification(handler: NotificationListener | undefined): void {
    this.#notificationHandler = handler;
  }

  onServerRequest(handler: ServerRequestHandler | undefined): void {
    this.#serverRequestHandler = handler;
  }

  /** Fires once with the cause; at once if the connection already closed. */
  onClose(listener: (cause: Error) => void): () => void {
    if (this.#closeCause) {
      listener(this.#closeCause);
      return () => {};
    }
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  // -------------------------------------------------------------------------------------------
  // Incoming

  async #readLoop(readable: ReadableStream<Uint8Array>): Promise<void> {
    let cause: Error;
    const lines = readLines(readable, {
      maxLineLength: this.#options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
      signal: this.#stopReading.signal,
      onOversize: (dropped) => {
        this.stats.droppedLines++;
        if (this.#options.onOversizeLine) this.#options.onOversizeLine(dropped);
        else this.#log("error", "dropped an over-long line", { length: dropped.length });
      },
    });
    try {
      for await (const batch of lines) {
        for (const line of batch) this.#handleLine(line);
      }
      cause = new ConnectionClosed("the peer closed its output (end of stream)");
    } catch (error) {
      cause = this.#closeCause ??
        new ConnectionClosed(`Reading from the peer failed: ${errorMessage(error)}`, error);
    }
    this.#close(cause);
  }

  #handleLine(line: string): void {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.stats.parseErrors++;
      this.#log("warn", "skipped a line that is not JSON", { line: line.slice(0, 200) });
      return;
    }
    const incoming = classify(value);
    this.stats.messagesIn++;
    switch (incoming.kind) {
      case "response":
        return this.#onResponse(incoming.message);
      case "notification":
        return this.#onNotification(incoming.message);
      case "request":
        return void this.#onServerRequest(incoming.message);
      case "invalid":
        this.stats.parseErrors++;
        this.#log("warn", "skipped a message of unknown shape", {
          reason: incoming.reason,
          line: line.slice(0, 200),
        });
    }
  }

  #onResponse(message: IncomingResponse): void {
    // Our ids are integers; the peer echoes them (as numbers, or as strings by a lenient peer).
    const id = typeof message.id === "number" ? message.id : Number(message.id);
    const pending = this.#pending.get(id);
    if (!pending) {
      this.stats.unknownResponses++;
      this.#log("warn", "response for no pending request", { id: message.id });
      return;
    }
    if (message.kind === "error") {
      const { code, message: text, data } = message.error;
      this.#settle(id, new RpcError(pending.method, code, text, data));
    } else {
      this.#settle(id, undefined, message.result);
    }
  }

  #onNotification(message: IncomingNotification): void {
    try {
      this.#notificationHandler?.(message.method, message.params);
    } catch (error) {
      this.#log("error", "notification handler threw", {
        method: message.method,
        error: errorMessage(error),
      });
    }
  }

  async #onServerRequest(message: IncomingRequest): Promise<void> {
    const handler = this.#serverRequestHandler;
    try {
      if (!handler) {
        await this.respondError(message.id, -32601, `Method not handled: ${message.method}`);
        return;
      }
      let result: unknown;
      try {
        result = await handler({
          id: message.id,
          method: message.method,
          ...(message.params !== undefined && { params: message.params }),
        });
      } catch (error) {
        if (error instanceof RpcError) {
          await this.respondError(message.id, error.code, error.message, error.data);
        } else {
          await this.respondError(message.id, -32603, errorMessage(error));
        }
        return;
      }
      await this.respond(message.id, result);
    } catch (error) {
      this.#log("warn", "could not answer a server request", {
        method: message.method,
        error: errorMessage(error),
      });
    }
  }

  #settle(id: number, error: unknown, result?: unknown): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    pending.cleanup();
    if (error !== undefined) pending.reject(error);
    else pending.resolve(result);
  }

  // -------------------------------------------------------------------------------------------
  // Closing

  /**
   * Fails every pending request with `cause`, stops reading and ends the writer (the peer's
   * input).
   * Idempotent; resolves within `graceMs` even if the peer stopped reading.
   */
  async stop(cause?: unknown, graceMs = 1000): Promise<void> {
    const error = cause instanceof Error
      ? cause
      : new ConnectionClosed(cause === undefined ? "The connection was stopped" : String(cause));
    this.#close(error);
    this.#stopReading.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      this.#writer.close().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!closed) this.#writer.abort();
    await Promise.race([this.#readerDone, new Promise((r) => setTimeout(r, graceMs))]);
  }

  close(): Promise<void> {
    return this.stop();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  #close(cause: Error): void {
    if (this.#closeCause) return;
    this.#closeCause = cause;
    for (const id of [...this.#pending.keys()]) {
      const method = this.#pending.get(id)!.method;
      this.#settle(
        id,
        cause instanceof ConnectionClosed
          ? cause
          : new ConnectionClosed(`${method}: the connection closed: ${cause.message}`, cause),
      );
    }
    for (const listener of this.#closeListeners) {
      try {
        listener(cause);
      } catch (error) {
        this.#log("error", "close listener threw", { error: errorMessage(error) });
      }
    }
    this.#closeListeners.clear();
  }

  #log(level: Level, message: string, data?: Record<string, unknown>): void {
    this.#options.log?.(level, message, data);
  }
}
