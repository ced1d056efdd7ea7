/**
 * The built-in safety rules. They run before any policy and no policy can remove, reorder or
 * override them. Each judges one normalized simple command (launchers stripped, `sh -c`
 * unwrapped) with its targets resolved against where it really runs, and answers one of three
 * ways: the command breaks the rule (deny), cannot break it, or could break it depending on a
 * word only known at run time (unanalysable: the bridge only allows what it can prove).
 */
import { posix } from "node:path";
import type {
  BuiltinMatch,
  BuiltinRuleInfo,
  CommandAnalysis,
  RuleContext,
  SimpleCommand,
} from "./analyzer.ts";
import { GIT_COMMANDS, GIT_SUBCOMMANDS, skipGitGlobals } from "./shell/git.ts";
import { CODE_OPTIONS_SHELL, executedFile } from "./shell/executed.ts";
import { codeArgs, isStdinPath } from "./shell/inline-code.ts";
import { COMMAND_VALUED_KEY } from "./shell/normalize.ts";
import { HOOK_MANAGER_PATH } from "./hook-files.ts";
import { hasOption, parseArgs } from "./shell/options.ts";
import { containsWorktree, isRootPath, resolvePath } from "./shell/paths.ts";
import { DOWNLOADERS, isInterpreter, PRIVILEGE, SHELLS } from "./shell/programs.ts";
import { CHMOD, RM } from "./shell/specs.ts";
import { makesLink, namedWrites } from "./shell/writes.ts";

/** A rule's answer for one command: nothing, a match, or a reason it cannot tell. */
type Verdict = undefined | true | { unsure: string };

interface Scope {
  context: RuleContext;
  /** Every command of the line, in order, for rules that look back (download, then run). */
  commands: readonly SimpleCommand[];
  index: number;
}

interface BuiltinRule extends BuiltinRuleInfo {
  test(command: SimpleCommand, scope: Scope): Verdict;
}

const unsure = (reason: string): Verdict => ({ unsure: reason });

const isDynamic = (c: SimpleCommand, i: number) => c.dynamic?.[i] === true;
const splits = (c: SimpleCommand, i: number) => c.splits?.[i] === true;

