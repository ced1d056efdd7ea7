/**
 * Refuses a session whose repository's own git config names a program git would run. codex 0.169
 * runs git itself, outside the sandbox, in the session's cwd when a thread starts and at its first
 * turn (`git status --porcelain`, `rev-parse`, `remote`), overriding only `core.hooksPath` and
 * `core.fsmonitor`: a `filter.<name>.process` (or `clean`) in `.git/config`, named by a
 * `.gitattributes` line, runs as codex's own unsandboxed process (the repository's own config is
 * the untrusted part: a repository handed over with its `.git`, or one an earlier tool wrote).
 * codexd cannot make codex's git ignore it, so the spec is refused before codex sees it
 * (test/provider/codex/git-config-escape.test.ts). Only the repository's scopes (`local`,
 * `worktree`, and what they include) are judged: the system and global config are the operator's.
 *
 * The keys are every family whose value git runs (git-config(1)), whether or not codex's commands
 * reach it today, so that a codex running another git command fails closed; and `include.path` /
 * `includeIf.<condition>.path`, which make git read config from a file outside the git folder,
 * one a sandboxed command may write after this check (the worktree is writable). Reading the
 * config runs nothing.
 *
 * The check runs whenever codex is about to run git for a session: at its start, at a resume, and
 * before a move to another child (codex's `thread/resume` runs `git status` too): a repository
 * whose config changed since (a session whose cwd holds another's repository can write its
 * `.git`) is refused then.
 */
import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import { InvalidInput } from "../../errors.ts";
import { absolutePath } from "./absolute-path.ts";

const run = promisify(execFile);

/** Config keys (lower-cased, as git prints them) whose value git runs as a program. */
const RUNS_PROGRAM: readonly RegExp[] = [
  /^filter\.[^\n]+\.(clean|smudge|process)$/,
  /^diff\.external$/,
  /^diff\.[^\n]+\.(textconv|command)$/,
  /^merge\.[^\n]+\.driver$/,
  /^(difftool|mergetool)\.[^\n]+\.cmd$/,
  /^core\.(pager|editor|sshcommand|askpass|gitproxy|alternaterefscommand)$/,
  /^credential\.([^\n]+\.)?helper$/,
  /^gpg\.([^\n]+\.)?program$/,
  /^sequence\.editor$/,
  /^pager\./,
  /^alias\./,
  /^uploadpack\.packobjectshook$/,
  /^remote\.[^\n]+\.(uploadpack|receivepack|vcs)$/,
  /^url\./,
  /^protocol\./,
  /^sendemail\./,
];

/** Config keys that make git read config from another file (whose content may change later). */
const INCLUDES_FILE: readonly RegExp[] = [/^include\.path$/, /^includeif\.[^\n]+\.path$/];

const JUDGED: readonly RegExp[] = [...RUNS_PROGRAM, ...INCLUDES_FILE];

/** `git lfs install --local`: the one filter repositories commonly carry, a known program. */
const GIT_LFS: Readonly<Record<string, string>> = Object.freeze({
  "filter.lfs.clean": "git-lfs clean -- %f",
  "filter.lfs.smudge": "git-lfs smudge -- %f",
  "filter.lfs.process": "git-lfs filter-process",
});

/** The repository config entries that name a program or include a file, as `key = value` lines. */
export function programEntries(listing: string): string[] {
  const fields = listing.split("\0");
  const found: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i];
    const newline = fields[i + 1].indexOf("\n");
    const key = newline < 0 ? fields[i + 1] : fields[i + 1].slice(0, newline);
    const value = newline < 0 ? "" : fields[i + 1].slice(newline + 1);
    if (scope !== "local" && scope !== "worktree") continue;
    if (GIT_LFS[key] === value) continue;
    if (JUDGED.some((pattern) => pattern.test(key))) found.push(`${key} = ${value}`);
  }
  return found;
}

/**
 * @param action what is refused, for the message (`start session`, `move session`).
 * @throws InvalidInput naming `cwd` (a 400) when the cwd's repository config names a program or
 * includes a file, or cannot be read: `Cannot start session: the repository at /x configures
 * programs git runs ...`.
 */
export async function refuseRepositoryGitPrograms(
  cwd: string,
  action = "start session",
): Promise<void> {
  let listing: string;
  try {
    ({ stdout: listing } = await run(
      "git",
      ["-c", "core.fsmonitor=false", "config", "--list", "--show-scope", "--includes", "-z"],
      {
        cwd,
        timeout: 10_000,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...process.env,
          // `git` is looked up in PATH from the cwd: the repository's own `git` must not answer.
          PATH: absolutePath(process.env.PATH) ?? "/usr/bin:/bin",
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
        },
      },
    ));
  } catch (error) {
    // No git: codex runs none either.
    if ((error as { code?: unknown }).code === "ENOENT") return;
    throw new InvalidInput(
      `Cannot ${action}: the git config of the repository at ${cwd} cannot be read`,
      "cwd",
      { cause: error },
    );
  }
  const entries = programEntries(listing);
  if (entries.length === 0) return;
  throw new InvalidInput(
    `Cannot ${action}: the repository at ${cwd} configures programs git runs or files it ` +
      `reads config from (${entries.join("; ")}), and codex runs git there outside the sandbox`,
    "cwd",
  );
}
