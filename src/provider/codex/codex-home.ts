/**
 * Where a CODEX_HOME may live. codex refuses to create its helper links (the `codex-linux-sandbox`
 * alias and friends) inside the system temp folder, and every `tty: true` command then fails with
 * "Unable to spawn codex-linux-sandbox". It compares against Rust's `std::env::temp_dir()`, which
 * is `$TMPDIR` or `/tmp`.
 */
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";

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
