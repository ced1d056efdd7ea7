/**
 * Retries of transient request failures, as the Go provider does: 3 attempts, waiting 1 s then
 * 2 s (then 4 s, should attempts be raised) with ±20 % jitter. Only failures that a later attempt
 * can fix are retried: timeouts, write errors, and RPC errors other than the protocol's
 * "method not found", "parse error" and "invalid request" (codex's -32001 "server overloaded" is
 * the typical transient one). An abort or a closed connection ends the retries at once.
 */
import { RequestAborted, RequestTimeout, RpcError, WriteFailed } from "../../errors.ts";

export interface RetryPolicy {
  attempts: number;
  /** Wait before retry n (1-based) is delaysMs[n-1] (the last one repeats). */
  delaysMs: readonly number[];
  /** Fraction of each delay added or removed at random. */
  jitter: number;
  /** Injectable for tests: never wait on the wall clock there. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  delaysMs: [1000, 2000, 4000],
  jitter: 0.2,
};

const PERMANENT_RPC_CODES = new Set([-32601, -32700, -32600]);

export function isTransient(error: unknown): boolean {
  if (error instanceof RequestTimeout || error instanceof WriteFailed) return true;
  return error instanceof RpcError && !PERMANENT_RPC_CODES.has(error.code);
}

export async function withRetry<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  signal?: AbortSignal,
  onRetry?: (error: unknown, attemptNumber: number, delayMs: number) => void,
): Promise<T> {
  const sleep = policy.sleep ?? abortableSleep;
  const random = policy.random ?? Math.random;
  for (let n = 1;; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= policy.attempts || !isTransient(error) || signal?.aborted) throw error;
      const base = policy.delaysMs[Math.min(n, policy.delaysMs.length) - 1] ?? 0;
      const delay = Math.max(0, Math.round(base * (1 + policy.jitter * (2 * random() - 1))));
      onRetry?.(error, n, delay);
      await sleep(delay, signal);
    }
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAborted("retry wait", signal.reason));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RequestAborted("retry wait", signal?.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
