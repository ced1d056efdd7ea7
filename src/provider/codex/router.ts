/**
 * CodexRouter: what codexd adds to a plain JSON-RPC connection (../jsonrpc/connection.ts) for
 * codex app-server. It implements the provider's one {@link Rpc} view:
 *
 * - requests are sent again while codex refuses them as transient (retry.ts), and their results
 *   parsed with their method's schema (results.ts);
 * - notifications whose `params.threadId` has a subscriber go to it, the rest to global listeners;
 * - a line too long to read is not left unanswered: whose it was is read from its two ends, and
 *   the request it answered fails, codex gets an error for its server request, or the thread
 *   gets a `codexd/messageDropped` notification.
 */
import { ConnectionClosed, errorMessage, RpcError } from "../../errors.ts";
import {
  type ConnectionStats,
  JsonRpcConnection,
  type NotificationListener,
  type ServerRequestHandler,
} from "../jsonrpc/connection.ts";
import { DEFAULT_MAX_LINE_LENGTH, type DroppedLine } from "../jsonrpc/framing.ts";
import type { Level, Logger } from "../../log.ts";
import { DROPPED_MESSAGE } from "./messages.ts";
import { type MethodResult, parseResult } from "./results.ts";
import {
  abortableSleep,
  DEFAULT_RETRY,
  type RetryInfo,
  type RetryPolicy,
  withRetry,
} from "./retry.ts";
import type { Rpc, RpcRequestOptions } from "./rpc.ts";

// Reading a dropped line's owner from its ends. Top-level members come first in codex's messages
// (`{"id":…,"method":…,"params":…}`), and JSON escapes every quote inside a string, so a quoted
// `"threadId":"…"` can only be a real key.
const LEAD = String.raw`^\s*\{(?:\s*"(?:jsonrpc|id|method)"\s*:\s*(?:\d+|"[^"\\]*")\s*,)*\s*`;
const DROPPED_METHOD = new RegExp(LEAD + String.raw`"method"\s*:\s*"([^"\\]+)"`);
const DROPPED_ID = new RegExp(LEAD + String.raw`"id"\s*:\s*(\d+|"[^"\\]*")`);
const THREAD_ID = /"threadId"\s*:\s*"([^"\\]+)"/g;

export interface RouterOptions {
  maxLineLength?: number;
  /** Applies to requests that give no `timeoutMs`; 0 or Infinity disables it. */
  defaultTimeoutMs?: number;
  /** Default `DEFAULT_RETRY`. */
  retry?: RetryPolicy;
  /** Called before each retry's wait (metrics count these by method). */
  onRetry?: (info: RetryInfo) => void;
  log?: Logger["log"];
}

export interface RouterStats extends ConnectionStats {
  retries: number;
}

export class CodexRouter implements Rpc, AsyncDisposable {
  readonly #connection: JsonRpcConnection;
  readonly #options: RouterOptions;
  readonly #threads = new Map<string, NotificationListener>();
  readonly #globalListeners = new Set<NotificationListener>();
  #retries = 0;

