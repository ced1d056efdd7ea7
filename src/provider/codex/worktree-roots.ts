/**
 * The worktree roots a session's commands must not read: a fleet keeps every session's worktree
 * under its configured `worktreeRoots`, and codex's `:workspace` lets a command read the whole
 * file system, so one session's commands (an agent working on an untrusted repository) could read
 * another session's worktree. Each root that holds the session's cwd, or lies apart from it, is
 * denied to reads; the cwd itself (more specific, and writable) and its git folders (read-only
 * entries) stay open, as measured on codex 0.169 (test/provider/codex/session-isolation.test.ts).
 * A root that is the cwd or inside it is left alone: denying it would hide the session's own
 * files.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { isWithin } from "../../paths.ts";

/** The roots (their real paths) to deny to reads for a session in `cwd`. */
export async function worktreeRootsHiddenFrom(
  cwd: string,
  roots: readonly string[],
): Promise<string[]> {
  if (roots.length === 0) return [];
  const real = await realpath(cwd).catch(() => path.resolve(cwd));
  const hidden: string[] = [];
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => path.resolve(root));
    if (!isWithin(realRoot, real)) hidden.push(realRoot);
  }
  return hidden;
}
