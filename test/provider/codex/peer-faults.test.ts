/**
 * A misbehaving app-server, at the provider level: the CodexProvider on a JsonRpcConnection to an
 * in-process fake codex. Connection-level behaviour (garbage is skipped, unknown ids are counted,
 * timeouts and aborts end a request) is in test/jsonrpc.test.ts; here each fault happens while
 * other sessions run on the same connection, and those sessions must not notice.
 */
import { describe, expect, test } from "bun:test";
import { RequestAborted, RequestTimeout } from "../../../src/errors.ts";
import { isTerminal, type SessionEvent } from "../../../src/provider/events.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";
import { EventRecorder } from "../../support/provider-fixture.ts";

function texts(events: SessionEvent[]): string {
  return events.map((e) => e.type === "text.delta" ? e.text : "").join("");
}

/** Two sessions whose turns are running, each with its recorder. */
async function twoSessions(app: FakeAppServer) {
  const a = await app.spawn("first");
  const b = await app.spawn("second");
  return {
    a,
    b,
    aEvents: new EventRecorder(a),
    bEvents: new EventRecorder(b),
    aTurn: app.turnOf(a),
    bTurn: app.turnOf(b),
  };
}

describe("a peer that writes garbage", () => {
  test("junk between two sessions' notifications is skipped; both turns end with their text", async () => {
    await using app = new FakeAppServer({ maxLineLength: 4096 });
    const { a, b, aEvents, bEvents, aTurn, bTurn } = await twoSessions(app);
    const junk = [
      "not json at all\n",
      "[1,2,3]\n",
      '{"id":"x"}\n',
      "\x1b[31mERROR\x1b[0m codex_core: a tracing line on stdout\n",
      '{"method":"turn/completed","params":{"threadId":"' + a.threadId + '","tu\n', // cut short
      "z".repeat(10_000) + "\n", // over-long
      '{"method":"item/agentMessage/delta","params":' + "\n", // truncated JSON
    ];
    await app.notify("item/agentMessage/delta", {
      threadId: a.threadId,
      turnId: aTurn,
      itemId: "m",
      delta: "alp",
    });
    for (const line of junk) await app.peer.sendRaw(line);
    await app.notify("item/agentMessage/delta", {
      threadId: b.threadId,
      turnId: bTurn,
      itemId: "m",
      delta: "bet",
    });
    await app.completeTurn(a.threadId, aTurn, "alpha");
    await app.peer.sendRaw("\0\0\0garbage\n");
    await app.completeTurn(b.threadId, bTurn, "beta");
    const aResult = await aEvents.waitFor(isTerminal);
    const bResult = await bEvents.waitFor(isTerminal);
    expect(aResult).toMatchObject({ type: "result", turnId: aTurn, text: "alpha" });
    expect(bResult).toMatchObject({ type: "result", turnId: bTurn, text: "beta" });
    expect(texts(aEvents.events)).toBe("alp");
    expect(texts(bEvents.events)).toBe("bet");
    expect(app.connection.stats.droppedLines).toBe(1);
    expect(app.connection.stats.parseErrors).toBe(7);
    expect(app.connection.closed).toBe(false);
    // The sessions take their next turns on the same connection.
    const next = await a.send("again");
    await app.playTurn(a.threadId, next.turnId!, "alpha two");
    expect(await aEvents.waitFor((e) => isTerminal(e) && e.turnId === next.turnId))
      .toMatchObject({ type: "result", text: "alpha two" });
  });

  test("a notification with a malformed payload for a live session is counted, not fatal", async () => {
    await using app = new FakeAppServer();
    const { a, b, aEvents, bEvents, aTurn, bTurn } = await twoSessions(app);
    await app.notify("item/agentMessage/delta", { threadId: a.threadId, turnId: 42 });
    await app.notify("turn/completed", { threadId: a.threadId, turn: { status: "exploded" } });
    await app.notify("made/up/method", { threadId: a.threadId });
    await app.playTurn(a.threadId, aTurn, "alpha");
    await app.playTurn(b.threadId, bTurn, "beta");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
    expect(await bEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "beta" });
    expect(app.provider.handles.get(a.sessionId)?.stats).toEqual({
      invalidNotifications: 2,
      unknownNotifications: 1,
    });
  });
});

