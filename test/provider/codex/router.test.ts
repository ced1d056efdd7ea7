/**
 * The codex layer over the plain connection: routing by thread, retries, over-long messages and
 * parsed results. The plain connection's own behaviour is in jsonrpc/connection.test.ts.
 */
import { describe, expect, test } from "bun:test";
import {
  ConnectionClosed,
  ProtocolError,
  RequestAborted,
  RequestTimeout,
} from "../../../src/errors.ts";
import { DROPPED_MESSAGE } from "../../../src/provider/codex/messages.ts";
import { NO_RETRY, type RetryPolicy } from "../../../src/provider/codex/retry.ts";
import { connectFakePeer } from "../../support/fake-peer.ts";
/** Retries that never wait on the wall clock; records the delays asked for. */
function instantRetry(delays: number[] = []): RetryPolicy {
  return {
    attempts: 3,
    delaysMs: [1000, 2000, 4000],
    jitter: 0.2,
    maxElapsedMs: 60_000,
    random: () => 0.5, // no jitter
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
  };
}

describe("notification routing", () => {
  test("by threadId to its subscriber, others to the global listeners", async () => {
    const { connection, peer } = connectFakePeer();
    const seen: string[] = [];
    connection.subscribe("t1", (method) => seen.push(`t1:${method}`));
    connection.onNotification((method) => seen.push(`global:${method}`));
    await peer.send({ method: "turn/started", params: { threadId: "t1" } });
    await peer.send({ method: "turn/started", params: { threadId: "t2" } });
    await peer.send({ method: "configWarning", params: {} });
    const done = connection.request("sync");
    const r = await peer.next((m) => m.method === "sync");
    await peer.send({ id: r.id, result: null });
    await done;
    expect(seen).toEqual(["t1:turn/started", "global:turn/started", "global:configWarning"]);
  });

  test("subscribing twice replaces the first; unsubscribe removes it, also after stop", async () => {
    const { connection, peer } = connectFakePeer();
    const seen: string[] = [];
    const sync = async () => {
      const done = connection.request("sync");
      const r = await peer.next((m) => m.method === "sync" && !seen.includes(`sync:${m.id}`));
      seen.push(`sync:${r.id}`);
      await peer.send({ id: r.id, result: null });
      await done;
    };
    connection.subscribe("t", () => seen.push("first"));
    connection.subscribe("t", () => seen.push("second"));
    connection.onNotification((method) => seen.push(`global:${method}`));
    await peer.send({ method: "m", params: { threadId: "t" } });
    await sync();
    expect(seen.filter((s) => !s.startsWith("sync:"))).toEqual(["second"]);
    // Unsubscribed, the thread's next notification is nobody's: the global listeners get it.
    connection.unsubscribe("t");
    await peer.send({ method: "after", params: { threadId: "t" } });
    await sync();
    expect(seen.filter((s) => !s.startsWith("sync:"))).toEqual(["second", "global:after"]);
    await connection.stop();
    connection.unsubscribe("t"); // after stop: nothing left to remove, and no throw
  });
});

describe("retries", () => {
  // The policy itself is tested in test/provider/codex/retry.test.ts; here, the connection's use of it.
  test("a request succeeds on the third attempt after two overloads", async () => {
    const delays: number[] = [];
    const retried: string[] = [];
    const { connection, peer } = connectFakePeer({
      retry: instantRetry(delays),
      onRetry: (info) => retried.push(info.method),
    });
    const answer = connection.request("thread/start", {});
    for (let i = 0; i < 3; i++) {
      const r = await peer.next((m) => m.method === "thread/start");
      await peer.send(
        i < 2
          ? { id: r.id, error: { code: -32001, message: "Server overloaded; retry later." } }
          : { id: r.id, result: { thread: { id: "t" } } },
      );
    }
    expect(await answer).toMatchObject({ thread: { id: "t" } });
    expect(delays).toEqual([1000, 2000]);
    expect(retried).toEqual(["thread/start", "thread/start"]);
    expect(connection.stats.retries).toBe(2);
    expect(connection.pendingCount).toBe(0);
  });

  test("with retry NO_RETRY a request is sent once: a -32001 reaches the caller", async () => {
    const { connection, peer } = connectFakePeer({ retry: instantRetry() });
    const answer = connection.request("thread/start", {}, { retry: NO_RETRY });
    const r = await peer.next();
    await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    expect(await answer.catch((e) => e)).toMatchObject({ code: -32001 });
    expect(connection.stats.retries).toBe(0);
  });

  test.each([
    ["turn/start", false],
    ["thread/start", false],
    ["config/read", true],
  ])("a timed-out %s is sent again: %p", async (method, resent) => {
    const { connection, peer } = connectFakePeer({ retry: instantRetry(), defaultTimeoutMs: 5 });
    const error = await connection.request(method, {}).catch((e) => e);
    expect(error).toBeInstanceOf(RequestTimeout);
    // instantRetry allows 3 attempts.
    for (let i = 0; i < (resent ? 3 : 1); i++) await peer.next((m) => m.method === method);
    expect(peer.received.filter((m) => m.method === method)).toEqual([]);
    expect(connection.stats.retries).toBe(resent ? 2 : 0);
  });

  test("a caller's timeoutMs bounds the whole call, waits included", async () => {
    let clock = 0;
    const { connection, peer } = connectFakePeer({
      retry: {
        ...instantRetry(),
        now: () => clock,
        sleep: (ms) => {
          clock += ms;
          return Promise.resolve();
        },
      },
    });
    const answer = connection.request("thread/start", {}, { timeoutMs: 1500 });
    const r = await peer.next();
    await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    // The retry after 1000 ms fits in 1500 ms; the one after another 2000 ms does not.
    const again = await peer.next();
    await peer.send({ id: again.id, error: { code: -32001, message: "overloaded" } });
    expect(await answer.catch((e) => e)).toMatchObject({ code: -32001 });
    expect(connection.stats.retries).toBe(1);
  });

  test("the connection closing during the wait ends the call at once with ConnectionClosed", async () => {
    const { connection, peer } = connectFakePeer({
      retry: { ...instantRetry(), delaysMs: [3_600_000], sleep: undefined, maxElapsedMs: Infinity },
      onRetry: () => queueMicrotask(() => void connection.stop()),
    });
    const answer = connection.request("thread/start", {});
    const r = await peer.next();
    await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    expect(await answer.catch((e) => e)).toBeInstanceOf(ConnectionClosed);
    expect(peer.received.filter((m) => m.method === "thread/start")).toEqual([]);
  });

  test("an abort during the wait ends the call with RequestAborted and sends nothing more", async () => {
    const controller = new AbortController();
    const { connection, peer } = connectFakePeer({
      retry: {
        ...instantRetry(),
        sleep: (_ms, signal) =>
          new Promise((_resolve, reject) => {
            signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
            controller.abort();
          }),
      },
    });
    const answer = connection.request("thread/start", {}, { signal: controller.signal });
    const r = await peer.next();
    await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    expect(await answer.catch((e) => e)).toBeInstanceOf(RequestAborted);
    expect(peer.received.filter((m) => m.method === "thread/start")).toEqual([]);
  });
});

