/**
 * Refuses a session whose cwd nests with a live session's cwd in another repository. A session's
 * commands may write anything under its cwd but its own repository's git folders (git-dirs.ts),
 * so a session in `/w` could write the `.git/config` of a session's repository in `/w/repo`,
 * and codex runs git there outside the sandbox at that session's next thread start, first turn
 * or resume. codexd checks the repository's config each time (repo-git-programs.ts), but a
 * command rewriting it in a loop can race a check; two such sessions are not let live at once.
 * Sessions in the same folder, or in one repository (a monorepo's root and a package), share the
 * read-only git folders and may nest.
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import { InvalidInput } from "../../errors.ts";
import { isWithin } from "../../paths.ts";
import { repositoryGitDirs } from "./git-dirs.ts";

/** A live session, as far as nesting goes. */
export interface LiveCwd {
  sessionId: string;
  cwd: string;
  /** Its real path, when the caller keeps it (one realpath per session, not per check). */
  real?: Promise<string>;
}

/**
 * @throws InvalidInput naming `cwd` when it lies inside a live session's cwd, or holds one, and
 * the two are not the same repository.
 */
export async function refuseNestedSessions(
  cwd: string,
  live: Iterable<LiveCwd>,
  action = "start session",
): Promise<void> {
  const real = await realOf(cwd);
  let ours: string | undefined;
  for (const other of live) {
    const theirs = await (other.real ?? realOf(other.cwd));
    if (theirs === real || (!within(real, theirs) && !within(theirs, real))) continue;
    ours ??= (await repositoryGitDirs(real))[0] ?? "";
    const repository = (await repositoryGitDirs(theirs))[0] ?? "";
    if (ours !== "" && ours === repository) continue;
    const [outer, inner] = within(real, theirs) ? [theirs, real] : [real, theirs];
    throw new InvalidInput(
      `Cannot ${action}: ${cwd} and the cwd of live session ${other.sessionId} (${other.cwd}) ` +
        `nest in different repositories: the session in ${outer} could write the git config of ` +
        `${inner}, which codex's git obeys outside the sandbox`,
      "cwd",
    );
  }
}

/** `dir`'s real path (as named when it cannot be resolved). */
export async function realOf(dir: string): Promise<string> {
  return await realpath(dir).catch(() => path.resolve(dir));
}

/** Whether `inner` lies strictly inside `outer`. */
function within(inner: string, outer: string): boolean {
  return inner !== outer && isWithin(inner, outer);
}
