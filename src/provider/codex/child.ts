/**
 * The provider's view of a running codex: the process (process.ts) and its connection
 * (router.ts), joined. `startCodexChild` spawns `codex app-server`, runs the handshake, and
 * returns both behind one small interface the provider and tests can fake.
 *
 * Every request the provider and its handles make goes through the router: a request codex
 * refused as transient (-32001) is sent again with backoff (retry.ts), and its result is parsed
 * (results.ts).
 */
import { CodexProcess, type CodexProcessOptions } from "./process.ts";
import type { RetryInfo, RetryPolicy } from "./retry.ts";
import { CodexRouter } from "./router.ts";
import type { Rpc } from "./rpc.ts";

export interface CodexChild {
  readonly pid: number | undefined;
  readonly version: string | undefined;
  readonly rpc: Rpc;
  /** Called once if the child exits without `stop()` having been called. */
  onExit(listener: (reason: string) => void): void;
  /** The last lines codex wrote to stderr. */
  stderrTail(lines?: number): string[];
  /** Graceful and idempotent: close stdin, TERM, KILL after a grace period; always reaped. */
  stop(): Promise<void>;
}

export interface StartChildOptions extends Omit<CodexProcessOptions, "connect"> {
  /** Requests that give none time out after this (default: none; codex can think for long). */
  requestTimeoutMs?: number;
  /** Retries of refused requests (default `DEFAULT_RETRY`: 1 s, 2 s, 4 s, ±20 %). */
  retry?: RetryPolicy;
  /** Called before each retry's wait, e.g. to count it. */
  onRetry?: (info: RetryInfo) => void;
}

export async function startCodexChild(options: StartChildOptions): Promise<CodexChild> {
  const { requestTimeoutMs, retry, onRetry, ...processOptions } = options;
  // The connection logs to the same place: retries, garbage from codex, dropped lines.
  const { log } = options;
  const process = await CodexProcess.start({
    ...processOptions,
    connect: (stdout, stdin) =>
      new CodexRouter(stdout, stdin, {
        ...(requestTimeoutMs !== undefined && { defaultTimeoutMs: requestTimeoutMs }),
        ...(retry && { retry }),
        ...(onRetry && { onRetry }),
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
