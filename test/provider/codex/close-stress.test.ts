/**
 * The close protocol under races, at the provider level: a real JsonRpcConnection to a fake
 * codex, with stop, interrupt, the turn completing over the wire and the child crashing (its
 * stdout ending) fired in random order and at random moments, 1000 times. The handle-level
 * version with a fake connection is in handle.test.ts; this one adds the wire, the provider's
 * crash fan-out to every session, and a bystander session on the same child.
 */
import { expect, test } from "bun:test";
import { isTerminal, type SessionEvent } from "../../../src/provider/events.ts";
import type { CodexHandle } from "../../../src/provider/codex/handle.ts";
import type { Handle } from "../../../src/provider/types.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";
import { EventRecorder } from "../../support/provider-fixture.ts";

const ROUNDS = 1000;

/** Watches a session: what its reader saw, and anything the handle emitted after it closed. */
function watch(app: FakeAppServer, handle: Handle) {
  const codexHandle = app.provider.handles.get(handle.sessionId) as CodexHandle;
  const emittedAfterClose: string[] = [];
  const emit = codexHandle.emit.bind(codexHandle);
  // Every event of a handle goes through emit: an instance property sees them all.
  codexHandle.emit = (body) => {
    if (codexHandle.closed) emittedAfterClose.push(body.type);
    emit(body);
  };
  return { recorder: new EventRecorder(handle), emittedAfterClose, turnId: app.turnOf(handle) };
}

/** Yields to the event loop a random number of times, so the racers interleave differently. */
async function jitter(): Promise<void> {
  const n = Math.floor(Math.random() * 4);
  for (let i = 0; i < n; i++) {
    await (Math.random() < 0.5 ? Promise.resolve() : new Promise((r) => setTimeout(r, 0)));
  }
}

/** The close protocol a session's reader must see. */
function expectClosedCleanly(events: SessionEvent[], turnId: string, label: string) {
  const context = `${label}: ${events.map((e) => e.type === "error" ? e.code : e.type)}`;
  const terminals = events.filter(isTerminal);
  // Exactly one terminal event for the turn; a crash after it is reported once, session-wide.
  expect(terminals.filter((e) => e.turnId === turnId), context).toHaveLength(1);
  const others = terminals.filter((e) => e.turnId !== turnId);
  expect(others.length, context).toBeLessThanOrEqual(1);
  expect(others.every((e) => e.type === "error" && e.code === "app_server_crashed"), context)
    .toBe(true);
  // After the turn's terminal: only the session-wide crash notice or the stop notice.
  const after = events.slice(events.findIndex((e) => isTerminal(e) && e.turnId === turnId) + 1);
  expect(
    after.every((e) =>
      others.includes(e) || (e.type === "system" && e.subtype === "session_stopped")
    ),
    context,
  ).toBe(true);
  expect(events.some((e) => e.type === "text.delta" && e.text === "late"), context).toBe(false);
}

test(`stop, interrupt, completion and a crash racing ${ROUNDS} times: one terminal per turn, one close per session`, async () => {
  const seen = new Set<string>();
  for (let round = 0; round < ROUNDS; round++) {
    await using app = new FakeAppServer({ interruptCompletes: true });
    const a = await app.spawn("racer");
    const b = await app.spawn("bystander");
    const racer = watch(app, a);
    const bystander = watch(app, b);
    const racers: Record<string, () => Promise<unknown>> = {
      complete: () => app.completeTurn(a.threadId, racer.turnId, "done"),
      stop: () => a.stop(),
      interrupt: () => a.interrupt(),
      crash: () => app.crash(),
    };
    const chosen = Object.keys(racers).filter(() => Math.random() < 0.75);
    chosen.sort(() => Math.random() - 0.5);
    seen.add(chosen.join(","));
    // Failures are expected (an interrupt after a crash finds the connection closed): what
    // matters is what the readers saw. Every racer must settle, though: none may hang.
    await Promise.allSettled(chosen.map(async (name) => {
      await jitter();
      await racers[name]!();
    }));
    await app.provider.shutdown();
    // Late traffic from a codex that outlived the sessions reaches nobody.
    await app.notify("item/agentMessage/delta", {
      threadId: a.threadId,
      turnId: racer.turnId,
      itemId: "m",
      delta: "late",
    }).catch(() => {});
    await Promise.all([racer.recorder.done, bystander.recorder.done]);
    const label = `round ${round} (${chosen.join(", ")})`;
    expectClosedCleanly(racer.recorder.events, racer.turnId, `${label} racer`);
    expectClosedCleanly(bystander.recorder.events, bystander.turnId, `${label} bystander`);
    expect(racer.emittedAfterClose, label).toEqual([]);
    expect(bystander.emittedAfterClose, label).toEqual([]);
    // Each session closed exactly once, and nothing is left behind.
    expect(Object.fromEntries(app.unsubscribed), label).toEqual({
      [a.threadId]: 1,
      [b.threadId]: 1,
    });
    expect(app.provider.handles.size, label).toBe(0);
    expect(app.connection.pendingCount, label).toBe(0);
  }
  // The random choice covered many different orders, not one lucky path.
  expect(seen.size).toBeGreaterThan(20);
});

test("a turn past its deadline says nothing more: codex's late output for it is dropped", async () => {
  await using app = new FakeAppServer();
  const handle = await app.spawn("slow", { spec: { timeoutMs: 1 } });
  const { recorder, emittedAfterClose, turnId } = watch(app, handle);
  const timedOut = await recorder.waitFor(isTerminal);
  expect(timedOut).toMatchObject({ type: "error", code: "timeout", turnId });
  // codex is still finishing the turn it was asked to interrupt.
  await app.playTurn(handle.threadId, turnId, "too late");
  await app.notify("turn/completed", {
    threadId: handle.threadId,
    turn: { id: turnId, status: "interrupted", items: [], error: null },
  });
  // The session takes its next turn, and the stream holds nothing of the old one after its end.
  const next = await handle.send("next");
  await app.playTurn(handle.threadId, next.turnId!, "on time");
  expect(await recorder.waitFor((e) => isTerminal(e) && e.turnId === next.turnId))
    .toMatchObject({ type: "result", text: "on time" });
  await handle.stop();
  await recorder.done;
  const afterTimeout = recorder.events.slice(recorder.events.indexOf(timedOut) + 1);
  expect(afterTimeout.filter((e) => e.turnId === turnId)).toEqual([]);
  expect(recorder.terminals().map((e) => e.type === "error" ? e.code : e.type)).toEqual([
    "timeout",
    "result",
  ]);
  expect(emittedAfterClose).toEqual([]);
});
