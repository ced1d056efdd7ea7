/**
 * The session lifecycle of the daemon's SessionManager (real store, journal, policies and bridge)
 * over the in-memory provider: spawn, send, inject, interrupt, stop, resume, a crash of the
 * provider's backend, and shutdown. No codex: the provider's turns are scripted by each test.
 */
import { afterAll, expect, test } from "bun:test";
import { ServiceUnavailable } from "../../src/daemon/service.ts";
import { InvalidInput, NoActiveTurn, WrongState } from "../../src/errors.ts";
import { Spec } from "../../src/provider/spec.ts";
import {
  MEMORY_CAPABILITIES,
  type MemoryProviderOptions,
  type TurnScript,
} from "../support/memory-provider.ts";
import { drained, type MemorySessions, memorySessions } from "../support/memory-sessions.ts";

const USAGE = { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0 };

/** Answers each prompt with one message and a result. */
const ECHO: TurnScript = (prompt) => [
  { type: "message", text: `echo: ${prompt}` },
  { type: "result", text: `echo: ${prompt}`, turnStatus: "completed", usage: USAGE },
];

const opened: MemorySessions[] = [];
afterAll(() => opened.forEach((h) => h[Symbol.dispose]()));

function setup(options: MemoryProviderOptions = {}) {
  const h = memorySessions(options);
  opened.push(h);
  const types = (id: string) => h.store.eventsAfter(id, 0, 1000).map((e) => e.type);
  const spec = (prompt: string, extra: Record<string, unknown> = {}) =>
    Spec.parse({ prompt, cwd: h.worktree, ...extra });
  return { ...h, types, spec };
}

test("spawn runs the first turn, journals its events and leaves the session idle", async () => {
  const { sessions, provider, types, spec } = setup({ script: ECHO });
  const spawned = await sessions.spawn(spec("hello"));
  expect(spawned).toEqual({
    sessionId: expect.stringMatching(/^ses_/),
    threadId: provider.handles.get(spawned.sessionId)!.threadId,
    ignoredFields: [],
  });
  await drained();
  expect(types(spawned.sessionId)).toEqual([
    "system",
    "session.started",
    "turn.started",
    "message",
    "result",
  ]);
  expect(await sessions.get(spawned.sessionId)).toMatchObject({
    status: "idle",
    currentTurn: null,
    usage: USAGE,
    threadId: spawned.threadId,
  });
  expect(sessions.capabilities()).toEqual(MEMORY_CAPABILITIES);
});

test("ignoredFields are the provider's plan's, for the fields the caller set", async () => {
  const { sessions, spec } = setup({
    script: ECHO,
    ignoredFields: (_spec, set) =>
      set?.includes("model") ? [{ field: "model", reason: "no models here" }] : [],
  });
  expect(
    (await sessions.spawn(spec("a", { model: "m" }), ["prompt", "cwd", "model"])).ignoredFields,
  )
    .toEqual(["model"]);
  expect((await sessions.spawn(spec("b"), ["prompt", "cwd"])).ignoredFields).toEqual([]);
});

test("a spec the provider's plan refuses is a 400 and records nothing", async () => {
  const { sessions, store, spec } = setup({
    refuse: (s) =>
      s.model === "no-such-model"
        ? new InvalidInput("Cannot spawn session: model no-such-model is unknown", "model")
        : undefined,
  });
  await expect(sessions.spawn(spec("x", { model: "no-such-model" }))).rejects
    .toBeInstanceOf(InvalidInput);
  expect(store.listSessions()).toEqual([]);
});

test("bypassPermissions under a policy without allowBypass never reaches the provider", async () => {
  const { sessions, store, provider, spec } = setup();
  await expect(sessions.spawn(spec("x", { permissionMode: "bypassPermissions" }))).rejects
    .toThrow(/allowBypass/);
  expect(provider.planned).toEqual([]);
  expect(store.listSessions()).toEqual([]);
});

test("send queues behind a running turn; the queued turn starts when it ends", async () => {
  const { sessions, provider, spec } = setup();
  const { sessionId } = await sessions.spawn(spec("first"));
  const handle = provider.handles.get(sessionId)!;
  expect(await sessions.send(sessionId, "second")).toEqual({ queued: true });
  await drained();
  expect(await sessions.get(sessionId)).toMatchObject({ status: "running", queuedTurns: 1 });
  handle.finish("done 1");
  await drained();
  expect(handle.prompts).toEqual(["first", "second"]);
  expect(await sessions.get(sessionId)).toMatchObject({ status: "running", queuedTurns: 0 });
  handle.finish("done 2");
  await drained();
  expect(await sessions.get(sessionId)).toMatchObject({ status: "idle" });
  expect(await sessions.send(sessionId, "third")).toEqual({ turnId: "turn_3", queued: false });
});

