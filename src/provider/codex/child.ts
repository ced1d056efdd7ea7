/**
 * The provider's view of a running codex: the process (process.ts) and its JSON-RPC connection
 * (jsonrpc.ts), joined. `startCodexChild` spawns `codex app-server`, runs the handshake, and
 * returns both behind one small interface the provider and tests can fake.
 *
 * Every request the provider and its handles make goes through `requestWithRetry`: a request
 * codex refused as transient (-32001) is sent again with backoff (retry.ts).
 */
import { JsonRpcConnection, type Logger, type RequestOptions } from "./jsonrpc.ts";
import { CodexProcess, type CodexProcessOptions } from "./process.ts";
import type { RetryInfo, RetryPolicy } from "./retry.ts";

export interface ChildRpc {
  request<T = unknown>(
    method: string,
    params: unknown,
    options?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<T>;
  /** Routes notifications with `params.threadId === threadId` to `listener` (replacing any). */
  subscribe(threadId: string, listener: (method: string, params: unknown) => void): void;
  unsubscribe(threadId: string): void;
  /** Notifications no thread subscriber took. */
  onNotification(listener: (method: string, params: unknown) => void): void;
  /** The handler's result is the response; a thrown RpcError keeps its code, anything else -32603. */
  onServerRequest(
    handler: (request: { method: string; params?: unknown }) => Promise<unknown>,
  ): void;
}

export interface CodexChild {
  readonly pid: number | undefined;
  readonly version: string | undefined;
  readonly rpc: ChildRpc;
  /** Called once if the child exits without `stop()` having been called. */
  onExit(listener: (reason: string) => void): void;
  /** The last lines codex wrote to stderr. */
  stderrTail(lines?: number): string[];
  /** Graceful and idempotent: close stdin, TERM, KILL after a grace period; always reaped. */
  stop(): Promise<void>;
}

export interface StartChildOptions extends Omit<CodexProcessOptions<JsonRpcConnection>, "connect"> {
  /** Requests that give none time out after this (default: none; codex can think for long). */
  requestTimeoutMs?: number;
  /** Retries of refused requests (default `DEFAULT_RETRY`: 1 s, 2 s, 4 s, ±20 %). */
  retry?: RetryPolicy;
  /** Called before each retry's wait, e.g. to count it. */
  onRetry?: (info: RetryInfo) => void;
  log?: Logger;
}

export async function startCodexChild(options: StartChildOptions): Promise<CodexChild> {
  const { requestTimeoutMs, retry, onRetry, log, ...processOptions } = options;
  const process = await CodexProcess.start({
    ...processOptions,
    connect: (stdout, stdin) =>
      new JsonRpcConnection(stdout, stdin, {
        ...(requestTimeoutMs !== undefined && { defaultTimeoutMs: requestTimeoutMs }),
        ...(retry && { retry }),
        ...(onRetry && { onRetry }),
        ...(log && { log }),
      }),
  });
  return {
    pid: process.pid,
    version: process.version,
    rpc: retrying(process.rpc),
    onExit: (listener) => void process.onExit((reason) => listener(reason)),
    stderrTail: (lines) => process.stderrTail(lines),
    stop: async () => {
      await process.stop();
    },
  };
}

/** The connection as the provider sees it: requests retried where codex refused them. */
function retrying(connection: JsonRpcConnection): ChildRpc {
  return {
    request: <T>(method: string, params: unknown, options?: RequestOptions) =>
      connection.requestWithRetry<T>(method, params, options),
    subscribe: (threadId, listener) => connection.subscribe(threadId, listener),
    unsubscribe: (threadId) => connection.unsubscribe(threadId),
    onNotification: (listener) => void connection.onNotification(listener),
    onServerRequest: (handler) => connection.onServerRequest(handler),
  };
}
