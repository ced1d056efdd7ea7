/**
 * A daemon started with a relative or empty entry in its PATH (`PATH=node_modules/.bin:$PATH`, a
 * trailing `:`) must not let a repository choose the `git` that runs outside the sandbox: codex
 * runs `git` by name in the session's worktree at a thread's start, and so does codexd's own
 * repository check (repo-git-programs.ts). Both now get the absolute entries only
 * (absolute-path.ts). Positive control: a bare codex given that PATH runs the worktree's `git`.
 * The repository's `git` only touches a marker, then runs the real one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { refuseRepositoryGitPrograms } from "../../../src/provider/codex/repo-git-programs.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { bareCodexTurn, makeTempWorktree } from "../../support/codex-harness.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

const ENTRIES = ["node_modules/.bin", ".", ""];

let model: ScriptedModel;
let outside: string;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), "codexd-relative-path-"));
  model = await startScriptedModel({ rules: [], fallback: [step.message("hello")] });
});

afterAll(async () => {
  for (const clean of cleanup.reverse()) await clean();
  await model?.close();
  await rm(outside, { recursive: true, force: true });
});

/** A worktree whose `<entry>/git` touches a marker; the PATH that puts `entry` first. */
async function shadowedGit(name: string, entry: string) {
  const worktree = await makeTempWorktree();
  cleanup.push(() => worktree.remove());
  const marker = path.join(outside, `${name}-${entry.replace(/\W/g, "_") || "empty"}`);
  const dir = path.join(worktree.path, entry);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "git"), `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/git "$@"\n`);
  await chmod(path.join(dir, "git"), 0o755);
  return { cwd: worktree.path, marker, PATH: `${entry}:${process.env.PATH}` };
}

describe("relative entries in the daemon's PATH (real codex)", () => {
  test.each(ENTRIES)(
    "positive control: a bare codex with PATH %p runs the worktree's git",
    async (entry) => {
      const { cwd, marker, PATH } = await shadowedGit("bare", entry);
      await bareCodexTurn({
        model,
        modelArgs: { requestMaxRetries: 0 },
        env: { PATH },
        cwd,
        prompt: "hi",
      });
      expect(existsSync(marker)).toBe(true);
    },
    60_000,
  );

  test.each(ENTRIES)(
    "through codexd with PATH %p neither codex nor codexd runs it",
    async (entry) => {
      const { cwd, marker, PATH } = await shadowedGit("codexd", entry);
      const saved = process.env.PATH;
      process.env.PATH = PATH; // the daemon's own environment, for its repository check
      try {
        await refuseRepositoryGitPrograms(cwd);
        await using codex = await startTestProvider({ model, env: { PATH } });
        const handle = await codex.provider.spawn(Spec.parse({ cwd, prompt: "hi" }));
        await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
        await handle.stop();
      } finally {
        process.env.PATH = saved;
      }
      expect(existsSync(marker)).toBe(false);
    },
    60_000,
  );
});
