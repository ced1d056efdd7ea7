/**
 * The escalation check (escalation.test.ts) on a session resumed on another codex child, against
 * the real codex through the assembled daemon: after a daemon restart, after its codex child was
 * killed, and after a rolling restart moved it. codex shows such a thread no raw items (`thread/resume` has no
 * `experimentalRawEvents`); codexd reads its calls from the thread's rollout (rollout-calls.ts).
 *
 * The escalated command only touches a marker in a folder outside every sandbox: had the bridge
 * let it through, codex would have run it unsandboxed and the marker would exist. The control in
 * the same resumed session is a plain touch in the worktree: allowed, and it runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type { CodexdClient } from "../../../src/client.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { makeTempWorktree, type TempWorktree } from "../../support/codex-harness.ts";
import { makeStateDir } from "../../support/daemon-process.ts";
import { startDaemonInProcess } from "../../support/daemon-in-process.ts";
import { eventually } from "../../support/eventually.ts";
import { outsideSandboxDir } from "../../support/outside-dir.ts";
import { untilTerminal } from "../../support/session-events.ts";

const OUTSIDE = outsideSandboxDir("escalation-resumed-");
const SCENARIOS = ["RESTARTED", "CRASHED", "MOVED"] as const;
let model: ScriptedModel;
let worktree: TempWorktree;

const escalatedMarker = (scenario: string) => path.join(OUTSIDE, `${scenario}-escalated`);
const plainMarker = (scenario: string) => path.join(worktree.path, `${scenario}-plain`);

beforeAll(async () => {
  worktree = await makeTempWorktree();
  model = await startScriptedModel({
    rules: [
      { marker: "GREET", rounds: [[step.message("hello")]] },
      // Two calls in one response, both named by the model alike: the escalated one first.
      {
        marker: "REUSED_ID",
        rounds: [
          [
            step.exec(`touch ${escalatedMarker("REUSED")}; true`, {
              extra: { sandbox_permissions: "require_escalated" },
              callId: "call_reused",
            }),
            step.exec(`touch ${plainMarker("REUSED")}`, { callId: "call_reused" }),
          ],
          [step.message("done")],
        ],
      },
      ...SCENARIOS.flatMap((scenario) => [
        {
          marker: `${scenario}_ESCALATED`,
          rounds: [
            [step.exec(`touch ${escalatedMarker(scenario)}; true`, {
              extra: { sandbox_permissions: "require_escalated", justification: "May I?" },
            })],
            [step.message("done")],
          ],
        },
        {
          marker: `${scenario}_PLAIN`,
          rounds: [[step.exec(`touch ${plainMarker(scenario)}`)], [step.message("done")]],
        },
      ]),
    ],
  });
});

afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
});

async function lastSeq(client: CodexdClient, id: string): Promise<number> {
  return (await client.storedEvents(id, { after: 0, limit: 10_000 })).at(-1)?.seq ?? 0;
}

/** A turn of the session (its first on resume, when `resume` is set) and its approval event. */
async function turn(client: CodexdClient, id: string, prompt: string, resume = false) {
  const after = await lastSeq(client, id);
  if (resume) await client.resume(id, { prompt, cwd: worktree.path });
  else await client.send(id, prompt);
  const events = await untilTerminal(client, id, after);
  expect(events.at(-1)).toMatchObject({ type: "result" });
  // Resumed, not re-seeded on a thread started anew (which would show raw items).
  if (resume) {
    expect(events.find((e) => e.type === "system" && e.subtype !== "user_prompt"))
      .toMatchObject({ subtype: "session_resumed" });
  }
  return { events, approval: events.find((e) => e.type === "approval") };
}

/** The escalated command is declined, the plain one allowed, in the resumed session. */
async function expectJudgedAfterResume(
  client: CodexdClient,
  id: string,
  scenario: string,
  escalated: { approval: unknown },
) {
  expect(escalated.approval).toMatchObject({
    decision: "deny",
    ruleId: "builtin.sandbox-escalation",
    // Found in the rollout, with its arguments (not declined for want of them).
    reason: expect.stringContaining('sandbox_permissions: "require_escalated"'),
  });
  expect(existsSync(escalatedMarker(scenario))).toBe(false);
  const plain = await turn(client, id, `${scenario}_PLAIN`);
  expect(plain.approval).toMatchObject({ decision: "allow" });
  expect(existsSync(plainMarker(scenario))).toBe(true);
}

describe("a resumed session whose model asks to leave the sandbox", () => {
  test("after a daemon restart: declined; a plain command in it still runs", async () => {
    const stateDir = makeStateDir();
    let sessionId: string;
    {
      await using first = await startDaemonInProcess({ model, stateDir });
      ({ sessionId } = await first.client.spawn({ prompt: "GREET", cwd: worktree.path }));
      await untilTerminal(first.client, sessionId);
    }
    await using again = await startDaemonInProcess({ model, stateDir });
    const escalated = await turn(again.client, sessionId, "RESTARTED_ESCALATED", true);
    await expectJudgedAfterResume(again.client, sessionId, "RESTARTED", escalated);
    // A call id used twice keeps the escalation one of its calls asked for.
    const reused = await turn(again.client, sessionId, "REUSED_ID");
    const approvals = reused.events.filter((e) => e.type === "approval");
    expect(approvals).toHaveLength(2);
    for (const approval of approvals) {
      expect(approval).toMatchObject({
        decision: "deny",
        ruleId: "builtin.sandbox-escalation",
        reason: expect.stringContaining('sandbox_permissions: "require_escalated"'),
      });
    }
    expect(existsSync(escalatedMarker("REUSED"))).toBe(false);
  }, 60_000);

  test("after its codex child was killed: declined; a plain command in it still runs", async () => {
    await using d = await startDaemonInProcess({
      model,
      deps: { backoff: { initialMs: 50, maxMs: 200, resetAfterMs: 60_000 } },
    });
    const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, sessionId);
    const oldPid = (await d.client.health()).codex.pid!;
    process.kill(oldPid, "SIGKILL");
    await eventually("a new codex child", async () => {
      const health = await d.client.health();
      return health.status === "ok" && health.codex.pid !== oldPid ? true : undefined;
    });
    const escalated = await turn(d.client, sessionId, "CRASHED_ESCALATED", true);
    await expectJudgedAfterResume(d.client, sessionId, "CRASHED", escalated);
  }, 60_000);

  test(
    "after a rolling restart moved it to a new child: declined; a plain command runs",
    async () => {
      await using d = await startDaemonInProcess({
        model,
        configure: (config) => {
          config.codex.pool = 1;
          config.codex.recycle = { ...config.codex.recycle, checkIntervalSeconds: 0 };
        },
      });
      const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
      await untilTerminal(d.client, sessionId);
      const old = (await d.client.health()).codex.children![0]!;
      await d.client.restartCodex();
      await eventually("the session on a new child", async () => {
        const children = (await d.client.health()).codex.children!;
        return children.length === 1 && children[0]!.id !== old.id &&
            children[0]!.state === "ready" && children[0]!.sessions === 1
          ? true
          : undefined;
      }, { limitMs: 30_000 });
      expect(d.daemon.pool.providers.some((p) => p.pid === old.pid)).toBe(false);
      const escalated = await turn(d.client, sessionId, "MOVED_ESCALATED");
      await expectJudgedAfterResume(d.client, sessionId, "MOVED", escalated);
    },
    60_000,
  );
});
