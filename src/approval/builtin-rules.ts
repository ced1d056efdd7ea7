/**
 * The built-in safety rules. They run before any policy and no policy can remove, reorder or
 * override them. Each judges one normalized simple command (launchers stripped, `sh -c`
 * unwrapped) and names itself in the decision.
 */
import { posix } from "node:path";
import type { BuiltinMatch, BuiltinRuleInfo, CommandAnalysis, SimpleCommand } from "./analyzer.ts";
import { GIT_SUBCOMMANDS, skipGitGlobals } from "./shell/git.ts";
import { hasOption, parseArgs } from "./shell/options.ts";
import { DOWNLOADERS, isInterpreter, PRIVILEGE, SHELLS } from "./shell/programs.ts";
import { CHMOD, RM } from "./shell/specs.ts";

interface BuiltinRule extends BuiltinRuleInfo {
  test(argv: readonly string[], command: SimpleCommand): boolean;
}

/** Top-level folders whose loss breaks the machine or other users' data. */
const SYSTEM_FOLDERS = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "home",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "nix",
  "opt",
  "proc",
  "root",
  "run",
  "sbin",
  "snap",
  "srv",
  "sys",
  "tmp",
  "usr",
  "var",
  "Applications",
  "Library",
  "System",
  "Users",
  "Volumes",
  "private",
  "cores",
]);

const HOME = "/home/~";

/** `~`, `~/`, `$HOME/*`, `/`, `/*`, `//`, `/usr/`, `/bin/..`, `/e*` … */
export function isRootTarget(operand: string): boolean {
  let path = operand;
  if (/^~[A-Za-z0-9_.-]*(\/|$)/.test(path)) path = HOME + path.slice(path.search(/\/|$/));
  else if (/^\$HOME(\/|$)/.test(path)) path = HOME + path.slice(5);
  if (!path.startsWith("/")) return false;
  let normalized = posix.normalize(path);
  // `/usr/*` and `/usr/.` delete as much as `/usr`.
  while (/\/(\*|\.)$/.test(normalized)) normalized = normalized.slice(0, -2) || "/";
  normalized = normalized.replace(/\/+$/, "");
  if (normalized === "" || normalized === HOME) return true;
  const segments = normalized.split("/").slice(1);
  if (segments.length !== 1) return false;
  return SYSTEM_FOLDERS.has(segments[0]) || /[*?[]/.test(segments[0]);
}

function isAbsoluteTarget(operand: string): boolean {
  return operand.startsWith("/") || /^~/.test(operand) || /^\$HOME(\/|$)/.test(operand) ||
    operand.startsWith("$PWD/..");
}

function gitArgs(argv: readonly string[]): string[] | undefined {
  return argv[0] === "git" ? skipGitGlobals(argv.slice(1)) : undefined;
}

function pushForces(args: readonly string[]): boolean {
  const parsed = parseArgs(args, GIT_SUBCOMMANDS.push);
  let force = parsed.operands.some((o) => o.startsWith("+"));
  let lease = false;
  for (const o of parsed.options) {
    if (o.name === "--force") force = true;
    if (o.name === "--no-force") force = parsed.operands.some((x) => x.startsWith("+"));
    if (o.name === "--force-with-lease") lease = true;
    if (o.name === "--no-force-with-lease") lease = false;
  }
  return force && !lease;
}

const CODE_OPTIONS = new Set(["-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r"]);

/** Does the program take its code from stdin or from a substituted word? */
function runsFedCode(argv: readonly string[]): boolean {
  const program = argv[0];
  if (program === "eval" || program === "source" || program === ".") return true;
  if (!SHELLS.has(program) && !isInterpreter(program)) return false;
  const args = argv.slice(1);
  // `sh -c "$(curl …)"`, `bash <(curl …)`: the code is the substitution.
  if (args.some((a) => /\$\(|`|<\(/.test(a))) return true;
  if (args.some((a) => CODE_OPTIONS.has(a) || /^-[a-z]*c[a-z]*$/.test(a) && SHELLS.has(program))) {
    return false;
  }
  const operand = args.find((a) => !a.startsWith("-"));
  return operand === undefined || args.includes("-s") || args.includes("-");
}

const RULES: readonly BuiltinRule[] = [
  {
    id: "builtin.privilege-escalation",
    reason: "runs a command as another user (sudo, doas, su, pkexec); agents never need root",
    test: (argv) => PRIVILEGE.has(argv[0]),
  },
  {
    id: "builtin.rm-root",
    reason: "recursive rm of /, the home folder or a top-level system folder",
    test(argv) {
      if (argv[0] !== "rm") return false;
      const parsed = parseArgs(argv.slice(1), RM);
      return hasOption(parsed, "--recursive") && parsed.operands.some(isRootTarget);
    },
  },
  {
    id: "builtin.git-worktree-remove",
    reason: "git worktree remove/prune deletes worktrees other sessions may be using",
    test(argv) {
      const args = gitArgs(argv);
      if (args?.[0] !== "worktree") return false;
      const sub = args.slice(1).find((a) => !a.startsWith("-"));
      return sub === "remove" || sub === "prune";
    },
  },
  {
    id: "builtin.git-reset-hard",
    reason: "git reset --hard throws away uncommitted work",
    test(argv) {
      const args = gitArgs(argv);
      if (args?.[0] !== "reset") return false;
      return hasOption(parseArgs(args.slice(1), GIT_SUBCOMMANDS.reset), "--hard");
    },
  },
  {
    id: "builtin.git-push-force",
    reason: "a force push without --force-with-lease overwrites commits on the remote",
    test(argv) {
      const args = gitArgs(argv);
      return args?.[0] === "push" && pushForces(args.slice(1));
    },
  },
  {
    id: "builtin.download-to-shell",
    reason: "runs code downloaded from the network in a shell or interpreter",
    test: (argv, command) =>
      (command.pipedFrom ?? []).some((p) => DOWNLOADERS.has(p)) && runsFedCode(argv),
  },
  {
    id: "builtin.recursive-chmod-absolute",
    reason: "recursive chmod/chown on an absolute path changes files outside the worktree",
    test(argv) {
      if (argv[0] !== "chmod" && argv[0] !== "chown" && argv[0] !== "chgrp") return false;
      const parsed = parseArgs(argv.slice(1), CHMOD);
      return hasOption(parsed, "--recursive") && parsed.operands.some(isAbsoluteTarget);
    },
  },
];

export const BUILTIN_RULES: readonly BuiltinRuleInfo[] = RULES.map(({ id, reason }) => ({
  id,
  reason,
}));

/** The first rule any command of the line breaks, in the order the commands appear. */
export function matchBuiltin(analysis: CommandAnalysis): BuiltinMatch | undefined {
  for (const command of analysis.commands) {
    for (const rule of RULES) {
      if (rule.test(command.argv, command)) {
        return { ruleId: rule.id, reason: rule.reason, command };
      }
    }
  }
  return undefined;
}
