/**
 * Retries of requests that codex refused as transient, and only those.
 *
 * What is retried (`isRetryable`):
 * - `-32001`, whatever the method. codex answers it when it did not take the request in: its
 *   transport answers "Server overloaded; retry later." to a request that finds the bounded
 *   incoming queue full, instead of enqueueing it (`enqueue_incoming_message` in
 *   codex-rs/app-server-transport/src/transport/mod.rs; the only -32001 codex 0.169.0 sends).
 *   Later codex versions use the same code for other admission refusals (a turn not submitted
 *   for lack of capacity) and add `data: {reason, retryable}`; a `retryable: false` is obeyed.
 *   Since nothing was processed, even `turn/start` and `thread/start` are safe to send again.
 * - A timeout, only for the few methods whose repetition does what one call does
 *   (`IDEMPOTENT_METHODS`). A timeout says nothing about whether codex acted, so a timed-out
 *   `thread/start`, `turn/start` or `turn/steer` is never sent again blindly.
 *
 * Not retried: every other error code. `-32602` (invalid params) and `-32600` (invalid request)
 * are codex judging the request itself, and a second identical request gets the same answer;
 * `-32600` "Server is draining; retry after reconnecting" asks for a new connection, which for
 * stdio is a new child (the supervisor's job). `-32603` may come after codex acted. A closed
 * connection or a failed write means the child is gone; an abort is the caller's.
 *
 * Waits: 1 s, 2 s, 4 s (three retries, four attempts), each ±20 % at random, and no retry that
 * would start after `maxElapsedMs` from the first attempt (nor after the caller's own timeout).
 * The clock, the sleep and the randomness are injectable, so tests never wait.
 */
import { RequestAborted, RequestTimeout, RpcError } from "../../errors.ts";

export interface RetryPolicy {
  /** Attempts in all, the first included (1: no retries). */
  attempts: number;
  /** Wait before retry n (1-based) is delaysMs[n-1] (the last one repeats). */
  delaysMs: readonly number[];
  /** Fraction of each delay added or removed at random. */
  jitter: number;
  /** No retry starts later than this after the first attempt did. */
  maxElapsedMs: number;
  /** Injectable for tests: never wait on the wall clock there. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Milliseconds; default `Date.now`. */
  now?: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  attempts: 4,
  delaysMs: Object.freeze([1000, 2000, 4000]),
  jitter: 0.2,
  maxElapsedMs: 15_000,
});

export const NO_RETRY: RetryPolicy = Object.freeze({
  attempts: 1,
  delaysMs: Object.freeze([]),
  jitter: 0,
  maxElapsedMs: 0,
});

/** codex's "not taken in; send it again later" (OVERLOADED_ERROR_CODE in codex-rs). */
export const OVERLOADED = -32001;

/**
 * Methods whose second call has the effect of one: reads, a config write of the same values,
 * and interrupting a turn (a second interrupt of an ended turn answers "no active turn").
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  "config/read",
  "config/batchWrite",
  "model/list",
  "thread/list",
  "thread/read",
  "turn/interrupt",
]);

/** codex refused the request without processing it, and says a later attempt may succeed. */
export function isRefusal(error: unknown): boolean {
  if (!(error instanceof RpcError) || error.code !== OVERLOADED) return false;
  const data = error.data as { retryable?: unknown } | null | undefined;
  return typeof data !== "object" || data === null || data.retryable !== false;
}

export function isRetryable(error: unknown, method: string): boolean {
  if (isRefusal(error)) return true;
  return error instanceof RequestTimeout && IDEMPOTENT_METHODS.has(method);
}

export interface RetryInfo {
  method: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  delayMs: number;
  error: unknown;
}

export interface RetryCall {
  method: string;
  signal?: AbortSignal;
  /** The whole call's time limit, retries and waits included (0 or Infinity: none). */
  timeoutMs?: number;
  /** Called before each wait. */
  onRetry?: (info: RetryInfo) => void;
}

/**
 * Runs `attempt` until it succeeds, fails in a way `isRetryable` rejects, runs out of attempts
 * or time, or `call.signal` aborts. `attempt` gets what is left of the caller's time limit as its
 * own (undefined when the caller gave none). The last failure is what is thrown.
 */
export async function withRetry<T>(
  attempt: (timeoutMs: number | undefined) => Promise<T>,
  policy: RetryPolicy,
  call: RetryCall,
): Promise<T> {
  const sleep = policy.sleep ?? abortableSleep;
  const random = policy.random ?? Math.random;
  const now = policy.now ?? Date.now;
  const limit = call.timeoutMs !== undefined && call.timeoutMs > 0 &&
      Number.isFinite(call.timeoutMs)
    ? call.timeoutMs
    : undefined;
  const start = now();
  const lastRetryAt = start + Math.min(policy.maxElapsedMs, limit ?? Infinity);
  for (let n = 1;; n++) {
    try {
      return await attempt(limit === undefined ? undefined : Math.max(1, start + limit - now()));
    } catch (error) {
      if (n >= policy.attempts || call.signal?.aborted || !isRetryable(error, call.method)) {
        throw error;
      }
      const base = policy.delaysMs[Math.min(n, policy.delaysMs.length) - 1] ?? 0;
      const delayMs = Math.max(0, Math.round(base * (1 + policy.jitter * (2 * random() - 1))));
      if (now() + delayMs >= lastRetryAt) throw error;
      call.onRetry?.({ method: call.method, attempt: n, delayMs, error });
      const aborted = () => new RequestAborted(call.method, call.signal?.reason);
      if (call.signal?.aborted) throw aborted();
      try {
        await sleep(delayMs, call.signal);
      } catch (sleepError) {
        throw call.signal?.aborted ? aborted() : sleepError;
      }
      if (call.signal?.aborted) throw aborted();
    }
  }
}

/** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
