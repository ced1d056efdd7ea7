/**
 * A `PATH` with only its absolute folders. An empty entry, `.` or a relative folder
 * (`node_modules/.bin`, a common shell idiom) is looked up from the working directory of whatever
 * runs a program by name, and codex runs `git` by name, outside the sandbox, in a session's
 * worktree, as codexd does for its own repository check: the repository's `git` (or
 * `node_modules/.bin/git`) would run instead, with codex's or the daemon's rights
 * (test/provider/codex/relative-path.test.ts). So neither codex, its commands, nor codexd's own
 * git ever get one.
 */
import path from "node:path";

/** `value` (a `PATH`) without its empty and relative entries; undefined stays undefined. */
export function absolutePath(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value.split(path.delimiter).filter((entry) => path.isAbsolute(entry)).join(
    path.delimiter,
  );
}
