import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { recordedApprovals } from "../../src/daemon/recorded-approvals.ts";
import { Store } from "../../src/daemon/store.ts";
import { REPO_ROOT } from "../support/codex-harness.ts";

/** A state dir with one session that had `git status` and `npm publish` allowed. */
function stateDirWithApprovals(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "codexd-replay-"));
  using store = Store.open(path.join(dir, "codexd.db"));
  store.createSession({
    id: "ses_a",
    threadId: "th",
    spec: { cwd: "/work/wt-a", prompt: "p" },
    policy: "default",
    policyVersion: "v1",
    status: "stopped",
    createdAt: "2026-11-23T00:00:00.000Z",
  });
  for (const [i, command] of ["git status", "npm publish"].entries()) {
    store.appendEvent({
      type: "approval",
      sessionId: "ses_a",
      ts: "2026-11-23T00:00:01.000Z",
      requestId: `apr_${i}`,
      kind: "command",
      command,
      decision: "allow",
      source: "default",
      reason: "recorded",
    });
  }
  store.appendEvent({ type: "message", sessionId: "ses_a", ts: "t", text: "not an approval" });
  return dir;
}

test("recorded approvals come with their session and worktree; an unknown session is refused", () => {
  const dir = stateDirWithApprovals();
  try {
    const records = recordedApprovals(dir);
    expect(records).toEqual([
      expect.objectContaining({
        command: "git status",
        sessionId: "ses_a",
        worktree: "/work/wt-a",
      }),
      expect.objectContaining({
        command: "npm publish",
        sessionId: "ses_a",
        worktree: "/work/wt-a",
      }),
    ]);
    expect(recordedApprovals(dir, "ses_a")).toHaveLength(2);
    expect(() => recordedApprovals(dir, "ses_nope")).toThrow("Session ses_nope does not exist");
    expect(() => recordedApprovals(path.join(dir, "nope"))).toThrow(/no state database/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("codexd policy replay prints what would change under another policy and exits 2", () => {
  const dir = stateDirWithApprovals();
  try {
    const result = spawnSync(process.execPath, [
      path.join(REPO_ROOT, "src/main.ts"),
      "policy",
      "replay",
      "--policy",
      "default",
      "--state-dir",
      dir,
      "--policies",
      path.join(REPO_ROOT, "policies"),
    ], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stdout).toContain('ses_a command "npm publish": allow → deny (no-npm-publish');
    expect(result.stdout).toContain("2 records, 1 would change under default");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
