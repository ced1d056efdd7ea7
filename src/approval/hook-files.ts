/**
 * Files that decide what git runs on its own: hooks. A hook runs at the next `git commit` or
 * `git checkout` (the agent's, or the fleet runner's when it commits the agent's work), outside
 * any approval, so writing one is judged like running its content unseen. Besides `.git/hooks`
 * (protected with the rest of the git directory), a repository may keep its hooks elsewhere:
 * the folder `core.hooksPath` names (`.husky/_`, `.githooks`, ...) and the hook managers' files
 * that say what their installed hooks run.
 */
import { readFileSync } from "node:fs";
import { pointedGitDirs } from "./git-dirs.ts";
import { isAbsolute, join, resolve } from "node:path";

/**
 * A path (relative, `/`-separated) that is a hook or a hook manager's list of commands: husky's
 * folder, the usual hook folders, pre-commit, lefthook, overcommit, simple-git-hooks.
 */
export const HOOK_MANAGER_PATH =
  /(^|\/)(\.husky|\.githooks|\.hooks|\.git-hooks)(\/|$)|(^|\/)\.pre-commit-(config|hooks)\.ya?ml$|(^|\/)\.?lefthook(-local)?\.(ya?ml|json|jsonc|toml)$|(^|\/)\.overcommit\.yml$|(^|\/)\.?simple-git-hooks\.(c?js|mjs|json)$/;

/**
 * The folder `core.hooksPath` names in the worktree's git config, absolute; undefined when not
 * set or unreadable. Read from the config file itself (a `.git` folder, or the gitdir and common
 * dir a `.git` file points at), never by running git in an untrusted worktree.
 */
export function configuredHooksDir(worktree: string): string | undefined {
  for (const config of configFiles(worktree)) {
    const value = coreHooksPath(config);
    if (value !== undefined && value !== "") {
      if (value.startsWith("~/")) return join(process.env.HOME ?? "/", value.slice(2));
      return isAbsolute(value) ? value : resolve(worktree, value);
    }
  }
  return undefined;
}

/** The config files git reads for the worktree: its own, then the shared repository's. */
function configFiles(worktree: string): string[] {
  const [gitDir, common] = pointedGitDirs(worktree);
  if (gitDir === undefined) return [join(worktree, ".git", "config")];
  const files = [join(gitDir, "config.worktree"), join(gitDir, "config")];
  if (common !== undefined) files.push(join(common, "config"));
  return files;
}

/** `hooksPath` of the `[core]` section, the last one winning as in git; undefined when absent. */
function coreHooksPath(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  let section = "";
  let value: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(\s+"[^"]*")?\s*\]/.exec(line);
    if (header !== null) {
      section = (header[1] + (header[2] ?? "")).toLowerCase();
      continue;
    }
    const entry = /^hookspath\s*=\s*(.*?)\s*$/i.exec(line);
    if (section === "core" && entry !== null) value = unquote(entry[1]);
  }
  return value;
}

function unquote(value: string): string {
  const v = value.replace(/\s[;#].*$/, "");
  return v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
}
