/** git's command line: global options before the subcommand, and subcommand option tables. */
import type { OptionSpec } from "./options.ts";

const GLOBAL_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--super-prefix",
  "--config-env",
  "--exec-path",
  "--list-cmds",
  "--attr-source",
]);

/**
 * The arguments from the subcommand on: `git -C dir -c k=v --no-pager reset --hard` gives
 * `reset --hard`. Unknown dashed words before the subcommand are skipped like flags.
 */
export function skipGitGlobals(args: readonly string[]): string[] {
  let i = 0;
  while (i < args.length && args[i].startsWith("-") && args[i] !== "--") {
    const arg = args[i];
    const name = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg;
    i += GLOBAL_WITH_VALUE.has(arg) && !arg.includes("=") && name === arg ? 2 : 1;
  }
  if (args[i] === "--") i++;
  return args.slice(i);
}

/** Option tables of the subcommands the built-in rules and prefix rules look at. */
export const GIT_SUBCOMMANDS: Readonly<Record<string, OptionSpec>> = {
  push: {
    shortValue: "o",
    aliases: { f: "force", u: "set-upstream", n: "dry-run", q: "quiet", v: "verbose", d: "delete" },
    longs: [
      "all",
      "branches",
      "mirror",
      "delete",
      "tags",
      "dry-run",
      "porcelain",
      "force",
      "no-force",
      "force-with-lease",
      "no-force-with-lease",
      "force-if-includes",
      "no-force-if-includes",
      "recurse-submodules=",
      "no-recurse-submodules",
      "thin",
      "no-thin",
      "receive-pack=",
      "exec=",
      "repo=",
      "set-upstream",
      "progress",
      "no-progress",
      "prune",
      "no-verify",
      "verify",
      "follow-tags",
      "no-follow-tags",
      "signed",
      "no-signed",
      "atomic",
      "no-atomic",
      "push-option=",
      "ipv4",
      "ipv6",
      "quiet",
      "verbose",
    ],
  },
  reset: {
    aliases: { q: "quiet", p: "patch", N: "intent-to-add" },
    longs: [
      "quiet",
      "no-quiet",
      "refresh",
      "no-refresh",
      "mixed",
      "soft",
      "hard",
      "merge",
      "keep",
      "recurse-submodules",
      "no-recurse-submodules",
      "patch",
      "intent-to-add",
      "pathspec-from-file=",
      "pathspec-file-nul",
    ],
  },
  clean: {
    shortValue: "e",
    aliases: { f: "force", n: "dry-run", q: "quiet", i: "interactive", e: "exclude" },
    longs: ["force", "dry-run", "quiet", "interactive", "exclude="],
  },
  checkout: {
    shortValue: "bB",
    aliases: { f: "force", q: "quiet", p: "patch", m: "merge" },
    longs: ["force", "quiet", "patch", "merge", "detach", "orphan=", "track", "no-track"],
  },
  commit: {
    shortValue: "mFCctS",
    aliases: {
      a: "all",
      m: "message",
      n: "no-verify",
      F: "file",
      s: "signoff",
      p: "patch",
      q: "quiet",
      v: "verbose",
    },
    longs: [
      "all",
      "message=",
      "no-verify",
      "verify",
      "file=",
      "signoff",
      "patch",
      "quiet",
      "verbose",
      "amend",
      "no-edit",
      "edit",
      "allow-empty",
      "fixup=",
      "squash=",
      "author=",
      "date=",
    ],
  },
  branch: {
    aliases: { d: "delete", D: ["delete", "force"], f: "force", m: "move", M: ["move", "force"] },
    longs: ["delete", "force", "move", "copy", "list", "all", "remotes", "set-upstream-to="],
  },
  add: {
    aliases: { A: "all", f: "force", u: "update", p: "patch", n: "dry-run" },
    longs: ["all", "force", "update", "patch", "dry-run", "intent-to-add", "verbose"],
  },
  rebase: {
    aliases: { i: "interactive" },
    longs: ["interactive", "onto=", "continue", "abort", "skip", "autosquash", "exec="],
  },
  stash: { longs: ["all", "include-untracked", "keep-index", "message=", "patch", "quiet"] },
  worktree: { longs: ["force", "dry-run", "verbose", "expire=", "detach", "lock", "reason="] },
  log: { shortValue: "n", longs: ["oneline", "graph", "all", "stat", "patch", "max-count="] },
};

/**
 * Every git subcommand git itself provides (and the external ones commonly installed). A repo's
 * config cannot alias over these; any other word may be an alias that runs anything.
 */
export const GIT_COMMANDS: ReadonlySet<string> = new Set(
  (
    "add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr " +
    "check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick " +
    "citool clean clone column commit commit-graph commit-tree config count-objects credential " +
    "describe diagnose diff diff-files diff-index diff-tree difftool fast-export fast-import " +
    "fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck " +
    "gc get-tar-commit-id grep gui hash-object help index-pack init instaweb " +
    "interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge " +
    "merge-base merge-file merge-index merge-tree mergetool mktag mktree multi-pack-index mv " +
    "name-rev notes pack-objects pack-refs patch-id prune prune-packed pull push range-diff " +
    "read-tree rebase reflog remote repack replace replay request-pull rerere reset restore " +
    "rev-list rev-parse revert rm send-email send-pack shortlog show show-branch show-index " +
    "show-ref sparse-checkout stash status stripspace submodule switch symbolic-ref tag " +
    "unpack-file unpack-objects update-index update-ref update-server-info var verify-commit " +
    "verify-pack verify-tag version whatchanged worktree write-tree lfs init-db"
  ).split(" "),
);