describe("over-long messages", () => {
  test("an over-long message still reaches whoever waits for it: thread, request, or codex", async () => {
    const { connection, peer } = connectFakePeer({ maxLineLength: 1000 });
    const seen: Array<[string, unknown]> = [];
    connection.subscribe("t1", (method, params) => seen.push([method, params]));
    const huge = "z".repeat(3000);
    // A notification whose threadId comes after the huge item, as codex orders item/completed;
    // a quoted key inside the text must not be taken for it.
    await peer.sendRaw(
      `{"method":"item/completed","params":{"item":{"text":"\\"threadId\\":\\"t9\\" ${huge}"},` +
        `"threadId":"t1","turnId":"u1"}}\n`,
    );
    // A response to a pending request, in two pieces.
    const answer = connection.request("thread/read");
    const asked = await peer.next((m) => m.method === "thread/read");
    await peer.sendRaw(`{"id":${asked.id},"result":{"thread":"${huge}`);
    await peer.sendRaw(`"}}\n`);
    await expect(answer).rejects.toMatchObject({ code: -32603, method: "thread/read" });
    // A server request codex would otherwise wait on forever.
    await peer.sendRaw(`{"id":"srv-1","method":"item/tool/call","params":{"x":"${huge}"}}\n`);
    expect(await peer.next((m) => m.id === "srv-1")).toMatchObject({ error: { code: -32600 } });
    expect(seen).toEqual([[DROPPED_MESSAGE, {
      threadId: "t1",
      method: "item/completed",
      length: expect.any(Number),
      message: expect.stringContaining("codex sent item/completed of"),
    }]]);
    expect(connection.stats.droppedLines).toBe(3);
  });
});

describe("results", () => {
  test("a known method's result is parsed: codex's extra fields pass, a missing one is a ProtocolError", async () => {
    const { connection, peer } = connectFakePeer();
    const good = connection.request("thread/start", {});
    const r1 = await peer.next();
    await peer.send({
      id: r1.id,
      result: { thread: { id: "t", extra: 1 }, model: "m", more: true },
    });
    expect(await good).toEqual({ thread: { id: "t", extra: 1 }, model: "m", more: true });

    const bad = connection.request("turn/start", {});
    const r2 = await peer.next();
    await peer.send({ id: r2.id, result: { turn: { status: "inProgress" } } });
    const error = await bad.catch((e) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: "protocol_error", method: "turn/start", field: "turn.id" });
    expect(error.message).toStartWith(
      "codex answered turn/start with an unexpected result: turn.id:",
    );
  });

  test("a result that is no object at all names the whole result", async () => {
    const { connection, peer } = connectFakePeer();
    const answer = connection.request("thread/archive", {});
    const r = await peer.next();
    await peer.send({ id: r.id, result: null });
    expect(await answer.catch((e) => e)).toMatchObject({
      code: "protocol_error",
      field: "(the result)",
    });
  });

  test("a method without a schema resolves with its result unchanged", async () => {
    const { connection, peer } = connectFakePeer();
    const answer = connection.request("model/list", {});
    const r = await peer.next();
    await peer.send({ id: r.id, result: [1, 2] });
    expect(await answer).toEqual([1, 2]);
  });
});
