import { describe, expect, test } from "bun:test";
import { ConnectionClosed, RequestAborted, RequestTimeout, RpcError } from "../../../src/errors.ts";
import { JsonRpcConnection } from "../../../src/provider/jsonrpc/connection.ts";
import { connectPlainPeer } from "../../support/fake-peer.ts";

describe("correlation", () => {
  test("1000 concurrent requests answered in random order each get their own result", async () => {
    const { connection, peer } = connectPlainPeer();
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
    const { connection, peer } = connectPlainPeer();
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
    const { connection, peer } = connectPlainPeer();
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
    const { connection, peer } = connectPlainPeer();
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
    const { peer } = connectPlainPeer();
    await peer.send({ id: "a", method: "item/tool/call", params: {} });
    expect(await peer.next((m) => m.id === "a")).toMatchObject({ error: { code: -32601 } });
  });

  test("a throwing handler answers -32603; a thrown RpcError keeps its code", async () => {
    const { connection, peer } = connectPlainPeer();
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

describe("notifications", () => {
  test("every notification goes to the one handler, in order; a throwing handler is logged", async () => {
    const logs: string[] = [];
    const { connection, peer } = connectPlainPeer({ log: (_level, message) => logs.push(message) });
    const seen: string[] = [];
    connection.onNotification((method) => {
      seen.push(method);
      if (method === "bad") throw new Error("listener bug");
    });
    await peer.send({ method: "a", params: { threadId: "t1" } });
    await peer.send({ method: "bad" });
    await peer.send({ method: "b", params: {} });
    const done = connection.request("sync");
    const r = await peer.next((m) => m.method === "sync");
    await peer.send({ id: r.id, result: null });
    await done;
    expect(seen).toEqual(["a", "bad", "b"]);
    expect(logs).toContain("notification handler threw");
  });
});

describe("timeouts and aborts", () => {
  test("a request with no answer ends with RequestTimeout", async () => {
    const { connection } = connectPlainPeer();
    const error = await connection.request("slow", {}, { timeoutMs: 5 }).catch((e) => e);
    expect(error).toBeInstanceOf(RequestTimeout);
    expect(connection.pendingCount).toBe(0);
  });

  test("an abort before sending and while pending end with RequestAborted", async () => {
    const { connection, peer } = connectPlainPeer();
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

describe("closing", () => {
  test("a crash with requests pending fails them all with ConnectionClosed; onClose fires once", async () => {
    const { connection, peer } = connectPlainPeer();
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
    const { connection, peer } = connectPlainPeer();
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
    const { connection } = connectPlainPeer();
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
    const { connection, peer } = connectPlainPeer({
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

  test("an over-long line goes to onOversizeLine, which can fail the request it answered", async () => {
    const dropped: number[] = [];
    const { connection, peer } = connectPlainPeer({
      maxLineLength: 100,
      onOversizeLine: (line) => {
        dropped.push(line.length);
        connection.failRequest(1, (method) => new Error(`${method}: answer lost`));
      },
    });
    const answer = connection.request("thread/read");
    await peer.next((m) => m.method === "thread/read");
    await peer.sendRaw(`{"id":1,"result":"${"z".repeat(300)}"}\n`);
    await expect(answer).rejects.toThrow("thread/read: answer lost");
    expect(dropped).toEqual([320]);
    expect(connection.failRequest(1, () => new Error("again"))).toBe(false);
  });

  test("messages without the jsonrpc member are accepted (codex omits it)", async () => {
    const { connection, peer } = connectPlainPeer();
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
