/**
 * A session's spec secrets stay out of the daemon's log when codex prints them on its stderr.
 * codex at a verbose RUST_LOG quotes the requests it gets, and `thread/start` carries the spec's
 * `env` (shell_environment_policy.set); here a wrapper around the real codex copies every request
 * to stderr, the loudest codex could be. Positive control: the same logged line shows the
 * session's cwd, so it did reach the log.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { resolveCodexBinary } from "../../src/provider/codex/binary.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { memoryLogger } from "../support/memory-logger.ts";
import { untilTerminal } from "../support/session-events.ts";

const SECRET = "spec-secret-7f3a9c1e5b";

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

test("a spec env value codex prints on stderr is redacted in the daemon's log", async () => {
  const stateDir = makeStateDir();
  const codex = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  const bin = path.join(stateDir, "codex-echoing-requests");
  // (stderr is a socket here, which tee cannot open by name: cat writes to the inherited one.)
  writeFileSync(bin, `#!/bin/bash\ntee >(cat >&2) | '${codex}' "$@"\n`);
  chmodSync(bin, 0o755);
  const { logger, lines } = memoryLogger();
  {
    await using d = await startDaemonInProcess({ model, stateDir, bin, deps: { logger } });
    const { sessionId } = await d.client.spawn({
      prompt: "GREET",
      cwd: worktree.path,
      env: { API_TOKEN: SECRET },
    });
    expect((await untilTerminal(d.client, sessionId)).at(-1)).toMatchObject({ type: "result" });
  }
  const stderr = lines.filter((l) => l.message === "codex stderr").map((l) => String(l.data?.line));
  const threadStart = stderr.find((l) => l.includes('"thread/start"'));
  expect(threadStart).toContain(worktree.path);
  expect(threadStart).toContain('"API_TOKEN":"[redacted]"');
  expect(JSON.stringify(lines)).not.toContain(SECRET);
});
