/**
 * What no sandboxed command may read, whatever its spelling: the sandbox itself refuses it.
 *
 * Why here and not only in policy regexes: a regex sees the command line, and a line has too many
 * ways to name a file (`cat ~/.aw?/credentials`, `cd ~ && cd .a*s && cat credentials`,
 * `find ~ -path '*\/.?ws/*' -exec cat {} +`, `python3 -c "open('~/.' + 'aws/…')"`). codex's
 * permission profile takes absolute paths to deny reads of (bubblewrap on Linux, Seatbelt on
 * macOS), enforced below every spelling. So every thread's sandbox denies:
 * - the cloud, cluster, SSH, GPG and forge credentials in the home codex's commands run with (the
 *   folders the default policy's `no-credential-folders` names, plus `.netrc` and the files git's
 *   `store` helper, docker and the package registries' clients keep tokens in);
 * - that home's shell start-up files and histories (HOME_SHELL_FILES): a `.bashrc` that exports a
 *   token hands it to every command, past the environment allow-list (plan.ts), since the shell
 *   codex runs the command in sources it; and histories hold what was typed, tokens included;
 * - everything in codex's CODEX_HOME but its `tmp` (the helper links commands run): its logins
 *   (`auth.json`: the OpenAI key or ChatGPT tokens; MCP OAuth tokens), its threads' rollouts (every
 *   session's transcript; and the record rollout-calls.ts judges a resumed thread's approvals on,
 *   which no command may write), and its databases, which hold every thread's history a second
 *   time (`thread_history_*.sqlite`: prompts, messages, command output; `state_*.sqlite`): one
 *   session read another's prompt there (test/provider/codex/session-isolation.test.ts). Listed
 *   at each thread start (`list`), so what a newer codex adds there is denied too;
 * - codexd's state dir (its token, its database of every session's events) and token file.
 *
 * Limits (the README's "Sandbox" section): only the sandboxed modes (`read-only`,
 * `workspace-write`) have a filesystem policy; `danger-full-access` has none, and a command the
 * model sends with `sandbox_permissions: "require_escalated"` runs unsandboxed once approved.
 */
import path from "node:path";
import { isWithin } from "../../paths.ts";

/** Credential locations below a home folder. */
export const HOME_CREDENTIALS: readonly string[] = Object.freeze([
  ".aws",
  ".azure",
  ".kube",
  ".gnupg",
  ".ssh",
  ".docker/config.json",
  ".config/gcloud",
  ".config/gh",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".config/hub",
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".pgpass",
  ".my.cnf",
  ".vault-token",
  ".terraform.d/credentials.tfrc.json",
  ".s3cfg",
  ".boto",
  ".password-store",
  ".local/share/keyrings",
  // Coding agents' logins and transcripts: codex's own default home (its auth.json holds an
  // OpenAI key or ChatGPT tokens), Claude Code's, Gemini CLI's, Copilot's, Continue's.
  ".codex",
  ".claude",
  ".claude.json",
  ".gemini",
  ".config/github-copilot",
  ".continue",
]);

/**
 * Shell start-up files and histories below a home folder. Measured on codex 0.169 with Debian's
 * bash: a variable a readable `~/.bashrc` exports reaches every command (bash sources it for
 * codex's `bash -c`), and `~/.bash_profile`'s once shell snapshots are off or a command starts a
 * login shell; `shell_environment_policy.include_only` filters codex's environment, not what a
 * shell adds after. Denied, no shell reads them, whoever starts it
 * (test/provider/codex/login-shell-env.test.ts).
 */
export const HOME_SHELL_FILES: readonly string[] = Object.freeze([
  ".profile",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".bash_aliases",
  ".bash_history",
  ".zshenv",
  ".zprofile",
  ".zshrc",
  ".zlogin",
  ".zlogout",
  ".zsh_history",
  ".kshrc",
  ".mkshrc",
  ".config/fish",
  ".local/share/fish",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".rediscli_history",
]);

/**
 * The folders of codex's threads' rollouts below its CODEX_HOME. Made before codex starts
 * (process.ts): only a path that exists is denied, and the first thread must be denied them too.
 */
export const CODEX_HOME_ROLLOUT_DIRS: readonly string[] = Object.freeze([
  "sessions",
  "archived_sessions",
]);

/**
 * codex's logins and threads' rollouts below its CODEX_HOME (codex itself reads and writes them;
 * its commands never need to), denied even when the home cannot be listed. Denied folders are
 * masked whole, so no write reaches them either.
 */
export const CODEX_HOME_PRIVATE: readonly string[] = Object.freeze([
  "auth.json",
  ".credentials.json",
  ...CODEX_HOME_ROLLOUT_DIRS,
]);

