/**
 * The provider hands each session the rollout codex names for its thread (`thread.path`,
 * rollout-calls.ts): a resumed thread's command approvals are judged on the calls written there
 * after the resume, and a started thread's too should codex show it no raw items. Against the
 * in-process fake codex, whose rollout files the test writes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Spec } from "../../../src/provider/spec.ts";
import { FakeAppServer } from "../../support/fake-app-server.ts";
import { recordingApprover } from "../../support/provider-fixture.ts";
import { functionCallItem } from "../../support/tool-call-item.ts";

const dir = mkdtempSync(path.join(tmpdir(), "codexd-provider-rollout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rolloutOf = (threadId: string) => path.join(dir, `${threadId}.jsonl`);
const ESCALATED = { cmd: "touch x", sandbox_permissions: "require_escalated" };

function writeCall(threadId: string, callId: string, args: Record<string, unknown>): void {
  const payload = functionCallItem(args, callId);
  appendFileSync(rolloutOf(threadId), `${JSON.stringify({ type: "response_item", payload })}\n`);
}

/** A fake codex naming rollouts, whose approver records what it was asked. */
function fakeCodex() {
  const { asked, approver } = recordingApprover();
  const app = new FakeAppServer({ rolloutOf, approver, rollout: { waitMs: 0 } });
  let requests = 0;
  const approve = async (threadId: string, itemId: string) => {
    const id = `approval-${++requests}`;
    await app.peer.send({
      id,
      method: "item/commandExecution/requestApproval",
      params: { kind: "command", threadId, turnId: "t", itemId, command: "touch x", cwd: "/" },
    });
    await app.peer.next((m) => m.id === id);
  };
  const escalations = () => asked.map((r) => "escalation" in r ? r.escalation : undefined);
  return { app, approve, escalations };
}

describe("the rollout a session's approvals are judged on", () => {
  test("a started thread that shows no raw items: its calls in the rollout", async () => {
    const { app, approve, escalations } = fakeCodex();
    await using _ = app;
    const { threadId } = await app.spawn("go");
    writeCall(threadId, "c1", ESCALATED);
    writeCall(threadId, "c2", { cmd: "ls" });
    await approve(threadId, "c1");
    await approve(threadId, "c2");
    expect(escalations()).toEqual(['sandbox_permissions: "require_escalated"', undefined]);
  });

  test("a resumed thread: the calls written after the resume, not the rollout's history", async () => {
    const { app, approve, escalations } = fakeCodex();
    await using _ = app;
    writeCall("thread-old", "c1", { cmd: "ls" });
    const handle = await app.provider.resume(
      "ses_resumed",
      Spec.parse({ prompt: "again", cwd: tmpdir() }),
      { threadId: "thread-old" },
    );
    expect(handle.threadId).toBe("thread-old");
    writeCall("thread-old", "c2", ESCALATED);
    writeCall("thread-old", "c3", { cmd: "ls" });
    for (const call of ["c1", "c2", "c3"]) await approve("thread-old", call);
    expect(escalations()).toEqual([
      "tool call c1 not found in codex's rollout within 0 ms",
      'sandbox_permissions: "require_escalated"',
      undefined,
    ]);
  });
});
