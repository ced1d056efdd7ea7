/**
 * The retry policy (src/provider/codex/retry.ts) on a fake clock: what is retried, how long it
 * waits, the bound on total time, abort. Nothing here waits on the wall clock.
 */
import { describe, expect, test } from "bun:test";
import {
  ConnectionClosed,
  RequestAborted,
  RequestTimeout,
  RpcError,
  WriteFailed,
} from "../../../src/errors.ts";
import {
  DEFAULT_RETRY,
  isRetryable,
  type RetryInfo,
  type RetryPolicy,
  withRetry,
} from "../../../src/provider/codex/retry.ts";
import { connectFakePeer } from "../../support/fake-peer.ts";

/** A clock that moves only when the policy sleeps or an attempt says it took time. */
function fakeClock(policy: RetryPolicy = DEFAULT_RETRY, random = 0.5) {
  const clock = { now: 0, slept: [] as number[] };
  const fake: RetryPolicy = {
    ...policy,
    now: () => clock.now,
    random: () => random,
    sleep: (ms) => {
      clock.slept.push(ms);
      clock.now += ms;
      return Promise.resolve();
    },
  };
  return { clock, policy: fake };
}

const overloaded = () => new RpcError("m", -32001, "Server overloaded; retry later.");

describe("what is retried", () => {
  const NOT_PROCESSED = ["thread/start", "thread/resume", "turn/start", "turn/steer"];
  test.each(NOT_PROCESSED)("-32001 is retried even for %s: codex did not take it in", (method) => {
    expect(isRetryable(overloaded(), method)).toBe(true);
  });

  test.each([
    ["-32001 that says retryable: false", new RpcError("m", -32001, "x", { retryable: false })],
    ["-32602 invalid params", new RpcError("m", -32602, "x")],
    ["-32600 invalid request", new RpcError("m", -32600, "x")],
    ["-32600 draining", new RpcError("m", -32600, "Server is draining; retry after reconnecting")],
    ["-32603 internal error", new RpcError("m", -32603, "x")],
    ["-32601 method not found", new RpcError("m", -32601, "x")],
    ["-32700 parse error", new RpcError("m", -32700, "x")],
    ["a failed write", new WriteFailed("m", new Error("EPIPE"))],
    ["a closed connection", new ConnectionClosed("gone")],
    ["an abort", new RequestAborted("m")],
  ])("%s is not retried", (_name, error) => {
    expect(isRetryable(error, "thread/start")).toBe(false);
  });

  test.each([
    ["thread/start", false],
    ["thread/resume", false],
    ["turn/start", false],
    ["turn/steer", false],
    ["turn/interrupt", true],
    ["config/batchWrite", true],
    ["config/read", true],
  ])("a timeout of %s is retried: %p (only idempotent methods)", (method, retried) => {
    expect(isRetryable(new RequestTimeout(method, 10), method)).toBe(retried);
  });

  test("a -32001 with data that does not forbid it is retried", () => {
    const error = new RpcError("m", -32001, "x", { reason: "transportIngress", retryable: true });
    expect(isRetryable(error, "turn/start")).toBe(true);
  });
});

describe("waits", () => {
  test("the default waits 1 s, 2 s, 4 s between four attempts, then gives up", async () => {
    const { clock, policy } = fakeClock();
    const retries: RetryInfo[] = [];
    let attempts = 0;
    const error = overloaded();
    const result = await withRetry(
      () => {
        attempts++;
        return Promise.reject(error);
      },
      policy,
      { method: "thread/start", onRetry: (info) => retries.push(info) },
    ).catch((e) => e);
    expect(result).toBe(error);
    expect(attempts).toBe(4);
    expect(clock.slept).toEqual([1000, 2000, 4000]);
    expect(retries.map((r) => [r.method, r.attempt])).toEqual([
      ["thread/start", 1],
      ["thread/start", 2],
      ["thread/start", 3],
    ]);
  });

  test.each([[0, [800, 1600, 3200]], [1, [1200, 2400, 4800]]])(
    "jitter stays within ±20 %% (random %p)",
    async (random, expected) => {
      const { clock, policy } = fakeClock(DEFAULT_RETRY, random);
      await withRetry(() => Promise.reject(overloaded()), policy, { method: "m" }).catch(() => {});
      expect(clock.slept).toEqual(expected);
    },
  );

  test("succeeds as soon as an attempt does", async () => {
    const { clock, policy } = fakeClock();
    let attempts = 0;
    const result = await withRetry(
      () => ++attempts < 3 ? Promise.reject(overloaded()) : Promise.resolve("ok"),
      policy,
      { method: "turn/start" },
    );
    expect(result).toBe("ok");
    expect(clock.slept).toEqual([1000, 2000]);
  });

  test("a permanent error ends the call at once", async () => {
    const { clock, policy } = fakeClock();
    let attempts = 0;
    const error = new RpcError("thread/start", -32602, "invalid params");
    const result = await withRetry(
      () => {
        attempts++;
        return Promise.reject(error);
      },
      policy,
      { method: "thread/start" },
    ).catch((e) => e);
    expect(result).toBe(error);
    expect(attempts).toBe(1);
    expect(clock.slept).toEqual([]);
  });
});