  constructor(
    readable: ReadableStream<Uint8Array>,
    writable: WritableStream<Uint8Array>,
    options: RouterOptions = {},
  ) {
    this.#options = options;
    this.#connection = new JsonRpcConnection(readable, writable, {
      ...(options.maxLineLength !== undefined && { maxLineLength: options.maxLineLength }),
      ...(options.defaultTimeoutMs !== undefined &&
        { defaultTimeoutMs: options.defaultTimeoutMs }),
      ...(options.log && { log: options.log }),
      onOversizeLine: (dropped) => this.#onDroppedLine(dropped),
    });
    this.#connection.onNotification((method, params) => this.#route(method, params));
  }

  /** The connection's counters and the retries sent. */
  get stats(): RouterStats {
    return { ...this.#connection.stats, retries: this.#retries };
  }

  get closed(): boolean {
    return this.#connection.closed;
  }

  get closeCause(): Error | undefined {
    return this.#connection.closeCause;
  }

  get pendingCount(): number {
    return this.#connection.pendingCount;
  }

  // -------------------------------------------------------------------------------------------
  // Outgoing

  async request<M extends string>(
    method: M,
    params?: unknown,
    options: RpcRequestOptions = {},
  ): Promise<MethodResult<M>> {
    return parseResult(method, await this.#requestWithRetry(method, params, options));
  }

  notify(method: string, params?: unknown): Promise<void> {
    return this.#connection.notify(method, params);
  }

  #requestWithRetry(method: string, params: unknown, options: RpcRequestOptions) {
    const { retry, timeoutMs, signal } = options;
    const policy = retry ?? this.#options.retry ?? DEFAULT_RETRY;
    const sleep = policy.sleep ?? abortableSleep;
    return withRetry(
      (remainingMs) =>
        this.#connection.request(method, params, {
          ...(signal && { signal }),
          ...(remainingMs !== undefined ? { timeoutMs: remainingMs } : timeoutMs !== undefined &&
            { timeoutMs }),
        }),
      { ...policy, sleep: (ms) => this.#sleepWhileOpen(method, ms, sleep, signal) },
      {
        method,
        ...(signal && { signal }),
        ...(timeoutMs !== undefined && { timeoutMs }),
        onRetry: (info) => {
          this.#retries++;
          this.#log("warn", `${method} failed; retrying`, {
            attempt: info.attempt,
            delayMs: info.delayMs,
            error: errorMessage(info.error),
          });
          this.#options.onRetry?.(info);
        },
      },
    );
  }

  /** A retry's wait, cut short by `signal` or by the connection closing (then ConnectionClosed). */
  #sleepWhileOpen(
    method: string,
    ms: number,
    sleep: NonNullable<RetryPolicy["sleep"]>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const wake = new AbortController();
    const onAbort = () => wake.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const offClose = this.#connection.onClose((cause) =>
      wake.abort(
        cause instanceof ConnectionClosed
          ? cause
          : new ConnectionClosed(`${method}: the connection closed: ${cause.message}`, cause),
      )
    );
    return sleep(ms, wake.signal).finally(() => {
      offClose();
      signal?.removeEventListener("abort", onAbort);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Routing

  subscribe(threadId: string, listener: NotificationListener): void {
    this.#threads.set(threadId, listener);
  }

  unsubscribe(threadId: string): void {
    this.#threads.delete(threadId);
  }

  onNotification(listener: NotificationListener): () => void {
    this.#globalListeners.add(listener);
    return () => this.#globalListeners.delete(listener);
  }

  onServerRequest(handler: ServerRequestHandler | undefined): void {
    this.#connection.onServerRequest(handler);
  }

  /** Fires once with the cause; at once if the connection already closed. */
  onClose(listener: (cause: Error) => void): () => void {
    return this.#connection.onClose(listener);
  }

  #route(method: string, params: unknown): void {
    const threadId = (params as { threadId?: unknown } | undefined)?.threadId;
    const subscriber = typeof threadId === "string" ? this.#threads.get(threadId) : undefined;
    // Once per streamed delta: the common case, a thread's subscriber, allocates nothing.
    if (subscriber) return this.#deliver(subscriber, method, params);
    for (const listener of this.#globalListeners) this.#deliver(listener, method, params);
  }

  #deliver(listener: NotificationListener, method: string, params: unknown): void {
    try {
      listener(method, params);
    } catch (error) {
      this.#log("error", "notification listener threw", { method, error: errorMessage(error) });
    }
  }

  /**
   * A message too long to parse must still not leave anyone waiting for it: read whose it was
   * from its two ends and tell the request's caller, the thread, or codex itself.
   */
  #onDroppedLine(dropped: DroppedLine): void {
    const method = DROPPED_METHOD.exec(dropped.head)?.[1];
    const id = DROPPED_ID.exec(dropped.head)?.[1];
    const threadId = [...dropped.tail.matchAll(THREAD_ID)].at(-1)?.[1] ??
      [...dropped.head.matchAll(THREAD_ID)][0]?.[1];
    this.#log("error", "dropped an over-long line from codex", {
      length: dropped.length,
      method,
      id,
      threadId,
    });
    const what = `codex sent ${method ?? "a message"} of ${dropped.length} characters, over the ` +
      `${this.#options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH} limit`;
    if (method === undefined && id !== undefined) {
      // A response: its request ends now instead of at its timeout.
      this.#connection.failRequest(Number(id), (request) => new RpcError(request, -32603, what));
      return;
    }
    if (method !== undefined && id !== undefined) {
      // A server request: codex would wait for its answer forever.
      const requestId: string | number = id.startsWith('"') ? id.slice(1, -1) : Number(id);
      void this.#connection.respondError(requestId, -32600, what).catch(() => {});
    }
    if (threadId !== undefined) {
      this.#route(DROPPED_MESSAGE, { threadId, method, length: dropped.length, message: what });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Closing

  /** See JsonRpcConnection.stop: idempotent, bounded by `graceMs`. */
  stop(cause?: unknown, graceMs?: number): Promise<void> {
    return this.#connection.stop(cause, graceMs);
  }

  close(): Promise<void> {
    return this.stop();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  #log(level: Level, message: string, data?: Record<string, unknown>): void {
    this.#options.log?.(level, message, data);
  }
}