/** The first dynamic word of argv from `from` on, as written. */
function firstDynamic(c: SimpleCommand, from = 1): string | undefined {
  for (let i = from; i < c.argv.length; i++) if (isDynamic(c, i)) return c.argv[i];
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Targets

interface TargetJudgement {
  /** Some literal operand is dangerous. */
  certain: boolean;
  /** Some operand might be dangerous, depending on a run-time word. */
  possible?: string;
}

/** rm's operands: is any of them `/`, home, a system folder, or the worktree's parent? */
function judgeTargets(
  c: SimpleCommand,
  operands: readonly string[],
  dangerous: (path: string, leaves: boolean) => boolean,
  context: RuleContext,
  links: ReadonlyMap<string, string> = new Map(),
): TargetJudgement {
  const out: TargetJudgement = { certain: false };
  for (const written of operands) {
    // `ln -s ~ cache && rm -rf cache/*`: a link the line made is followed to its target.
    const first = written.replace(/^\.\//, "").split("/")[0];
    const link = links.get(first);
    const operand = link === undefined
      ? written
      : `${link}/${written.replace(/^\.\//, "").split("/").slice(1).join("/")}`;
    const index = c.argv.indexOf(written, 1);
    if (index !== -1 && isDynamic(c, index)) {
      // `"$@/build"` or `$d/tmp` may be several words: only the last ends in the literal tail.
      if (splits(c, index) || mightBeDangerous(operand)) out.possible ??= operand;
      continue;
    }
    const resolved = resolvePath(operand, c.cwd, context);
    if (resolved === undefined) {
      out.possible ??= `${operand} in a directory only known at run time`;
      continue;
    }
    if (dangerous(resolved.path, resolved.leavesWorktree)) out.certain = true;
    // A symlink already in the worktree (a repository can commit one to `/`) is followed too.
    const real = context.realpath?.(resolved.path);
    if (real !== undefined && real !== resolved.path && dangerous(real, false)) out.certain = true;
  }
  if (c.appended) out.possible ??= "words xargs reads at run time";
  return out;
}

/**
 * A dynamic operand can be anything, unless its literal end pins it below a harmless folder
 * (`"$TMPDIR/build"` ends in a folder named build, whatever the variable holds).
 */
function mightBeDangerous(word: string): boolean {
  const tail = /[^}$)`\s]*$/.exec(word.replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, "\u0000"))?.[0] ??
    "";
  const after = tail.slice(tail.lastIndexOf("\u0000") + 1);
  const m = /\/([^/]+)\/?$/.exec(after);
  if (m === null) return true;
  const name = m[1];
  return name === ".." || name === "." || /[*?[]/.test(name);
}

function rmDangerous(context: RuleContext) {
  return (path: string, leaves: boolean) =>
    isRootPath(path) || containsWorktree(path, context.worktree) || leaves && !isAbsoluteTmp(path);
}

/** `/tmp/x` reached through `..` is still only a temp folder. */
function isAbsoluteTmp(path: string): boolean {
  return /^\/(tmp|var\/tmp)\/[^/]+/.test(path);
}

/** Programs whose output names files inside the directory they run in. */
const LISTERS = new Set([
  "ls",
  "git",
  "grep",
  "rg",
  "fd",
  "fdfind",
  "sort",
  "uniq",
  "head",
  "tail",
  "find",
]);

/** Symbolic links the commands before this one made: link name → target. */
function linksBefore(scope: Scope): Map<string, string> {
  const links = new Map<string, string>();
  for (const e of scope.commands.slice(0, scope.index)) {
    if (e.argv[0] !== "ln" && e.argv[0] !== "cp") continue;
    const args = e.argv.slice(1);
    if (e.argv[0] === "ln" && !args.some((a) => /^-[a-zA-Z]*s|^--symbolic$/.test(a))) continue;
    if (e.argv[0] === "cp" && !args.some((a) => /^-[a-zA-Z]*s|^--symbolic-link$/.test(a))) continue;
    const operands = args.filter((a) => !a.startsWith("-"));
    if (operands.length >= 2) {
      links.set(
        operands[operands.length - 1].replace(/^\.\//, "").replace(/\/+$/, ""),
        operands[0],
      );
    }
  }
  return links;
}

/** Programs that delete what they are given: `tar --remove-files`, `zip -m`, `cmake -E rm -r`. */
function deletedBy(c: SimpleCommand): string[] | undefined {
  const [program, ...args] = c.argv;
  const operands = args.filter((a) => !a.startsWith("-"));
  if (/^(g|bsd)?tar$/.test(program) && args.includes("--remove-files")) return operands.slice(1);
  if (program === "zip" && args.some((a) => /^-[a-zA-Z]*m/.test(a))) return operands.slice(1);
  if (program === "cmake" && args[0] === "-E" && /^(remove_directory|rm)$/.test(args[1] ?? "")) {
    return args.slice(2).filter((a) => !a.startsWith("-"));
  }
  // `mv ~ /tmp/x` takes the folder away as surely as deleting it.
  if (program === "mv" && operands.length > 1) return operands.slice(0, -1);
  if (program === "rsync" && args.some((a) => a.startsWith("--remove-source-files"))) {
    return operands.slice(0, -1);
  }
  // `git clean -fdx` deletes every untracked file under the repository it is run in.
  const git = gitLine(c);
  if (git?.rest[0] === "clean" && git.rest.some((a) => /^-[a-zA-Z]*f|^--force/.test(a))) {
    const at = git.globals.indexOf("-C");
    return [at === -1 ? "." : git.globals[at + 1] ?? "."];
  }
  return undefined;
}

function rmRoot(c: SimpleCommand, scope: Scope): Verdict {
  if (c.argv[0] === "find") return findDelete(c, scope);
  const deleted = deletedBy(c);
  if (deleted !== undefined) {
    const targets = judgeTargets(c, deleted, rmDangerous(scope.context), scope.context);
    if (targets.certain) return true;
    if (targets.possible !== undefined) {
      return unsure(`dynamic argument to ${c.argv[0]}: ${targets.possible}`);
    }
    return undefined;
  }
  // `unlink` is a one-file rm; under `find -exec` it walks like `rm -r`.
  if (c.argv[0] !== "rm" && c.argv[0] !== "unlink") return undefined;
  const args = c.argv.slice(1);
  const parsed = parseArgs(args, RM);
  // `find DIR -exec rm {} +` walks DIR: as recursive as `rm -r`.
  const recursive = hasOption(parsed, "--recursive") || c.viaFind === true;
  const dynamicWords = args.map((_, i) => i + 1).filter((i) => isDynamic(c, i));
  const targets = judgeTargets(
    c,
    parsed.operands,
    rmDangerous(scope.context),
    scope.context,
    linksBefore(scope),
  );
  if (recursive && targets.certain) return true;
  // Words read by xargs from a program that lists names here are paths below this directory.
  const listed = c.appended && (c.pipedFrom ?? []).length > 0 &&
    (c.pipedFrom ?? []).every((p) => LISTERS.has(p));
  if (listed && !recursive && dynamicWords.length === 0 && !targets.certain) return undefined;
  // A dynamic word may be `-r`, another one (or a literal) the target; an unquoted one may be both.
  const mayRecurse = recursive || dynamicWords.length > 0 || c.appended === true;
  const split = dynamicWords.some((i) => splits(c, i));
  const dangerousOperand = targets.certain || targets.possible !== undefined;
  if (recursive && targets.possible !== undefined) {
    return unsure(`dynamic argument to rm -r: ${targets.possible}`);
  }
  if (
    !recursive && mayRecurse &&
    (split || c.appended || dynamicWords.length + (targets.certain ? 1 : 0) >= 2) &&
    dangerousOperand
  ) {
    return unsure(`dynamic argument to rm: ${firstDynamic(c) ?? targets.possible}`);
  }
  return undefined;
}

/** `find / -delete` deletes like `rm -r /`; its roots are its first operands. */
function findDelete(c: SimpleCommand, scope: Scope): Verdict {
  if (!c.argv.includes("-delete")) return undefined;
  if (c.argv.some((a) => a.startsWith("-files0-from"))) {
    return unsure("find -delete reads the folders it deletes from a file");
  }
  const roots: string[] = [];
  let i = 1;
  // find's own options come before the roots: -H, -L, -P, -O3, -D debugopts, --.
  while (i < c.argv.length && /^(-[HLP]|-O\d*|-D)$/.test(c.argv[i])) {
    i += c.argv[i] === "-D" ? 2 : 1;
  }
  if (c.argv[i] === "--") i++;
  for (; i < c.argv.length && !/^[-(!]/.test(c.argv[i]); i++) roots.push(c.argv[i]);
  const targets = judgeTargets(
    c,
    roots.length === 0 ? ["."] : roots,
    rmDangerous(scope.context),
    scope.context,
  );
  if (targets.certain) return true;
  if (targets.possible !== undefined) {
    return unsure(`dynamic argument to find -delete: ${targets.possible}`);
  }
  return undefined;
}

function chmodOutside(c: SimpleCommand, scope: Scope): Verdict {
  if (c.argv[0] !== "chmod" && c.argv[0] !== "chown" && c.argv[0] !== "chgrp") return undefined;
  const args = c.argv.slice(1);
  const parsed = parseArgs(args, CHMOD);
  const recursive = hasOption(parsed, "--recursive") || c.viaFind === true;
  const dynamicWords = args.map((_, i) => i + 1).filter((i) => isDynamic(c, i));
  if (!recursive && dynamicWords.length === 0 && !c.appended) return undefined;
  const worktree = scope.context.worktree;
  const outside = (path: string, leaves: boolean) =>
    isRootPath(path) || containsWorktree(path, worktree) ||
    (worktree !== undefined ? !path.startsWith(`${worktree}/`) && path !== worktree : leaves);
  // The first operand is the mode or owner, unless the mode looked like an option (`-x`).
  // `--reference=F` takes the mode or owner from F; otherwise a mode may look like an option.
  const modeAsOption = args.some((a) => a.startsWith("--reference")) ||
    c.argv[0] === "chmod" && args.some((a) => /^-[rwxXst][rwxXstugoa,+=-]*$/.test(a));
  const targets = judgeTargets(
    c,
    modeAsOption ? parsed.operands : parsed.operands.slice(1),
    outside,
    scope.context,
    linksBefore(scope),
  );
  if (recursive && targets.certain) return true;
  if (recursive && targets.possible !== undefined) {
    return unsure(`dynamic argument to ${c.argv[0]} -R: ${targets.possible}`);
  }
  if (
    !recursive && (dynamicWords.some((i) => splits(c, i)) || dynamicWords.length >= 2) &&
    (targets.possible !== undefined || targets.certain)
  ) {
    return unsure(`dynamic argument to ${c.argv[0]}: ${firstDynamic(c)}`);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// git

/** Variables that configure git or make it run programs. */
const GIT_ENV =
  /^GIT_(CONFIG\w*|EXEC_PATH|SSH\w*|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND|DIR|WORK_TREE|COMMON_DIR|TEMPLATE_DIR|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE|ALLOW_PROTOCOL|PROTOCOL_FROM_USER|INDEX_FILE)$/;

/** Config keys that run programs, define aliases, or change what push and fetch do. */
const GIT_DANGEROUS_KEY = new RegExp(
  "^(alias\\..+|core\\.(fsmonitor|sshcommand|pager|editor|hookspath|gitproxy|askpass|worktree|" +
    "attributesfile)|sequence\\.editor|diff\\..+\\.(textconv|command)|diff\\.external|" +
    "merge\\..+\\.driver|filter\\..+\\.(clean|smudge|process|required)|credential\\.(.+\\.)?helper|" +
    "remote\\..+\\.(push|mirror|receivepack|uploadpack|proxy|vcs)|include\\.path|includeif\\..+|" +
    "protocol\\..+|uploadpack\\..+|receive\\..+|gpg\\.(.+\\.)?program|pager\\..+|" +
    "interactive\\.difffilter|ssh\\.variant|difftool\\..+|mergetool\\..+|web\\.browser|" +
    "browser\\..+|man\\..+|sendemail\\..+|submodule\\..+\\.update|http\\..*proxy|" +
    "core\\.(symlinks|protect\\w+)|safe\\.directory|init\\.templatedir|" +
    "rebase\\.instructionformat|format\\.headers|color\\.pager|log\\.showsignature|" +
    "trailer\\..+\\.(cmd|command)|extensions\\.worktreeconfig|core\\.bare|" +
    "remote\\..+\\.(skipfetchall|tagopt)|gc\\.auto\\w*|maintenance\\..+)$",
  "i",
);

interface GitLine {
  /** From the subcommand on. */
  rest: string[];
  /** Where `rest` starts in argv. */
  at: number;
  globals: string[];
}

function gitLine(c: SimpleCommand): GitLine | undefined {
  if (c.argv[0] !== "git") return undefined;
  const args = c.argv.slice(1);
  const rest = skipGitGlobals(args);
  const at = c.argv.length - rest.length;
  return { rest, at, globals: args.slice(0, args.length - rest.length) };
}

/** `-c key=value` and `--config-env=key=VAR` of the global options. */
function globalConfigKeys(globals: readonly string[]): string[] {
  const keys: string[] = [];
  for (let i = 0; i < globals.length; i++) {
    const g = globals[i];
    let kv: string | undefined;
    if (g === "-c" || g === "--config-env") kv = globals[++i];
    else if (g.startsWith("--config-env=")) kv = g.slice(13);
    else if (g.startsWith("-c") && g.length > 2) kv = g.slice(2);
    if (kv !== undefined) keys.push(kv.split("=")[0]);
  }
  return keys;
}

/** The key a `git config` invocation sets, when it sets one. */
function configSetKey(args: readonly string[]): string | undefined {
  const operands: string[] = [];
  let reading = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (
      /^--(get|get-all|get-regexp|get-urlmatch|list|unset|unset-all|remove-section|rename-section|show-origin|show-scope|name-only|null|edit)$|^-[lez]$/
        .test(a)
    ) {
      if (!/unset|remove|rename|edit/.test(a)) reading = true;
      continue;
    }
    if (/^(-f|--file|--blob|--type|--default|--comment|--value)$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    operands.push(a);
  }
  if (operands[0] === "get" || operands[0] === "list") return undefined;
  if (operands[0] === "set" || operands[0] === "unset") return operands[1];
  if (reading || operands.length < 2) return undefined;
  return operands[0];
}

function gitConfigExec(c: SimpleCommand): Verdict {
  const git = gitLine(c);
  if (git === undefined) return undefined;
  // Command-valued keys given literally are analysed by the normalizer as scripts.
  const dangerous = globalConfigKeys(git.globals).find((k) =>
    GIT_DANGEROUS_KEY.test(k) && !COMMAND_VALUED_KEY.test(k)
  );
  if (dangerous !== undefined) return true;
  const fromEnv = (c.env ?? []).find((n) => GIT_ENV.test(n));
  if (fromEnv !== undefined) return true;
  if (git.rest[0] === "config") {
    const key = configSetKey(git.rest.slice(1));
    if (key !== undefined && GIT_DANGEROUS_KEY.test(key) && !COMMAND_VALUED_KEY.test(key)) {
      return true;
    }
    if (key !== undefined && isDynamic(c, c.argv.indexOf(key, git.at))) {
      return unsure(`dynamic key to git config: ${key}`);
    }
  }
  // `git remote add --mirror=push r url && git push r` force-pushes every ref.
  if (git.rest[0] === "remote" && git.rest.some((a) => a.startsWith("--mirror"))) return true;
  if (git.rest[0] === "clone" || git.rest[0] === "submodule") {
    for (let i = 1; i < git.rest.length; i++) {
      const a = git.rest[i];
      const kv = a === "-c" || a === "--config"
        ? git.rest[i + 1]
        : a.startsWith("--config=")
        ? a.slice(9)
        : undefined;
      if (kv !== undefined && GIT_DANGEROUS_KEY.test(kv.split("=")[0])) return true;
    }
  }
  return undefined;
}

/** git itself: is what runs exactly known? A dynamic word or an unknown subcommand is not. */
function gitUnknown(c: SimpleCommand): Verdict {
  const git = gitLine(c);
  if (git === undefined) return undefined;
  for (let i = 1; i < git.at; i++) {
    if (isDynamic(c, i)) return unsure(`dynamic global option to git: ${c.argv[i]}`);
  }
  const elsewhere = (c.env ?? []).find((n) => /^(HOME|XDG_CONFIG_HOME|PATH|GNUPGHOME)$/.test(n));
  if (elsewhere !== undefined) {
    return unsure(`git reads its configuration or programs from ${elsewhere}, set on the line`);
  }
  if (git.globals.some((g) => g.startsWith("--exec-path"))) {
    return unsure("git --exec-path runs git commands from another folder");
  }
  const sub = git.rest[0];
  if (sub === undefined) {
    return c.appended ? unsure("git is given its subcommand by xargs at run time") : undefined;
  }
  if (isDynamic(c, git.at)) return unsure(`dynamic git subcommand: ${sub}`);
  if (!GIT_COMMANDS.has(sub)) {
    return unsure(`git ${sub} is not a git command; it may be an alias the repository defines`);
  }
  if (RISKY_GIT.has(sub)) {
    const word = firstDynamic(c, git.at + 1);
    if (word !== undefined) return unsure(`dynamic argument to git ${sub}: ${word}`);
    if (c.appended) return unsure(`git ${sub} given words xargs reads at run time`);
  }
  const runs = git.rest.find((a) =>
    /^--(upload-pack|receive-pack|exec|template|open-files-in-pager)(=|$)/.test(a) ||
    a === "-u" && sub !== "push" && sub !== "add" && sub !== "stash" && sub !== "commit" ||
    sub === "grep" && /^-[A-Za-z]*O/.test(a)
  );
  if (runs !== undefined) {
    return unsure(`git ${sub} ${runs} runs a program the analyzer cannot see`);
  }
  return undefined;
}

/** Subcommands whose arguments the rules read: a dynamic word there could change the answer. */
const RISKY_GIT = new Set([
  "push",
  "send-pack",
  "reset",
  "worktree",
  "config",
  "clone",
  "fetch",
  "pull",
  "submodule",
  "rebase",
  "update-ref",
  "grep",
  "filter-branch",
  "bisect",
  "difftool",
]);

function pushForces(args: readonly string[]): boolean {
  const parsed = parseArgs(args, GIT_SUBCOMMANDS.push);
  // A `+` refspec forces whatever the options say, `--force-with-lease` included.
  if (parsed.operands.some((o) => o.startsWith("+") || /:\+/.test(o))) return true;
  let force = false;
  for (const o of parsed.options) {
    if (o.name === "--force" || o.name === "--mirror") force = true;
    if (o.name === "--no-force") force = false;
  }
  return force;
}

function gitPushForce(c: SimpleCommand): Verdict {
  const git = gitLine(c);
  if (git === undefined) return undefined;
  if (git.rest[0] === "push") return pushForces(git.rest.slice(1)) || undefined;
  if (git.rest[0] === "send-pack") {
    const args = git.rest.slice(1);
    // `--stdin` reads refspecs, `+` ones included, from whatever feeds it.
    if (args.includes("--stdin")) {
      return unsure("git send-pack --stdin reads its refspecs at run time");
    }
    return args.some((a) =>
      a === "--force" || a === "-f" || a === "--mirror" || a.startsWith("+")
    ) ||
      undefined;
  }
  return undefined;
}

/** A pathspec naming the whole tree: `.`, `:/`, `*`, `:(top)`. */
const WHOLE_TREE = /^(\.\/?|:\/?|\*|:\(top\)\.?|\.\/\*)$/;

/** The `git stash` subcommand a git line runs (`push` when none is named), or undefined. */
function stashAction(c: SimpleCommand): string | undefined {
  const git = gitLine(c);
  if (git?.rest[0] !== "stash") return undefined;
  const action = git.rest.slice(1).find((a) => !a.startsWith("-"));
  return action === undefined || action === "save" ? "push" : action;
}

/** `reset --hard` and the commands that throw away uncommitted work the same way. */
function gitResetHard(c: SimpleCommand, scope: Scope): Verdict {
  const git = gitLine(c);
  if (git === undefined) return undefined;
  const [sub, ...args] = git.rest;
  // `git stash && git stash drop`: the work just stashed is dropped, as by `reset --hard`. A drop
  // alone (of a stash made earlier, on purpose) stays allowed.
  const action = stashAction(c);
  if (action === "drop" || action === "clear") {
    return scope.commands.slice(0, scope.index).some((e) => stashAction(e) === "push") ||
      undefined;
  }
  const operands = args.filter((a) => !a.startsWith("-"));
  const dashed = args.indexOf("--");
  const paths = dashed === -1 ? operands : args.slice(dashed + 1);
  switch (sub) {
    case "reset":
      return hasOption(parseArgs(args, GIT_SUBCOMMANDS.reset), "--hard") || undefined;
    case "checkout":
      // `checkout -f`, `checkout .`, `checkout HEAD -- .`: the working tree is overwritten.
      return args.some((a) =>
        a === "-f" || a === "--force" || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(a) && !/[bB]/.test(a)
      ) ||
        paths.some((p) => WHOLE_TREE.test(p)) || undefined;
    case "restore":
      return (!args.includes("--staged") || args.includes("--worktree") || args.includes("-W")) &&
          paths.some((p) => WHOLE_TREE.test(p)) || undefined;
    case "switch":
      return args.some((a) => a === "--discard-changes" || a === "-f" || a === "--force") ||
        undefined;
    case "checkout-index":
      return args.some((a) => /^-[a-zA-Z]*f|^--force$/.test(a)) &&
          args.some((a) => /^-[a-zA-Z]*a|^--all$/.test(a)) || undefined;
  }
  return undefined;
}

function gitWorktreeRemove(c: SimpleCommand): Verdict {
  const git = gitLine(c);
  if (git?.rest[0] !== "worktree") return undefined;
  const sub = git.rest.slice(1).find((a) => !a.startsWith("-"));
  return sub === "remove" || sub === "prune" || sub === "move" || undefined;
}

/** Files under `.git/` that git runs or reads configuration from. */
const GIT_INTERNALS =
  /(^|\/)\.git\/?$|(^|\/)\.git\/(hooks(\/|$)|config(\.worktree)?$|modules\/.*\/(hooks\/|config$)|info\/)|(^|\/)[^/]+\.git\/(config|hooks(\/|$))|(^|\/)\.gitconfig$|(^|\/)\.config\/git\/|(^|\/)\.(profile|bashrc|bash_profile|bash_login|bash_logout|zshrc|zshenv|zprofile|zlogin|kshrc|cshrc|tcshrc|mkshrc)$|(^|\/)(sitecustomize|usercustomize)\.py$|\.pth$|(^|\/)\.ssh\/|(^|\/)\.hooks\//;

/** Programs that write to their last operand or a named file. */
function writtenFiles(c: SimpleCommand): string[] {
  const files = [...(c.writes ?? []), ...namedWrites(c.argv).map((w) => w.file)];
  const [program, ...args] = c.argv;
  const operands = args.filter((a) => !a.startsWith("-"));
  if (/^(cp|mv|ln|install|rsync)$/.test(program) && operands.length > 1) {
    const t = args.findIndex((a) => a === "-t" || a === "--target-directory");
    if (t !== -1 && args[t + 1] !== undefined) files.push(args[t + 1]);
  }
  if (program === "dd") {
    files.push(...args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3)));
  }
  if (DOWNLOADERS.has(program)) files.push(...downloadTargets(c).filter((f) => f !== REMOTE_NAME));
  if (program === "git" && args.includes("config")) {
    const f = args.findIndex((a) => a === "-f" || a === "--file");
    if (f !== -1 && args[f + 1] !== undefined) files.push(args[f + 1]);
  }
  // A link to a protected file or folder lets a later write reach it under another name:
  // `ln -s .git/hooks h`, `ln .git/config c`, `cp -l ~/.gitconfig g`.
  if (makesLink(c.argv) && operands.length > 1) files.push(...operands.slice(0, -1));
  // Unpacking into a folder writes there: `tar -xf h.tar -C .git`, `unzip h.zip -d .git`.
  const extracts = (program === "tar" || program === "bsdtar") &&
    args.some((a) => /^-?[a-zA-Z]*x/.test(a) && !a.startsWith("--") || a === "--extract");
  const into = args.findIndex((a) =>
    extracts && (a === "-C" || a === "--directory") || program === "unzip" && a === "-d"
  );
  if (into !== -1 && args[into + 1] !== undefined) files.push(args[into + 1]);
  if (extracts) {
    const dir = args.find((a) => a.startsWith("--directory="));
    if (dir !== undefined) files.push(dir.slice(12));
  }
  return files;
}

function gitHooksWrite(c: SimpleCommand, scope: Scope): Verdict {
  const files = writtenFiles(c).map((f) => posix.normalize(f));
  if (files.some((f) => GIT_INTERNALS.test(f) || HOOK_MANAGER_PATH.test(f))) return true;
  if (files.length > 0 && writesIntoHooksDir(c, files, scope.context)) return true;
  if (c.cwd === null && files.some((f) => !/^[/~]/.test(f))) {
    return unsure(`writes ${files[0]} in a directory only known at run time`);
  }
  if (
    c.cwd !== undefined && c.cwd !== null && /(^|\/)\.git(\/hooks)?$/.test(c.cwd) &&
    files.length > 0
  ) return true;
  return undefined;
}

/** Does a written file land in the folder the repository's `core.hooksPath` names? */
function writesIntoHooksDir(c: SimpleCommand, files: string[], context: RuleContext): boolean {
  const hooks = context.hooksDir?.();
  const base = context.cwd ?? context.worktree;
  if (hooks === undefined || base === undefined || c.cwd === null) return false;
  const dir = posix.resolve(base, c.cwd ?? ".");
  return files.some((f) => {
    if (f.startsWith("~")) return false;
    const rel = posix.relative(hooks, posix.resolve(dir, f));
    return rel === "" || !rel.startsWith("..") && !posix.isAbsolute(rel);
  });
}

// ---------------------------------------------------------------------------------------------
// Code from the network

/** Does the program take its code from stdin or from a substituted word? */
function runsFedCode(c: SimpleCommand): boolean {
  const [program, ...args] = c.argv;
  if (program === "eval" || program === "source" || program === ".") return true;
  if (!SHELLS.has(program) && !isInterpreter(program)) return false;
  if (c.appended) return true;
  // `sh -c "$(curl …)"`, `bash <(curl …)`: the code is the substitution.
  if (args.some((a) => /\$\(|`|<\(/.test(a))) return true;
  if (SHELLS.has(program)) {
    if (args.some((a) => CODE_OPTIONS_SHELL.test(a))) return false;
    const operand = args.find((a) => !a.startsWith("-") && !a.startsWith("+"));
    return operand === undefined || isStdinPath(operand) || args.includes("-s") ||
      args.includes("-");
  }
  const parsed = codeArgs(program, args.map((value) => ({ value, dynamic: false })));
  return parsed.stdin;
}