describe("a peer that answers ids it was never asked", () => {
  test("unknown, duplicate and string ids are ignored; pending requests get their own answers", async () => {
    await using app = new FakeAppServer();
    const { a, aEvents, aTurn } = await twoSessions(app);
    // thread/start for a third session is left pending while stray answers arrive.
    app.stallNext.set("thread/start", 1);
    const spawning = app.spawn("third");
    while (app.stalled.length === 0) await new Promise((r) => setTimeout(r, 1));
    const pending = app.stalled[0]!;
    await app.peer.send({ id: 987_654, result: { thread: { id: "thread-phantom" } } });
    await app.peer.send({ id: `${pending.id}-x`, result: { thread: { id: "thread-phantom" } } });
    await app.peer.send({ id: 123_456, error: { code: -32603, message: "for nobody" } });
    // A second answer to a request that was answered already (a's turn/start).
    const aTurnStart = app.peer.received.find((m) =>
      m.method === "turn/start" && (m.params as { threadId: string }).threadId === a.threadId
    )!;
    await app.peer.send({ id: aTurnStart.id, result: { turn: { id: "turn-duplicate" } } });
    await app.peer.send({ id: pending.id, result: { thread: { id: "thread-third" } } });
    const third = await spawning;
    expect(third.threadId).toBe("thread-third");
    expect(app.connection.stats.unknownResponses).toBe(4);
    expect([...app.provider.handles.values()].map((h) => h.threadId).sort()).toEqual([
      "thread-1",
      "thread-2",
      "thread-third",
    ]);
    await app.playTurn(a.threadId, aTurn, "alpha");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ turnId: aTurn, text: "alpha" });
  });
});

describe("a peer that stalls on one request", () => {
  test("a thread/start with no answer times out; the session beside it completes", async () => {
    await using app = new FakeAppServer({ defaultTimeoutMs: 200 });
    const { a, aEvents, aTurn } = await twoSessions(app);
    app.stallNext.set("thread/start", 1);
    const failed = app.spawn("never starts").catch((e) => e);
    await app.playTurn(a.threadId, aTurn, "alpha");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
    const error = await failed;
    expect(error).toBeInstanceOf(RequestTimeout);
    expect(error.message).toBe("Request thread/start timed out after 200 ms");
    expect(app.provider.handles.size).toBe(2);
    // Its late answer finds no request and starts no session.
    await app.peer.send({ id: app.stalled[0]!.id, result: { thread: { id: "thread-late" } } });
    const next = await a.send("again");
    await app.playTurn(a.threadId, next.turnId!, "alpha two");
    await aEvents.waitFor((e) => isTerminal(e) && e.turnId === next.turnId);
    expect(app.connection.stats.unknownResponses).toBe(1);
    expect([...app.provider.handles.values()].some((h) => h.threadId === "thread-late"))
      .toBe(false);
  });

  test("a spawn aborted while thread/start stalls ends with RequestAborted; others carry on", async () => {
    await using app = new FakeAppServer();
    const { a, b, aEvents, bEvents, aTurn, bTurn } = await twoSessions(app);
    app.stallNext.set("thread/start", 1);
    const abort = new AbortController();
    const failed = app.spawn("aborted", { signal: abort.signal }).catch((e) => e);
    while (app.stalled.length === 0) await new Promise((r) => setTimeout(r, 1));
    abort.abort(new Error("runner went away"));
    expect(await failed).toBeInstanceOf(RequestAborted);
    expect(app.connection.pendingCount).toBe(0);
    await app.playTurn(a.threadId, aTurn, "alpha");
    await app.playTurn(b.threadId, bTurn, "beta");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
    expect(await bEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "beta" });
    expect(app.provider.handles.size).toBe(2);
  });

  test("a spawn aborted while its turn/start stalls ends, and the half-made session is closed", async () => {
    await using app = new FakeAppServer();
    const { a, aEvents, aTurn } = await twoSessions(app);
    app.stallNext.set("turn/start", 1);
    const abort = new AbortController();
    const failed = app.spawn("aborted", { signal: abort.signal }).catch((e) => e);
    while (app.stalled.length === 0) await new Promise((r) => setTimeout(r, 1));
    abort.abort(new Error("runner went away"));
    expect(await failed).toBeInstanceOf(RequestAborted);
    expect(app.provider.handles.size).toBe(2);
    expect(app.connection.pendingCount).toBe(0);
    await app.playTurn(a.threadId, aTurn, "alpha");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
  });

  test("a stop whose turn/interrupt codex never answers still ends the session", async () => {
    await using app = new FakeAppServer();
    const { a, b, aEvents, bEvents, bTurn } = await twoSessions(app);
    app.stallNext.set("turn/interrupt", 1);
    const stopping = a.stop();
    await app.playTurn(b.threadId, bTurn, "beta");
    expect(await bEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "beta" });
    await stopping;
    await aEvents.done;
    expect(aEvents.terminals()).toEqual([
      expect.objectContaining({ type: "error", code: "context_cancelled" }),
    ]);
    expect(aEvents.events.at(-1)).toMatchObject({ type: "system", subtype: "session_stopped" });
    expect(app.provider.handles.has(a.sessionId)).toBe(false);
  });
});

