/** A session's log lines carry its ids: each handle logs through a child of the provider's logger. */
import { expect, test } from "bun:test";
import { EventRecorder } from "../../support/provider-fixture.ts";
import { eventually } from "../../support/eventually.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";

test("a handle's warning names its session and thread in the line's context", async () => {
  await using app = new FakeAppServer();
  const handle = await app.spawn("first");
  const events = new EventRecorder(handle);
  const turnId = app.turnOf(handle);
  await app.playTurn(handle.threadId, turnId, "alpha");
  await events.waitFor((e) => e.type === "result");
  await app.notify("turn/completed", {
    threadId: handle.threadId,
    turn: { id: "turn-nobody-started", status: "completed", items: [] },
  });
  const line = await eventually(
    "the warning",
    () => app.logs.find((l) => l.message === "turn/completed for no active turn"),
  );
  expect(line).toMatchObject({
    level: "warn",
    sessionId: handle.sessionId,
    threadId: handle.threadId,
    data: { turnId: "turn-nobody-started" },
  });
});
