/**
 * A model that asks codex to run a command outside the sandbox (`sandbox_permissions:
 * "require_escalated"`, or `with_additional_permissions`) is declined by the bridge, against the
 * real codex through the assembled daemon. codex runs an approved escalation unsandboxed and its
 * approval request does not say so (approved-sandbox.test.ts shows the bare behaviour); codexd
 * reads the tool call from the thread's raw items (escalation.ts).
 *
 * Each command only touches a marker in a folder outside every sandbox; the same command without
 * the escalation is the positive control (it is approved, runs sandboxed and cannot write there).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { makeTempWorktree, type TempWorktree } from "../../support/codex-harness.ts";
import { type InProcessDaemon, startDaemonInProcess } from "../../support/daemon-in-process.ts";
import { outsideSandboxDir } from "../../support/outside-dir.ts";
import { spawnUntilTerminal } from "../../support/session-events.ts";

const OUTSIDE = outsideSandboxDir("escalation-");
const outside = (name: string) => path.join(OUTSIDE, name);
let model: ScriptedModel;
let daemon: InProcessDaemon;
let worktree: TempWorktree;

function touchRule(marker: string, file: string, extra?: Record<string, unknown>) {
  return {
    marker,
    rounds: [[step.exec(`touch ${file}; true`, extra ? { extra } : {})], [step.message("done")]],
  };
}

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [
      touchRule("ESCALATED_END", outside("escalated"), {
        sandbox_permissions: "require_escalated",
        justification: "May I?",
      }),
      touchRule("SILENT_END", outside("silent"), { sandbox_permissions: "require_escalated" }),
      touchRule("EXTRA_END", outside("extra"), {
        sandbox_permissions: "with_additional_permissions",
        additional_permissions: { file_system: { write: [OUTSIDE] } },
      }),
      touchRule("PLAIN_END", outside("plain")),
    ],
  });
  worktree = await makeTempWorktree();
  daemon = await startDaemonInProcess({ model });
});

afterAll(async () => {
  await daemon?.daemon.stop();
  await worktree?.remove();
  await model?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
});

async function run(marker: string) {
  const events = await spawnUntilTerminal(daemon.client, marker, worktree.path);
  return events.find((e) => e.type === "approval");
}

describe("a command asking to leave the sandbox", () => {
  test("require_escalated, with a justification: declined, nothing written outside", async () => {
    expect(await run("ESCALATED_END")).toMatchObject({
      decision: "deny",
      ruleId: "builtin.sandbox-escalation",
      reason: expect.stringContaining('sandbox_permissions: "require_escalated"'),
    });
    expect(existsSync(outside("escalated"))).toBe(false);
  });

  test("require_escalated without one (the request looks like any other): declined", async () => {
    expect(await run("SILENT_END")).toMatchObject({
      decision: "deny",
      ruleId: "builtin.sandbox-escalation",
    });
    expect(existsSync(outside("silent"))).toBe(false);
  });

  test("with_additional_permissions naming a folder outside: never approved", async () => {
    // codex 0.169 refuses the call itself (the feature is off) and asks nothing; a codex that
    // asks gets a decline (the request's additionalPermissions, or the call's raw arguments).
    const approval = await run("EXTRA_END");
    if (approval !== undefined) {
      expect(approval).toMatchObject({ decision: "deny", ruleId: "builtin.sandbox-escalation" });
    }
    expect(existsSync(outside("extra"))).toBe(false);
  });

  test("control: the same touch without an escalation is approved and stays in the sandbox", async () => {
    expect(await run("PLAIN_END")).toMatchObject({ decision: "allow" });
    expect(existsSync(outside("plain"))).toBe(false);
  });
});
