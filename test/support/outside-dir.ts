/**
 * A folder outside every place codex's workspace sandbox lets a command write: not a worktree,
 * and not the temp folder (writable by design), where a clone in /tmp would otherwise put it.
 * Tests that prove a write escaped (or did not) keep their markers here.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./codex-harness.ts";

export function outsideSandboxDir(prefix: string): string {
  const underTemp = [tmpdir(), "/tmp", "/var/tmp"].some((t) =>
    REPO_ROOT === t || REPO_ROOT.startsWith(`${t.replace(/\/+$/, "")}/`)
  );
  const base = underTemp
    ? path.join(homedir(), ".cache", "codexd-tests")
    : path.join(REPO_ROOT, ".codexd");
  mkdirSync(base, { recursive: true });
  return mkdtempSync(path.join(base, prefix));
}
