import { describe, expect, test } from "bun:test";
import { ConnectionClosed, RequestAborted, RequestTimeout, RpcError } from "../src/errors.ts";
import { DROPPED_MESSAGE } from "../src/provider/codex/messages.ts";
import { JsonRpcConnection } from "../src/provider/codex/jsonrpc.ts";
import type { RetryPolicy } from "../src/provider/codex/retry.ts";
import { connectFakePeer } from "./support/fake-peer.ts";

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

describe("correlation", () => {
  test("1000 concurrent requests answered in random order each get their own result", async () => {
    const { connection, peer } = connectFakePeer();
    const results = Array.from({ length: 1000 }, (_, i) => connection.request("echo", { i }));
    const requests = [];
    for (let i = 0; i < 1000; i++) requests.push(await peer.next((m) => m.method === "echo"));
    requests.sort(() => Math.random() - 0.5);
    for (const r of requests) {
      await peer.send({ id: r.id, result: { i: (r.params as { i: number }).i } });
    }
    const answers = await Promise.all(results);
    expect(answers.map((a) => (a as { i: number }).i)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i),
    );
    expect(connection.pendingCount).toBe(0);
  });

  test("an error response becomes an RpcError with codex's code and the method", async () => {
    const { connection, peer } = connectFakePeer();
    const answer = connection.request("turn/steer", {});
    const request = await peer.next();
    await peer.send({
      id: request.id,
      error: { code: -32600, message: "no active turn to steer" },
    });
    const error = await answer.catch((e) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({
      method: "turn/steer",
      code: -32600,
      message: "no active turn to steer",
    });
  });

  test("a response for an unknown id is ignored and counted", async () => {
    const { connection, peer } = connectFakePeer();
    await peer.send({ id: 999, result: {} });
    const answer = connection.request("x");
    const request = await peer.next();
    await peer.send({ id: request.id, result: "ok" });
    expect(await answer).toBe("ok");
    expect(connection.stats.unknownResponses).toBe(1);
  });
});

describe("server requests", () => {
  test.each([7, "req-7"])("id %p is echoed back exactly as received", async (id) => {
    const { connection, peer } = connectFakePeer();
    connection.onServerRequest((request) =>
      Promise.resolve({ decision: "accept", method: request.method })
    );
    await peer.send({
      id,
      method: "item/commandExecution/requestApproval",
      params: { threadId: "t" },
    });
    const reply = await peer.next((m) => m.id === id);
    expect(reply).toMatchObject({ id, result: { decision: "accept" } });
  });

  test("with no handler the request is answered -32601 at once", async () => {
    const { peer } = connectFakePeer();
    await peer.send({ id: "a", method: "item/tool/call", params: {} });
    expect(await peer.next((m) => m.id === "a")).toMatchObject({ error: { code: -32601 } });
  });

  test("a throwing handler answers -32603; a thrown RpcError keeps its code", async () => {
    const { connection, peer } = connectFakePeer();
    connection.onServerRequest((request) =>
      request.method === "boom"
        ? Promise.reject(new Error("kaput"))
        : Promise.reject(new RpcError(request.method, -32602, "bad params"))
    );
    await peer.send({ id: 1, method: "boom" });
    await peer.send({ id: 2, method: "other" });
    expect(await peer.next((m) => m.id === 1)).toMatchObject({
      error: { code: -32603, message: "kaput" },
    });
    expect(await peer.next((m) => m.id === 2)).toMatchObject({ error: { code: -32602 } });
  });
});

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

describe("timeouts and aborts", () => {
  test("a request with no answer ends with RequestTimeout", async () => {
    const { connection } = connectFakePeer();
    const error = await connection.request("slow", {}, { timeoutMs: 5 }).catch((e) => e);
    expect(error).toBeInstanceOf(RequestTimeout);
    expect(connection.pendingCount).toBe(0);
  });

  test("an abort before sending and while pending end with RequestAborted", async () => {
    const { connection, peer } = connectFakePeer();
    const before = new AbortController();
    before.abort();
    expect(await connection.request("x", {}, { signal: before.signal }).catch((e) => e))
      .toBeInstanceOf(RequestAborted);
    const during = new AbortController();
    const pending = connection.request("y", {}, { signal: during.signal });
    await peer.next((m) => m.method === "y");
    during.abort();
    expect(await pending.catch((e) => e)).toBeInstanceOf(RequestAborted);
    expect(connection.pendingCount).toBe(0);
  });
});

describe("retries", () => {
  // The policy itself is tested in test/provider/retry.test.ts; here, the connection's use of it.
  test("requestWithRetry succeeds on the third attempt after two overloads", async () => {
    const delays: number[] = [];
    const retried: string[] = [];
    const { connection, peer } = connectFakePeer({
      retry: instantRetry(delays),
      onRetry: (info) => retried.push(info.method),
    });
    const answer = connection.requestWithRetry("thread/start", {});
    for (let i = 0; i < 3; i++) {
      const r = await peer.next((m) => m.method === "thread/start");
      await peer.send(
        i < 2
          ? { id: r.id, error: { code: -32001, message: "Server overloaded; retry later." } }
          : { id: r.id, result: "ok" },
      );
    }
    expect(await answer).toBe("ok");
    expect(delays).toEqual([1000, 2000]);
    expect(retried).toEqual(["thread/start", "thread/start"]);
    expect(connection.stats.retries).toBe(2);
    expect(connection.pendingCount).toBe(0);
  });

  test("request sends once: a -32001 reaches the caller", async () => {
    const { connection, peer } = connectFakePeer({ retry: instantRetry() });
    const answer = connection.request("thread/start", {});
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
    const error = await connection.requestWithRetry(method, {}).catch((e) => e);
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
    const answer = connection.requestWithRetry("thread/start", {}, { timeoutMs: 1500 });
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
    const answer = connection.requestWithRetry("thread/start", {});
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
    const answer = connection.requestWithRetry("thread/start", {}, { signal: controller.signal });
    const r = await peer.next();
    await peer.send({ id: r.id, error: { code: -32001, message: "overloaded" } });
    expect(await answer.catch((e) => e)).toBeInstanceOf(RequestAborted);
    expect(peer.received.filter((m) => m.method === "thread/start")).toEqual([]);
  });
});

