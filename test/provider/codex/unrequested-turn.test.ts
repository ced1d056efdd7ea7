/**
 * A turn codex starts on its own is refused (handle.ts `#refuseTurn`): interrupted, its output
 * dropped, its approvals declined without asking the bridge, its tokens still counted. codex 0.169
 * does this for a goal the model created (`create_goal`: automatic continuation turns after the
 * runner's turn ended, agent-tools.test.ts shows it on the real codex); codexd pins `goals` off, so
 * the real codex cannot be made to do it under codexd's thread settings and a fake peer plays it.
 */
import { expect, test } from "bun:test";
import { isTerminal } from "../../../src/provider/events.ts";
import type { ApprovalRequest, Approver } from "../../../src/provider/types.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";
import { EventRecorder } from "../../support/provider-fixture.ts";

const ROGUE = "turn-rogue";

function usage(total: number) {
  const breakdown = {
    totalTokens: total,
    inputTokens: total,
    cachedInputTokens: 0,
    cacheWriteInputTokens: 0,
    outputTokens: 0,
    reasoningOutputTokens: 0,
  };
  return { total: breakdown, last: breakdown };
}

test("a turn codex starts after the runner's turn ended is interrupted, silenced and declined", async () => {
  const asked: ApprovalRequest[] = [];
  const approver: Approver = {
    decide(request) {
      asked.push(request);
      return Promise.resolve({ decision: "allow", source: "test", reason: "allowed" });
    },
  };
  await using app = new FakeAppServer({ approver });
  const handle = await app.spawn("first");
  const events = new EventRecorder(handle);
  const first = app.turnOf(handle);
  await app.playTurn(handle.threadId, first, "first answer");
  expect(await events.waitFor(isTerminal)).toMatchObject({ type: "result", turnId: first });

  // codex continues on its own, as it does for a goal.
  const { threadId } = handle;
  await app.notify("turn/started", {
    threadId,
    turn: { id: ROGUE, status: "inProgress", items: [] },
  });
  expect(await events.waitFor((e) => e.type === "system" && e.subtype === "turn_refused"))
    .toMatchObject({ turnId: ROGUE });
  expect(await app.peer.next((m) => m.method === "turn/interrupt")).toMatchObject({
    params: { threadId, turnId: ROGUE },
  });

  await app.notify("item/agentMessage/delta", {
    threadId,
    turnId: ROGUE,
    itemId: "r",
    delta: "ROGUE-TEXT",
  });
  await app.notify("thread/tokenUsage/updated", { threadId, turnId: ROGUE, tokenUsage: usage(42) });
  await app.peer.send({
    id: "rogue-approval",
    method: "item/commandExecution/requestApproval",
    params: { threadId, turnId: ROGUE, itemId: "c", command: "touch x", cwd: "/" },
  });
  const reply = await app.peer.next((m) => m.id === "rogue-approval");
  expect(reply.result).toMatchObject({ decision: "decline" });
  await app.notify("turn/completed", {
    threadId,
    turn: { id: ROGUE, status: "interrupted", items: [], error: null },
  });

  // The session is idle and takes the runner's next turn as usual.
  const next = await handle.send("second");
  await app.playTurn(threadId, next.turnId!, "second answer");
  expect(await events.waitFor((e) => isTerminal(e) && e.turnId === next.turnId))
    .toMatchObject({ type: "result", text: "second answer" });
  await handle.stop();
  await events.done;

  expect(asked.map((r) => r.kind)).toEqual([]);
  const rogue = events.events.filter((e) => e.turnId === ROGUE);
  expect(rogue.map((e) => e.type === "system" ? e.subtype : e.type)).toEqual([
    "turn_refused",
    "usage",
    "approval",
    "approval_denied",
  ]);
  expect(rogue.find((e) => e.type === "approval")).toMatchObject({
    decision: "deny",
    ruleId: "builtin.unrequested-turn",
  });
  expect(JSON.stringify(events.events)).not.toContain("ROGUE-TEXT");
  expect(events.terminals().map((e) => e.turnId)).toEqual([first, next.turnId]);
});

test("a turn/started taken for the runner's turn, which codex then names otherwise, is refused", async () => {
  await using app = new FakeAppServer();
  const handle = await app.spawn("first");
  const events = new EventRecorder(handle);
  const first = app.turnOf(handle);
  await app.playTurn(handle.threadId, first, "first answer");
  await events.waitFor(isTerminal);
  // codex's own turn begins just as the runner's next turn is asked for: its turn/started comes
  // before the answer to turn/start, and is taken for the runner's turn until the answer names it.
  app.stallNext.set("turn/start", 1);
  const sending = handle.send("second");
  const request = await app.peer.next((m) =>
    m.method === "turn/start" && JSON.stringify(m.params).includes("second")
  );
  await app.notify("turn/started", {
    threadId: handle.threadId,
    turn: { id: ROGUE, status: "inProgress", items: [] },
  });
  await app.peer.send({ id: request.id, result: { turn: { id: "turn-mine", items: [] } } });
  expect((await sending).turnId).toBe("turn-mine");
  expect(await events.waitFor((e) => e.type === "system" && e.subtype === "turn_refused"))
    .toMatchObject({ turnId: ROGUE });
  expect(await app.peer.next((m) => m.method === "turn/interrupt")).toMatchObject({
    params: { turnId: ROGUE },
  });
  await app.playTurn(handle.threadId, "turn-mine", "mine");
  expect(await events.waitFor((e) => isTerminal(e) && e.turnId === "turn-mine"))
    .toMatchObject({ type: "result", text: "mine" });
  await handle.stop();
});

test("a turn on a thread no session follows is interrupted; the session it descends from is told", async () => {
  await using app = new FakeAppServer();
  const handle = await app.spawn("spawns a helper");
  const events = new EventRecorder(handle);
  const root = app.turnOf(handle);
  await app.playTurn(handle.threadId, root, "spawned");
  await events.waitFor(isTerminal);
  // The sub-agent's turn starts after the turn that spawned it answered, as codex's do.
  await app.notify("turn/started", {
    threadId: "thread-helper",
    turn: { id: "turn-helper", rootTurnId: root, status: "inProgress", items: [] },
  });
  expect(await app.peer.next((m) => m.method === "turn/interrupt")).toMatchObject({
    params: { threadId: "thread-helper", turnId: "turn-helper" },
  });
  expect(await events.waitFor((e) => e.type === "system" && e.subtype === "turn_refused"))
    .toMatchObject({ turnId: root, threadId: "thread-helper" });
  // One with no root (or a root of no session) is interrupted all the same.
  await app.notify("turn/started", {
    threadId: "thread-stray",
    turn: { id: "turn-stray", status: "inProgress", items: [] },
  });
  expect(await app.peer.next((m) => m.method === "turn/interrupt")).toMatchObject({
    params: { threadId: "thread-stray", turnId: "turn-stray" },
  });
  await handle.stop();
  await events.done;
  expect(events.events.filter((e) => e.type === "system" && e.subtype === "turn_refused"))
    .toHaveLength(1);
});
