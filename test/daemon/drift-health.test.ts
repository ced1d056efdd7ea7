/**
 * The start-up drift check against a codex whose schema cannot be generated: health is degraded
 * and names why (an unchecked codex is not reported healthy). The codex is the real one (the
 * pinned one or $CODEX_BIN) behind a stand-in that fails only `app-server generate-json-schema`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { codexUnderTest, makeTempWorktree, type TempWorktree } from "../support/codex-harness.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { eventually } from "../support/eventually.ts";
import { untilTerminal } from "../support/session-events.ts";

let model: ScriptedModel;
let worktree: TempWorktree;
let dir: string;
beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "GREET", rounds: [[step.message("hello")]] }],
  });
  worktree = await makeTempWorktree();
  dir = mkdtempSync(path.join(tmpdir(), "codexd-drift-health-"));
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("health is degraded, naming the cause, when the drift check cannot run", async () => {
  const real = (await codexUnderTest()).path;
  const bin = path.join(dir, "codex");
  writeFileSync(
    bin,
    `#!/bin/sh
if [ "$1" = app-server ] && [ "$2" = generate-json-schema ]; then
  echo "schema generation broke" >&2
  exit 3
fi
exec '${real}' "$@"
`,
  );
  chmodSync(bin, 0o755);
  await using d = await startDaemonInProcess({ model, bin });
  const health = await eventually("a drift problem in health", async () => {
    const answer = await d.client.health();
    return answer.problems?.some((p) => p.startsWith("protocol drift:")) ? answer : undefined;
  });
  expect(health.status).toBe("degraded");
  expect(health.problems).toEqual([
    expect.stringMatching(/^protocol drift: cannot check: [^]*schema generation broke/),
  ]);
  // Positive control: codex itself works (only the schema command is broken).
  const spawned = await d.client.spawn({ prompt: "GREET me", cwd: worktree.path });
  expect((await untilTerminal(d.client, spawned.sessionId)).at(-1)).toMatchObject({
    type: "result",
    text: "hello",
  });
});
