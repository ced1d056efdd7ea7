/**
 * The provider's view of a running codex: the process (process.ts) and its JSON-RPC connection
 * (jsonrpc.ts), joined. `startCodexChild` spawns `codex app-server`, runs the handshake, and
 * returns both behind one small interface the provider and tests can fake.
 */
import { JsonRpcConnection, type Logger } from "./jsonrpc.ts";
import { CodexProcess, type CodexProcessOptions } from "./process.ts";

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
  log?: Logger;
}

export async function startCodexChild(options: StartChildOptions): Promise<CodexChild> {
  const { requestTimeoutMs, log, ...processOptions } = options;
  const process = await CodexProcess.start({
    ...processOptions,
    connect: (stdout, stdin) =>
      new JsonRpcConnection(stdout, stdin, {
        ...(requestTimeoutMs !== undefined && { defaultTimeoutMs: requestTimeoutMs }),
        ...(log && { log }),
      }),
  });
  return {
    pid: process.pid,
    version: process.version,
    rpc: process.rpc,
    onExit: (listener) => void process.onExit((reason) => listener(reason)),
    stderrTail: (lines) => process.stderrTail(lines),
    stop: async () => {
      await process.stop();
    },
  };
}