const REMOTE_NAME = "\u0000remote-name";

/** Files a downloader writes: `-o F`, `--output F`, `-O` (the name the server picks), `> F`. */
function downloadTargets(c: SimpleCommand): string[] {
  const [program, ...args] = c.argv;
  const fed = (c.pipedFrom ?? []).some((p) => DOWNLOADERS.has(p));
  // `curl … | tee i.sh`, `curl … | cat > i.sh`: what the downloader printed lands in a file.
  if (fed && !DOWNLOADERS.has(program)) {
    const files = [...(c.writes ?? [])];
    if (program === "tee") files.push(...args.filter((a) => !a.startsWith("-")));
    return files.filter((f) => f !== "/dev/null" && f !== "-" && f !== "/dev/stdout");
  }
  if (!DOWNLOADERS.has(program)) return [];
  const files = [...(c.writes ?? [])];
  const isWget = program === "wget" || program === "wget2";
  let named = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (isWget) {
      if (a === "-O" || a === "--output-document") files.push(args[++i] ?? REMOTE_NAME);
      else if (a.startsWith("--output-document=")) files.push(a.slice(18));
      else if (/^-[a-zA-Z]*O$/.test(a)) files.push(args[++i] ?? REMOTE_NAME);
      else if (/^-[a-zA-Z]*O./.test(a)) files.push(a.slice(a.indexOf("O") + 1));
      else if (a === "-P" || a === "--directory-prefix" || a.startsWith("--directory-prefix=")) {
        files.push(REMOTE_NAME);
      } else continue;
      named = true;
    } else if (program === "curl") {
      if (a === "-o" || a === "--output") files.push(args[++i] ?? REMOTE_NAME);
      else if (a.startsWith("--output=")) files.push(a.slice(9));
      else if (/^-[a-zA-Z]*o$/.test(a) && !a.startsWith("--")) files.push(args[++i] ?? REMOTE_NAME);
      else if (
        /^-[a-zA-Z]*[OK][a-zA-Z]*$/.test(a) || /^--(remote-name|remote-name-all|config)/.test(a) ||
        a === "-J"
      ) files.push(REMOTE_NAME);
    } else if (a === "-o" || a === "-O") {
      files.push(args[++i] ?? REMOTE_NAME);
    }
  }
  // wget saves under the server's name unless told otherwise, or prints with `-O -`.
  if (isWget && !named && (c.writes ?? []).length === 0) files.push(REMOTE_NAME);
  return files.filter((f) => f !== "-" && f !== "/dev/stdout");
}

