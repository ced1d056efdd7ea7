/**
 * Containment of file changes: every path must resolve inside the session's worktree (or a
 * policy allow-root), through `..` and symlinks, and must not touch the folders that control
 * git or the agent (`.git` and the gitdir a `.git` pointer file names, `.codex`, `.agents`).
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { pointedGitDirs } from "./git-dirs.ts";
import { configuredHooksDir, HOOK_MANAGER_PATH } from "./hook-files.ts";

/** Folder names protected anywhere inside a worktree. */
export const PROTECTED_NAMES: readonly string[] = [".git", ".codex", ".agents"];

export type PathVerdict =
  | { ok: true; path: string; root: string; relative: string; inWorktree: boolean }
  | { ok: false; ruleId: string; reason: string };

/**
 * The real location a path would be written at: symlinks resolved through the deepest existing
 * ancestor, since the file itself may not exist yet. A dangling symlink is followed to where it
 * points.
 */
export function realLocation(path: string, depth = 0): string {
  const absolute = resolve(path);
  if (depth > 40) return absolute;
  try {
    return realpathSync(absolute);
  } catch {
    // Missing, or a dangling symlink: find out which.
  }
  try {
    if (lstatSync(absolute).isSymbolicLink()) {
      return realLocation(resolve(dirname(absolute), readlinkSync(absolute)), depth + 1);
    }
  } catch {
    // Does not exist: resolve the parent and append the name.
  }
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  return join(realLocation(parent, depth + 1), basename(absolute));
}

/** Is `path` equal to or below `root`? Lexical on resolved paths: `/wt-evil` is not in `/wt`. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export interface Containment {
  worktree: string;
  allowRoots: readonly string[];
  /** Globs relative to the root the path lies in. */
  denied: (relativePath: string) => boolean;
}

/** Judges each path; the first failure wins. */
export function checkPaths(paths: readonly string[], c: Containment): PathVerdict[] {
  const worktree = realLocation(c.worktree);
  const roots = [worktree, ...c.allowRoots.map((r) => realLocation(r))];
  const gitDirs = pointedGitDirs(worktree, realLocation);
  const hooksDir = configuredHooksDir(worktree);
  // The hooks folder core.hooksPath names is as protected as the git directory it stands for.
  if (hooksDir !== undefined) gitDirs.push(realLocation(hooksDir));
  return paths.map((p) => checkPath(p, worktree, roots, gitDirs, c.denied));
}

function checkPath(
  path: string,
  worktree: string,
  roots: string[],
  gitDirs: string[],
  denied: (relativePath: string) => boolean,
): PathVerdict {
  // Relative paths are taken relative to the worktree, never to the process's cwd.
  const real = realLocation(isAbsolute(path) ? path : resolve(worktree, path));
  const root = roots.find((r) => isInside(r, real));
  if (root === undefined) {
    return {
      ok: false,
      ruleId: "builtin.files.outside-worktree",
      reason: `${path} resolves to ${real}, outside the worktree ${worktree}`,
    };
  }
  const gitDir = gitDirs.find((g) => isInside(g, real));
  if (gitDir !== undefined) {
    return {
      ok: false,
      ruleId: "builtin.files.protected",
      reason: `${path} lies in ${gitDir}, the git directory or its hooks, which is protected`,
    };
  }
  const rel = relative(root, real);
  const segments = rel.split(sep);
  const protectedName = segments.find((s) => PROTECTED_NAMES.includes(s));
  if (protectedName !== undefined) {
    return {
      ok: false,
      ruleId: "builtin.files.protected",
      reason: `${path} touches ${protectedName}, which is protected`,
    };
  }
  const posixRel = rel.split(sep).join("/");
  if (HOOK_MANAGER_PATH.test(posixRel)) {
    return {
      ok: false,
      ruleId: "builtin.files.protected",
      reason: `${path} is a git hook or says what hooks run, which is protected`,
    };
  }
  if (rel !== "" && denied(posixRel)) {
    return { ok: false, ruleId: "files.deny", reason: `${path} matches files.deny` };
  }
  return { ok: true, path: real, root, relative: rel, inWorktree: root === worktree };
}
