/**
 * Hooks outside `.git/hooks`: the folder `core.hooksPath` names and the hook managers' files. A
 * real git proves the harm first (a hook written there runs at the next commit), then the bridge,
 * with the real shell analyzer, declines each way of writing one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import { configuredHooksDir, HOOK_MANAGER_PATH } from "../../src/approval/hook-files.ts";
import { defaultShellAnalyzer } from "../../src/approval/shell-analyzer.ts";
import type { ApprovalContext, ApprovalRequest } from "../../src/provider/types.ts";
import { storeWith } from "./support/store.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function git(cwd: string, ...args: string[]) {
  const run = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", ...args], {
    cwd,
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** A repository whose config sets core.hooksPath to `hooksPath`. */
function repo(hooksPath: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "codexd-hooks-"));
  dirs.push(dir);
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "core.hooksPath", hooksPath);
  return dir;
}

const env = storeWith(
  { fleet: "version: 1\nname: fleet\ndefault: allow\nfiles: { default: allow }\n" },
  await defaultShellAnalyzer(),
);
afterAll(() => env[Symbol.dispose]());
const bridge = new ApprovalBridge(env.store);
const context = (worktree: string): ApprovalContext => ({
  requestId: "r",
  sessionId: "s",
  threadId: "t",
  worktree,
  policy: "fleet",
  permissionMode: "default",
});

/** The bridge's verdict on codex writing `relative` in `dir` with a file change. */
function fileChange(dir: string, relative: string) {
  const change: ApprovalRequest = { kind: "fileChange", paths: [path.join(dir, relative)] };
  return bridge.decide(change, context(dir));
}
const PROTECTED = { decision: "deny", ruleId: "builtin.files.protected" };

describe("core.hooksPath", () => {
  test("harm: a hook written in the folder core.hooksPath names runs at the next commit", () => {
    const dir = repo("tools/hooks");
    mkdirSync(path.join(dir, "tools/hooks"), { recursive: true });
    writeFileSync(path.join(dir, "tools/hooks/pre-commit"), "#!/bin/sh\ntouch ran.marker\n", {
      mode: 0o755,
    });
    git(dir, "commit", "-q", "--allow-empty", "-m", "x");
    expect(existsSync(path.join(dir, "ran.marker"))).toBe(true);
  });

  test("read from the config file, relative to the worktree; last one wins", () => {
    const dir = repo("tools/hooks");
    expect(configuredHooksDir(dir)).toBe(path.join(dir, "tools/hooks"));
    git(dir, "config", "--add", "core.hooksPath", "/abs/hooks");
    expect(configuredHooksDir(dir)).toBe("/abs/hooks");
    const plain = mkdtempSync(path.join(tmpdir(), "codexd-hooks-"));
    dirs.push(plain);
    expect(configuredHooksDir(plain)).toBeUndefined();
  });

  test("a linked worktree reads the shared repository's config", () => {
    const main = repo(".githooks-custom");
    git(main, "commit", "-q", "--allow-empty", "-m", "x");
    const linked = path.join(main, "..", `${path.basename(main)}-linked`);
    dirs.push(linked);
    git(main, "worktree", "add", "-q", linked);
    expect(configuredHooksDir(linked)).toBe(path.join(linked, ".githooks-custom"));
  });

  test("the bridge declines a file change or a command writing there", async () => {
    const dir = repo("tools/hooks");
    expect(await fileChange(dir, "tools/hooks/pre-commit")).toMatchObject(PROTECTED);
    for (
      const command of [
        "printf '#!/bin/sh\\ntouch x\\n' > tools/hooks/pre-commit",
        "cd tools && tee hooks/post-checkout < /dev/null",
        "cp /dev/null ./tools/hooks/pre-push",
      ]
    ) {
      const verdict = await bridge.decide({ kind: "command", command, cwd: dir }, context(dir));
      expect({ command, verdict }).toMatchObject({
        command,
        verdict: { decision: "deny", ruleId: "builtin.git-hooks-write" },
      });
    }
    const elsewhere = { kind: "command" as const, command: "echo x > tools/notes.txt", cwd: dir };
    expect(await bridge.decide(elsewhere, context(dir))).toMatchObject({ decision: "allow" });
  });
});

describe("hook managers' files", () => {
  const table: Array<[string, boolean]> = [
    [".husky/pre-commit", true],
    ["pkg/.husky/_/h", true],
    [".githooks/pre-push", true],
    [".pre-commit-config.yaml", true],
    ["lefthook.yml", true],
    [".lefthook-local.toml", true],
    [".overcommit.yml", true],
    [".simple-git-hooks.json", true],
    ["src/husky.ts", false],
    ["docs/pre-commit-config.md", false],
    ["lefthook.yml.bak", false],
  ];
  test("HOOK_MANAGER_PATH", () => {
    for (const [p, hit] of table) expect({ p, hit: HOOK_MANAGER_PATH.test(p) }).toEqual({ p, hit });
  });

  test("writing one is declined as a command and as a file change", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "codexd-hooks-"));
    dirs.push(dir);
    const command = "echo 'npx evil' >> .husky/pre-commit";
    expect(await bridge.decide({ kind: "command", command, cwd: dir }, context(dir)))
      .toMatchObject({ decision: "deny", ruleId: "builtin.git-hooks-write" });
    expect(await fileChange(dir, ".pre-commit-config.yaml")).toMatchObject(PROTECTED);
  });
});