function sameFile(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/^\.\//, "");
  return norm(a) === norm(b) || a.split("/").pop() === b.split("/").pop();
}

function downloadToShell(c: SimpleCommand): Verdict {
  return (c.pipedFrom ?? []).some((p) => DOWNLOADERS.has(p)) && runsFedCode(c) || undefined;
}

/** Files a shell, python or git reads and runs on start, whoever starts them. */
const STARTUP_FILE =
  /(^|\/)(\.profile|\.bashrc|\.bash_profile|\.bash_login|\.bash_logout|\.zshrc|\.zshenv|\.zprofile|\.zlogin|\.kshrc|\.cshrc|\.tcshrc|\.mkshrc|\.inputrc|\.envrc|sitecustomize\.py|usercustomize\.py|[^/]*\.pth|\.npmrc|\.yarnrc(\.yml)?|\.gitconfig|\.curlrc|\.wgetrc|\.pythonrc(\.py)?|conftest\.py|\.git\/hooks\/[^/]+)$/;

/** Files an interpreter may load by name or path. */
const CODE_FILE =
  /\.(py|pyc|pth|js|mjs|cjs|ts|sh|bash|pl|pm|rb|php|lua|so|dylib)$|(^|\/)node_modules\//;

/** Variables that make a program load and run a file (`BASH_ENV=env.sh bash -c true`). */
const CODE_LOADING_ENV =
  /^(BASH_ENV|ENV|PROMPT_COMMAND|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_\w+|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GIT_\w+|PATH)$/;

