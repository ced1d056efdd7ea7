/**
 * Against the real codex: one session's commands cannot write another session's files through
 * the shared temp folder. Two sessions run in worktrees under /tmp (where runners often put
 * them); session A's command tries to write into B's worktree and into /tmp, and uses mktemp.
 * Positive control: without per-session temp folders both writes land. Payloads are markers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { readdir, rm, stat, symlink } from "node:fs/promises";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { SessionTmp } from "../../../src/provider/codex/session-tmp.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { makeTempWorktree } from "../../support/codex-harness.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

const OTHER = "/tmp/codexd-session-tmp-other";
const ESCAPE = "/tmp/codexd-session-tmp-escape";
/** Writes into the other session's worktree and into /tmp, then uses its own temp folder. */
const RUN_COMMAND = `touch ${OTHER}/planted; touch ${ESCAPE}; ` +
  `t=$(mktemp) && echo private > "$t" && cat "$t" && echo "tmp=$TMPDIR"`;

let model: ScriptedModel;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "RUNCMD", rounds: [[step.exec(RUN_COMMAND)], [step.message("ran")]] }],
  });
});

afterAll(async () => {
  for (const clean of cleanup.reverse()) await clean();
  await model?.close();
});

/** Runs RUN_COMMAND in a session in a /tmp worktree; the command's output. */
async function runSession(sessionTmp?: SessionTmp): Promise<string> {
  await rm(OTHER, { recursive: true, force: true });
  await rm(ESCAPE, { force: true });
  const other = await makeTempWorktree();
  cleanup.push(() => other.remove());
  // The other session's worktree, at a fixed path the command names.
  await symlink(other.path, OTHER);
  cleanup.push(() => rm(OTHER, { force: true }));
  const worktree = await makeTempWorktree();
  cleanup.push(() => worktree.remove());
  await using codex = await startTestProvider({
    model,
    ...(sessionTmp && { provider: { sessionTmp } }),
  });
  const handle = await codex.provider.spawn(Spec.parse({ cwd: worktree.path, prompt: "RUNCMD" }));
  const events = new EventRecorder(handle);
  await events.waitFor((e) => e.type === "result", 30_000, "result");
  const output = events.events.find((e) => e.type === "tool.result")?.output;
  await handle.stop();
  return String(output);
}

describe("each session's own temp folder (real codex)", () => {
  test("positive control: without it, a session writes another's /tmp worktree and /tmp", async () => {
    const output = await runSession();
    expect(existsSync(path.join(OTHER, "planted"))).toBe(true);
    expect(existsSync(ESCAPE)).toBe(true);
    expect(output).toContain("private");
  });

  test("with it, /tmp is read-only to the command, its own folder is its TMPDIR, and goes at stop", async () => {
    await using sessionTmp = new SessionTmp();
    const output = await runSession(sessionTmp);
    expect(existsSync(path.join(OTHER, "planted"))).toBe(false);
    expect(existsSync(ESCAPE)).toBe(false);
    expect(output).toContain("Read-only file system");
    expect(output).toContain("private"); // mktemp wrote in the session's folder
    expect(output).toContain(`tmp=${sessionTmp.root}/`);
    expect((await stat(sessionTmp.root)).mode & 0o777).toBe(0o711);
    expect(await readdir(sessionTmp.root)).toEqual([]); // removed when the session stopped
  });
});
