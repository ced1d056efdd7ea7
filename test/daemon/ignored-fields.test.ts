/**
 * `ignoredFields` in a spawn or resume answer names only fields the caller set that the session
 * will not honour: not the ones the schema filled in (`policy`, `onBusy`, `permissionMode`), not
 * the ones codexd enforces itself. Over HTTP, against the daemon and the real codex.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, type TempWorktree } from "../support/codex-harness.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { untilTerminal } from "../support/session-events.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "GREET", rounds: [[step.message("hello")]] }],
  });
  worktree = await makeTempWorktree();
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
});

test("spawn and resume answer ignoredFields with only what the caller set and is not honoured", async () => {
  await using d = await startDaemonInProcess({ model });
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(d.daemon.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { sessionId: string; ignoredFields: string[] };
  };

  // Nothing but the required fields: the defaults (policy, onBusy, …) are not the caller's.
  const bare = await post("/v1/sessions", { prompt: "GREET me", cwd: worktree.path });
  expect(bare.ignoredFields).toEqual([]);
  await untilTerminal(d.client, bare.sessionId);

  // Fields codexd enforces itself are honoured, not ignored.
  const enforced = await post("/v1/sessions", {
    prompt: "GREET me",
    cwd: worktree.path,
    policy: "default",
    onBusy: "interrupt",
    timeoutMs: 60_000,
    metadata: { team: "a" },
    permissionConfig: { disallowPatterns: ["rm"] },
  });
  expect(enforced.ignoredFields).toEqual([]);
  await untilTerminal(d.client, enforced.sessionId);

  // A sandbox under permissionMode plan (which runs read-only) is not honoured: named.
  const planned = await post("/v1/sessions", {
    prompt: "GREET me",
    cwd: worktree.path,
    permissionMode: "plan",
    sandbox: "workspace-write",
  });
  expect(planned.ignoredFields).toEqual(["sandbox"]);
  await untilTerminal(d.client, planned.sessionId);
  await d.client.stop(planned.sessionId);

  // Resume reads the caller's keys the same way.
  const resumed = await post(`/v1/sessions/${planned.sessionId}/resume`, {
    prompt: "GREET again",
    cwd: worktree.path,
  });
  expect(resumed.ignoredFields).toEqual([]);
});