export interface ReadDeniedInput {
  /** HOME of codex's commands (the agent user's, or the daemon's); none: no home entries. */
  home?: string | undefined;
  codexHome: string;
  /** codexd's own files: the state dir, the token file, ... */
  daemonPaths?: readonly string[];
  /**
   * The real path of an existing path (the filesystem's `realpathSync` in production). A denied
   * path that is a symlink (a dotfiles manager's `~/.bashrc`, `~/.aws`) stops bubblewrap from
   * setting up the sandbox at all ("Can't create file at …": no command runs), so the target is
   * denied instead, which is what holds the secret.
   */
  realpath?: (path: string) => string;
  /**
   * The names in a folder (the filesystem's `readdirSync` in production): every entry of
   * CODEX_HOME is denied but `tmp` and one holding `home`. Without it only CODEX_HOME_PRIVATE is.
   */
  list?: (dir: string) => readonly string[];
  /**
   * Keeps only the paths it says exist (the filesystem's `existsSync` in production). A missing
   * path holds nothing to read, and bubblewrap cannot mask one whose parent is missing inside a
   * writable folder ("Can't bind mount … No such file or directory" for `~/.config/gh` when HOME
   * lies under /tmp), which would fail every command. So the list is made at each thread start.
   */
  exists?: (path: string) => boolean;
}

/** The absolute paths a thread's sandbox denies reads of: sorted, none inside another. */
export function readDeniedPaths(input: ReadDeniedInput): string[] {
  const paths = new Set<string>();
  // A home of `/` (an account without one) would deny `/.ssh`: harmless, and still right.
  if (input.home !== undefined && path.isAbsolute(input.home)) {
    for (const name of [...HOME_CREDENTIALS, ...HOME_SHELL_FILES]) {
      const entry = path.join(input.home, name);
      // A codex home codexd was told to use in there (`~/.codex`) is denied entry by entry
      // instead: its `tmp` must stay readable.
      if (isWithin(input.codexHome, entry)) continue;
      paths.add(entry);
    }
  }
  for (const name of codexHomeEntries(input)) paths.add(path.join(input.codexHome, name));
  for (const own of input.daemonPaths ?? []) {
    if (path.isAbsolute(own)) paths.add(path.normalize(own));
  }
  const existing = [...paths].filter((p) => input.exists?.(p) ?? true);
  // A database's journal files come and go with its connections (a WAL file is removed when the
  // last one closes and made again at the next): they are denied whether there now or not. A
  // missing path in codex's home is harmless (measured: codex skips it, and denies the file once
  // it is there again); only a missing one inside a writable folder breaks the sandbox.
  const journals = codexHomeJournals(input, existing);
  // Only the outermost of nested paths: bubblewrap masks a denied folder first and then cannot
  // mount over a denied file inside it ("Can't create file at …"), which fails every command.
  const sorted = [...new Set([...existing, ...journals].map((p) => realLocation(p, input)))]
    .sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && isWithin(p, q)));
}

/** What of CODEX_HOME commands may not read: everything listed but codex's `tmp` and HOME. */
function codexHomeEntries(input: ReadDeniedInput): string[] {
  let listed: readonly string[] = [];
  try {
    listed = input.list?.(input.codexHome) ?? [];
  } catch {
    // Not there yet, or unreadable: the fixed names still go.
  }
  const home = input.home !== undefined && path.isAbsolute(input.home) ? input.home : undefined;
  return [...new Set([...CODEX_HOME_PRIVATE, ...listed])].filter((name) => {
    const entry = path.join(input.codexHome, name);
    if (name === CODEX_HOME_TMP) return false;
    // A HOME inside the codex home (the tests' layout) keeps its own denials instead.
    return home === undefined || !isWithin(home, entry);
  });
}

/**
 * `p` with its symlinks resolved (its folder's, when it does not exist); as given without
 * `realpath`.
 */
function realLocation(p: string, input: ReadDeniedInput): string {
  const realpath = input.realpath;
  if (!realpath) return p;
  try {
    return realpath(p);
  } catch {
    try {
      return path.join(realpath(path.dirname(p)), path.basename(p));
    } catch {
      return p;
    }
  }
}

/** The journal files of every database denied in codex's home (`x.sqlite` → `x.sqlite-wal`, …). */
function codexHomeJournals(input: ReadDeniedInput, denied: readonly string[]): string[] {
  return denied
    .filter((p) => path.dirname(p) === input.codexHome && p.endsWith(".sqlite"))
    .flatMap((db) => JOURNAL_SUFFIXES.map((suffix) => db + suffix));
}

const JOURNAL_SUFFIXES = ["-wal", "-shm", "-journal"];

/** codex's own temp folder in its home: the helper links (`apply_patch`) commands run from. */
const CODEX_HOME_TMP = "tmp";
