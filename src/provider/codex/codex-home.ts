/**
 * Where a CODEX_HOME may live. codex refuses to create its helper links (the `codex-linux-sandbox`
 * alias and friends) inside the system temp folder, and every `tty: true` command then fails with
 * "Unable to spawn codex-linux-sandbox". It compares against Rust's `std::env::temp_dir()`, which
 * is `$TMPDIR` or `/tmp`.
 */
import { chown, mkdir } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { CODEX_HOME_ROLLOUT_DIRS } from "./read-denied.ts";

/** True when `dir` is inside (or is) the folder codex treats as the temp dir. */
export function isUnderTempDir(dir: string): boolean {
  const resolved = path.resolve(dir);
  const temps = new Set([path.resolve(tmpdir()), "/tmp"]);
  for (const temp of temps) {
    if (resolved === temp || resolved.startsWith(temp + path.sep)) return true;
  }
  return false;
}

/**
 * `preferred` unless it sits in the temp folder, else `codexd/<name>` under the user's cache
 * (`$XDG_CACHE_HOME` or `~/.cache`).
 */
export function codexHomeRoot(
  preferred: string,
  name: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (!isUnderTempDir(preferred)) return preferred;
  const cache = env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(cache, "codexd", name);
}

/**
 * Makes the rollout folders of `home` (0700; `owner`'s when codex runs as another account) unless
 * something is there already. codex would make them at its first thread, but the sandbox denies
 * only paths that exist when a thread starts (read-denied.ts): the first thread must find them.
 */
export async function makeRolloutDirs(
  home: string,
  owner?: { uid: number; gid: number },
): Promise<void> {
  for (const name of CODEX_HOME_ROLLOUT_DIRS) {
    const dir = path.join(home, name);
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue; // codex's, or a link: left alone
      throw error;
    }
    if (owner) await chown(dir, owner.uid, owner.gid);
  }
}
