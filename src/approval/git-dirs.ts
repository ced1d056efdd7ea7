/**
 * Where a worktree's git data lives when `.git` is a pointer file (linked worktrees, submodules):
 * read from the files themselves, never by running git in an untrusted worktree.
 */
import { lstatSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The gitdir a `.git` file points at, then the shared repository its `commondir` names (a linked
 * worktree's hooks and config live there); empty when `.git` is a folder or missing. `locate`
 * turns each into the path to judge (file-paths.ts follows symlinks with it).
 */
export function pointedGitDirs(
  worktree: string,
  locate: (path: string) => string = (path) => path,
): string[] {
  const dotGit = join(worktree, ".git");
  let text: string;
  try {
    if (!lstatSync(dotGit).isFile()) return [];
    text = readFileSync(dotGit, "utf8");
  } catch {
    return [];
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (match === null) return [];
  const gitDir = locate(resolve(worktree, match[1]));
  const dirs = [gitDir];
  try {
    const common = readFileSync(join(gitDir, "commondir"), "utf8").trim();
    if (common !== "") dirs.push(locate(resolve(gitDir, common)));
  } catch {
    // Not a linked worktree.
  }
  return dirs;
}