describe("bounds", () => {
  test("no retry starts after maxElapsedMs, counting the time attempts took", async () => {
    const { clock, policy } = fakeClock({ ...DEFAULT_RETRY, maxElapsedMs: 15_000 });
    let attempts = 0;
    await withRetry(
      () => {
        attempts++;
        clock.now += 6000; // each attempt takes 6 s before codex refuses it
        return Promise.reject(overloaded());
      },
      policy,
      { method: "thread/start" },
    ).catch(() => {});
    // 0–6 s, wait 1 s, 7–13 s, and a wait of 2 s would end at 15 s: not started.
    expect(attempts).toBe(2);
    expect(clock.slept).toEqual([1000]);
  });

  test("the caller's timeoutMs is the whole call's: attempts get what is left of it", async () => {
    const { clock, policy } = fakeClock();
    const given: Array<number | undefined> = [];
    await withRetry(
      (timeoutMs) => {
        given.push(timeoutMs);
        clock.now += 100;
        return Promise.reject(overloaded());
      },
      policy,
      { method: "turn/interrupt", timeoutMs: 2500 },
    ).catch(() => {});
    // 0: 2500 left; after 100 + 1000 ms: 1400 left; the next wait (2000 ms) does not fit.
    expect(given).toEqual([2500, 1400]);
    expect(clock.slept).toEqual([1000]);
  });

  test("without a caller timeout, attempts get none (the connection's default applies)", async () => {
    const { policy } = fakeClock();
    const given: Array<number | undefined> = [];
    await withRetry(
      (timeoutMs) => {
        given.push(timeoutMs);
        return Promise.reject(overloaded());
      },
      policy,
      { method: "m", timeoutMs: 0 },
    ).catch(() => {});
    expect(given).toEqual([undefined, undefined, undefined, undefined]);
  });

  test("an abort during the wait ends the call with RequestAborted naming the method", async () => {
    const controller = new AbortController();
    let attempts = 0;
    const error = await withRetry(
      () => {
        attempts++;
        return Promise.reject(overloaded());
      },
      {
        ...DEFAULT_RETRY,
        sleep: (_ms, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          }),
      },
      { method: "thread/start", signal: controller.signal, onRetry: () => controller.abort() },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(RequestAborted);
    expect(error).toMatchObject({ method: "thread/start" });
    expect(attempts).toBe(1);
  });

  test("the default sleep ends at once on abort", async () => {
    const controller = new AbortController();
    const error = await withRetry(
      () => Promise.reject(overloaded()),
      { ...DEFAULT_RETRY, delaysMs: [3_600_000], maxElapsedMs: Infinity },
      {
        method: "turn/start",
        signal: controller.signal,
        onRetry: () => queueMicrotask(() => controller.abort()), // once the hour's wait began
      },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(RequestAborted);
  });
});

describe("against a fake codex", () => {
  test("turn/start refused twice is sent three times and answered once", async () => {
    const { policy } = fakeClock();
    const { connection, peer } = connectFakePeer({ retry: policy });
    const answer = connection.request("turn/start", { threadId: "t" });
    for (let i = 0; i < 2; i++) {
      const r = await peer.next((m) => m.method === "turn/start");
      await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    }
    const r = await peer.next((m) => m.method === "turn/start");
    expect(r.params).toEqual({ threadId: "t" });
    await peer.send({ id: r.id, result: { turn: { id: "turn-1" } } });
    expect(await answer).toEqual({ turn: { id: "turn-1" } });
    expect(connection.stats.retries).toBe(2);
  });

  test("thread/start answered -32602 is not sent again", async () => {
    const { policy } = fakeClock();
    const { connection, peer } = connectFakePeer({ retry: policy });
    const answer = connection.request("thread/start", {});
    const r = await peer.next((m) => m.method === "thread/start");
    await peer.send({ id: r.id, error: { code: -32602, message: "invalid params" } });
    expect(await answer.catch((e: unknown) => e)).toMatchObject({ code: -32602 });
    // A resend would be on the wire already: the fake clock does not wait.
    void connection.request("marker", {}, { timeoutMs: 50 }).catch(() => {});
    const next = await peer.next();
    expect(next.method).toBe("marker");
    expect(connection.stats.retries).toBe(0);
  });
});