test("inject steers the running turn and is refused when nothing runs", async () => {
  const { sessions, provider, store, spec } = setup();
  const { sessionId } = await sessions.spawn(spec("work"));
  const handle = provider.handles.get(sessionId)!;
  expect(await sessions.inject(sessionId, "also this")).toEqual({
    deliveredAs: "steer",
    turnId: "turn_1",
  });
  expect(handle.steered).toEqual(["also this"]);
  handle.finish();
  await drained();
  await expect(sessions.inject(sessionId, "late")).rejects.toBeInstanceOf(NoActiveTurn);
  const prompts = store.eventsOfType(sessionId, "system").map((e) => e.steer ?? false);
  expect(prompts).toEqual([false, true, true]); // the spawn's prompt, then both steers recorded
});

test("interrupt drops queued turns and ends the running one", async () => {
  const { sessions, provider, types, spec } = setup();
  const { sessionId } = await sessions.spawn(spec("long"));
  await sessions.send(sessionId, "queued");
  await sessions.interrupt(sessionId);
  await drained();
  expect(types(sessionId).slice(-2)).toEqual(["system", "error"]);
  expect(provider.handles.get(sessionId)!.prompts).toEqual(["long"]);
  expect(await sessions.get(sessionId)).toMatchObject({ status: "idle", queuedTurns: 0 });
});

test("stop ends the session; it takes no more turns and stopping again succeeds", async () => {
  const { sessions, provider, store, spec } = setup();
  const { sessionId } = await sessions.spawn(spec("long"));
  await sessions.stop(sessionId);
  expect(provider.handles.has(sessionId)).toBe(false);
  expect(store.eventsOfType(sessionId, "error").map((e) => e.code)).toEqual(["context_cancelled"]);
  expect(await sessions.get(sessionId)).toMatchObject({ status: "stopped" });
  await expect(sessions.send(sessionId, "more")).rejects.toBeInstanceOf(WrongState);
  await sessions.stop(sessionId);
});

test("a crash ends live sessions with app_server_crashed; they resume once it is back", async () => {
  const { sessions, provider, store, spec } = setup({ script: ECHO });
  const { sessionId, threadId } = await sessions.spawn(spec("one"));
  const busy = await sessions.spawn(spec("two"));
  await drained();
  provider.handles.get(busy.sessionId)!.emit({ type: "turn.started", turnId: "t" });
  provider.crash("SIGKILL");
  await drained();
  for (const id of [sessionId, busy.sessionId]) {
    expect(store.eventsOfType(id, "error").map((e) => e.code)).toEqual(["app_server_crashed"]);
    expect(await sessions.get(id)).toMatchObject({ status: "interrupted" });
  }
  const health = await sessions.health();
  expect(health).toMatchObject({ status: "degraded", codex: { state: "degraded", pid: null } });
  expect(health.stderr).toEqual(["memory provider: memory backend exited: SIGKILL"]);
  await expect(sessions.resume(sessionId, spec("again"))).rejects.toBeInstanceOf(
    ServiceUnavailable,
  );

  provider.recover();
  const resumed = await sessions.resume(sessionId, spec("again"));
  expect(resumed).toMatchObject({ sessionId, threadId });
  await drained();
  expect(await sessions.get(sessionId)).toMatchObject({ status: "idle" });
  const texts = store.eventsOfType(sessionId, "result").map((e) => e.text);
  expect(texts).toEqual(["echo: one", "echo: again"]);
  expect(await sessions.health()).toMatchObject({ status: "ok", codex: { restarts: 1 } });
});

test("a failed start marks the session failed with start_failed", async () => {
  const { sessions, provider, store, spec } = setup();
  provider.startFailure = new Error("thread/start refused");
  await expect(sessions.spawn(spec("x"))).rejects.toThrow("thread/start refused");
  const [row] = store.listSessions();
  expect(row).toMatchObject({ status: "failed", failure: "thread/start refused" });
  expect(store.eventsOfType(row!.id, "error").map((e) => e.code)).toEqual(["start_failed"]);
});

test("shutdownAll ends every live session with daemon_shutdown, leaving it resumable", async () => {
  const { sessions, store, spec } = setup();
  const { sessionId } = await sessions.spawn(spec("long"));
  await sessions.shutdownAll();
  expect(store.eventsOfType(sessionId, "error").map((e) => e.code)).toEqual(["daemon_shutdown"]);
  expect(await sessions.get(sessionId)).toMatchObject({ status: "interrupted" });
  await expect(sessions.spawn(spec("late"))).rejects.toBeInstanceOf(ServiceUnavailable);
});