/** `curl -o x.sh … && sh x.sh`, or a file a downloader wrote earlier in the session. */
function downloadThenRun(c: SimpleCommand, scope: Scope): Verdict {
  const targets = downloadTargets(c);
  if (targets.some((t) => STARTUP_FILE.test(t))) return true;
  const earlier = scope.commands.slice(0, scope.index).flatMap(downloadTargets);
  // Downloaded code that an interpreter may pick up by itself: `json.py` before `import json`,
  // `node_modules/x/index.js` before `require("x")`.
  const code = earlier.some((t) => t === REMOTE_NAME || CODE_FILE.test(t));
  if (code && (isInterpreter(c.argv[0]) || SHELLS.has(c.argv[0]))) return true;
  if (earlier.length > 0 && (c.env ?? []).some((n) => CODE_LOADING_ENV.test(n))) return true;
  const file = executedFile(c);
  if (file === undefined) return undefined;
  if (earlier.some((target) => target === REMOTE_NAME || sameFile(target, file))) return true;
  const tainted = scope.context.tainted;
  if (tainted !== undefined && tainted.size > 0) {
    const resolved = resolvePath(file, c.cwd, scope.context);
    if (resolved === undefined || tainted.has(resolved.path)) return true;
  }
  return undefined;
}

/** Files downloaded by the line, resolved: the bridge taints them for the session. */
export function downloadedFiles(analysis: CommandAnalysis, context: RuleContext): string[] {
  const out: string[] = [];
  for (const c of analysis.commands) {
    for (const target of downloadTargets(c)) {
      if (target === REMOTE_NAME) continue;
      const resolved = resolvePath(target, c.cwd, context);
      if (resolved !== undefined) out.push(resolved.path);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

const RULES: readonly BuiltinRule[] = [
  {
    id: "builtin.privilege-escalation",
    reason: "runs a command as another user (sudo, doas, su, pkexec); agents never need root",
    test: (c) =>
      PRIVILEGE.has(c.argv[0]) || c.argv[0] === "runuser" || c.argv[0] === "setpriv" || undefined,
  },
  {
    id: "builtin.rm-root",
    reason:
      "recursive delete of /, the home folder, a top-level system folder, or a folder holding the worktree",
    test: rmRoot,
  },
  {
    id: "builtin.git-worktree-remove",
    reason: "git worktree remove/prune deletes worktrees other sessions may be using",
    test: gitWorktreeRemove,
  },
  {
    id: "builtin.git-reset-hard",
    reason:
      "git reset --hard (or checkout -f, restore ., a stash dropped right after it is made) throws away uncommitted work",
    test: gitResetHard,
  },
  {
    id: "builtin.git-push-force",
    reason:
      "a force push (--force, -f, --mirror or a +refspec, even beside --force-with-lease) overwrites commits on the remote",
    test: gitPushForce,
  },
  {
    id: "builtin.git-config-exec",
    reason:
      "sets git configuration that runs programs, defines aliases or changes what push does (-c, git config, GIT_CONFIG_* and the like)",
    test: gitConfigExec,
  },
  {
    id: "builtin.git-hooks-write",
    reason:
      "writes git hooks or config, a shell or python startup file, or ssh settings: code that runs later outside any approval",
    test: gitHooksWrite,
  },
  {
    id: "builtin.download-to-shell",
    reason: "runs code downloaded from the network in a shell or interpreter",
    test: (c, scope) => downloadToShell(c) ?? downloadThenRun(c, scope),
  },
  {
    id: "builtin.recursive-chmod-absolute",
    reason: "recursive chmod/chown/chgrp of files outside the worktree",
    test: chmodOutside,
  },
  {
    id: "builtin.git-unknown",
    reason: "git whose subcommand or arguments are only known at run time",
    test: gitUnknown,
  },
];

export const BUILTIN_RULES: readonly BuiltinRuleInfo[] = RULES.map(({ id, reason }) => ({
  id,
  reason,
}));

/**
 * The first rule any command of the line breaks, in the order the commands appear; failing
 * that, the first rule a command could break depending on what only the run-time shows.
 */
export function matchBuiltin(
  analysis: CommandAnalysis,
  context: RuleContext = {},
): BuiltinMatch | undefined {
  let doubt: BuiltinMatch | undefined;
  const commands = analysis.commands;
  for (let index = 0; index < commands.length; index++) {
    const command = commands[index];
    const scope: Scope = { context, commands, index };
    for (const rule of RULES) {
      const verdict = rule.test(command, scope);
      if (verdict === true) return { ruleId: rule.id, reason: rule.reason, command, kind: "deny" };
      if (verdict !== undefined && doubt === undefined) {
        doubt = { ruleId: rule.id, reason: verdict.unsure, command, kind: "unanalyzable" };
      }
    }
  }
  return doubt;
}
