/**
 * The git folders of a session's repository, found without running git: codex 0.169 runs git
 * itself, unsandboxed, in the session's cwd at every thread start and turn (`git status
 * --porcelain` among others), and that git obeys the repository's config: a `filter.<name>` with
 * a `process` (or `clean`) command, named by a `.gitattributes` line in the worktree, runs
 * outside the sandbox. codex keeps a `.git` in the cwd read-only for commands, and the folder a
 * `.git` file points to, but not the common folder a linked worktree shares with its main
 * repository (`.git/worktrees/<name>/commondir`), nor a `.git` above the cwd: when either sits in
 * a writable root (`/tmp` is one under `workspace-write`), a sandboxed command could write the
 * config the next turn's unsandboxed git obeys. The sandbox keeps every folder found here
 * read-only (plan.ts `sandboxProfileConfig`), test/provider/codex/git-config-escape.test.ts.
 *
 * Running git to find them would itself obey the hostile config, so the `.git` file and the
 * `commondir` file are read directly (gitrepository-layout(5)).
 */
import { readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";

/**
 * The `.git` folder, the folder a `.git` file points to and its common folder, by their real
 * paths (a profile entry through a symlink breaks the sandbox's setup: no command runs). A
 * folder that does not exist is kept as named: a command must not create it either.
 */
export async function repositoryGitDirs(cwd: string): Promise<string[]> {
  const found = await gitDirs(cwd);
  return [...new Set(await Promise.all(found.map((dir) => realpath(dir).catch(() => dir))))];
}

async function gitDirs(cwd: string): Promise<string[]> {
  let dir = path.resolve(cwd);
  while (true) {
    const dotGit = path.join(dir, ".git");
    const info = await stat(dotGit).catch(() => undefined);
    if (info?.isDirectory()) return [dotGit, ...await commonDir(dotGit)];
    if (info?.isFile()) {
      const target = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, "utf8"))?.[1];
      if (target === undefined) return [];
      const gitDir = path.resolve(dir, target);
      return [gitDir, ...await commonDir(gitDir)];
    }
    const parent = path.dirname(dir);
    if (parent === dir) return [];
    dir = parent;
  }
}

/** The common folder a linked worktree's git folder names in its `commondir` file, if any. */
async function commonDir(gitDir: string): Promise<string[]> {
  const text = await readFile(path.join(gitDir, "commondir"), "utf8").catch(() => undefined);
  const target = text?.trim();
  return target ? [path.resolve(gitDir, target)] : [];
}