describe("a peer that talks about threads nobody owns", () => {
  test("notifications for an unknown thread reach no session and are logged", async () => {
    await using app = new FakeAppServer();
    const { a, b, aEvents, bEvents, aTurn, bTurn } = await twoSessions(app);
    const ghost = "thread-ghost";
    await app.playTurn(ghost, "turn-ghost", "boo");
    await app.notify("error", {
      threadId: ghost,
      turnId: "turn-ghost",
      error: { message: "ghost failed" },
      willRetry: false,
    });
    // A turn id of a live session on the wrong thread must not end that session's turn either.
    await app.notify("turn/completed", {
      threadId: ghost,
      turn: { id: aTurn, status: "failed", items: [], error: { message: "not yours" } },
    });
    await app.playTurn(a.threadId, aTurn, "alpha");
    await app.playTurn(b.threadId, bTurn, "beta");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
    expect(await bEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "beta" });
    for (const events of [aEvents.events, bEvents.events]) {
      expect(JSON.stringify(events)).not.toMatch(/boo|ghost|not yours/);
    }
    expect(app.logs.filter((l) => l.message === "notification with no session")).toHaveLength(6);
    // Its turn/started is answered: a turn on a thread no session follows is interrupted.
    expect(
      app.logs.filter((l) =>
        l.message === "interrupted a turn codex started on a thread no session follows"
      ),
    ).toHaveLength(1);
  });

  test("a server request for an unknown thread is refused at once; sessions are untouched", async () => {
    await using app = new FakeAppServer();
    const { a, aEvents, aTurn } = await twoSessions(app);
    await app.peer.send({
      id: "ghost-approval",
      method: "item/commandExecution/requestApproval",
      params: {
        threadId: "thread-ghost",
        turnId: "t",
        itemId: "i",
        command: "echo hi",
        cwd: "/",
      },
    });
    await app.peer.send({ id: 77, method: "item/fileChange/requestApproval", params: {} });
    const refused = await app.peer.next((m) => m.id === "ghost-approval");
    expect(refused).toMatchObject({
      error: { code: -32602, message: "No codexd session for thread thread-ghost" },
    });
    expect(await app.peer.next((m) => m.id === 77)).toMatchObject({ error: { code: -32602 } });
    await app.playTurn(a.threadId, aTurn, "alpha");
    expect(await aEvents.waitFor(isTerminal)).toMatchObject({ type: "result", text: "alpha" });
    expect(aEvents.events.some((e) => e.type === "approval")).toBe(false);
  });
});