describe("closing", () => {
  test("a crash with requests pending fails them all with ConnectionClosed; onClose fires once", async () => {
    const { connection, peer } = connectFakePeer();
    const closes: Error[] = [];
    connection.onClose((cause) => closes.push(cause));
    const pending = Array.from({ length: 10 }, (_, i) => connection.request(`m${i}`));
    await peer.next((m) => m.method === "m9");
    await peer.end();
    const errors = await Promise.all(pending.map((p) => p.catch((e) => e)));
    expect(errors.every((e) => e instanceof ConnectionClosed)).toBe(true);
    await connection.stop();
    expect(closes).toHaveLength(1);
    expect(connection.closed).toBe(true);
    expect(await connection.request("after").catch((e) => e)).toBeInstanceOf(ConnectionClosed);
  });

  test("a response written just before the stream ends is delivered, not lost", async () => {
    const { connection, peer } = connectFakePeer();
    const answer = connection.request("last");
    const other = connection.request("never");
    const r = await peer.next((m) => m.method === "last");
    // The answer and the end of stream arrive together, in one write, with no trailing newline.
    await peer.sendRaw(JSON.stringify({ id: r.id, result: "made it" }));
    await peer.end();
    expect(await answer).toBe("made it");
    expect(await other.catch((e) => e)).toBeInstanceOf(ConnectionClosed);
  });

  test("stop fails pending requests with the given cause and is idempotent", async () => {
    const { connection } = connectFakePeer();
    const pending = connection.request("x").catch((e) => e);
    const cause = new ConnectionClosed("codex app-server exited: SIGKILL");
    await Promise.all([
      connection.stop(cause),
      connection.stop(),
      connection[Symbol.asyncDispose](),
    ]);
    expect(await pending).toBe(cause);
  });

  test("stop is bounded even when the peer never reads", async () => {
    const stuck = new WritableStream<Uint8Array>({ write: () => new Promise(() => {}) }, {
      highWaterMark: 1,
    });
    const connection = new JsonRpcConnection(new ReadableStream(), stuck);
    void connection.notify("a").catch(() => {});
    void connection.notify("b").catch(() => {});
    await connection.stop(undefined, 20);
    expect(connection.closed).toBe(true);
  });
});

describe("garbage", () => {
  test("non-JSON, wrongly shaped and over-long lines are skipped; the connection keeps working", async () => {
    const logs: string[] = [];
    const { connection, peer } = connectFakePeer({
      maxLineLength: 1000,
      log: (_level, message) => logs.push(message),
    });
    await peer.sendRaw("this is not json\n");
    await peer.sendRaw("[1,2,3]\n");
    await peer.sendRaw('{"id":"x"}\n');
    await peer.sendRaw("\x1b[31mERROR\x1b[0m tracing line\n");
    // 5000 characters with no newline, in pieces, then its end and a good message.
    for (let i = 0; i < 5; i++) await peer.sendRaw("y".repeat(1000));
    await peer.sendRaw('"}\n');
    const answer = connection.request("ping");
    const r = await peer.next((m) => m.method === "ping");
    await peer.send({ id: r.id, result: "pong" });
    expect(await answer).toBe("pong");
    expect(connection.stats.droppedLines).toBe(1);
    expect(connection.stats.parseErrors).toBe(4);
    expect(logs.some((l) => l.includes("over-long"))).toBe(true);
  });

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

  test("messages without the jsonrpc member are accepted (codex omits it)", async () => {
    const { connection, peer } = connectFakePeer();
    const answer = connection.request("initialize");
    const r = await peer.next();
    await peer.sendRaw(`{"id":${r.id},"result":{"userAgent":"codex/0.169.0"}}\n`);
    expect(await answer).toEqual({ userAgent: "codex/0.169.0" });
  });
});

describe("writing", () => {
  test("a slow reader on the other side gets every line whole and in order", async () => {
    const received: string[] = [];
    let pendingText = "";
    const slow = new WritableStream<Uint8Array>({
      async write(chunk) {
        await new Promise((r) => setTimeout(r, 0));
        pendingText += new TextDecoder().decode(chunk);
        const parts = pendingText.split("\n");
        pendingText = parts.pop()!;
        received.push(...parts);
      },
    }, { highWaterMark: 1 });
    const connection = new JsonRpcConnection(new ReadableStream(), slow);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => connection.notify("n", { i, pad: "x".repeat(i * 10) })),
    );
    expect(received.map((l) => JSON.parse(l).params.i)).toEqual(
      Array.from({ length: 200 }, (_, i) => i),
    );
    await connection.stop();
  });
});
