/**
 * Turns the words of one simple command into the commands it really runs: launchers (one table,
 * `./launchers.ts`) are stripped, path prefixes and version suffixes dropped, and the scripts of
 * `sh -c`, `eval`, `trap`, `flock -c`, `git rebase -x`, literal stdin … handed back to be analysed
 * in turn. What cannot be seen exactly (a dynamic program name, inline code that starts
 * processes, a script another program prints) is reported as unanalysable, never guessed.
 */
import { skipGitGlobals } from "./git.ts";
import { codeArgs, isStdinPath, sedRunsCommands, sedScripts, unsafeCode } from "./inline-code.ts";
import { COMMAND_AFTER, INERT, LAUNCHERS, type LauncherSpec, RESERVED_WORDS } from "./launchers.ts";
import {
  basename,
  canonicalProgram,
  DOWNLOADERS,
  isInterpreter,
  PRIVILEGE,
  SHELLS,
} from "./programs.ts";
import { literalWord, type Word } from "./words.ts";

/** What feeds the command's stdin. */
export interface Feed {
  /** Where stdin comes from: the terminal, another program, or a file or here-document. */
  stdin: "terminal" | "pipe" | "file";
  /** The text on stdin when it is known (`echo 'ls' | sh`, `sh <<'EOF'`). */
  stdinText?: Word;
}

export interface NormalizedCommand {
  argv: string[];
  /** Per argv word: only known at run time. */
  dynamic: boolean[];
  /** Per argv word: an unquoted expansion that word splitting may turn into several words. */
  splits: boolean[];
  /** A launcher changed the directory (`env -C dir`): the new one, or null when not known. */
  chdir?: string | null;
  /** Variables set for this command alone (`A=1 cmd`, `env A=1 cmd`). */
  env: string[];
  /** xargs appends words read from stdin at run time. */
  appended?: boolean;
  /** Found by looking for program names inside an unknown program's arguments. */
  guessed?: boolean;
  /** The program as written when it was a path (`./x.sh`, `/tmp/y`). */
  path?: string;
  /** Run by `find -exec` on what find walks. */
  viaFind?: boolean;
}

export interface Normalized {
  commands: NormalizedCommand[];
  /** Scripts to analyse as shell code (from `bash -c`, `eval`, `su -c`, literal stdin). */
  scripts: string[];
  unanalyzable?: string;
  interactive?: string;
}

interface Pending {
  words: Word[];
  env: string[];
  chdir?: string | null;
  appended?: boolean;
  guessed?: boolean;
  viaFind?: boolean;
}

/** Program names whose appearance inside another program's arguments is worth judging. */
function isRelevant(program: string): boolean {
  return program === "rm" || program === "git" || program.startsWith("git-") ||
    program === "chmod" || program === "chown" || program === "chgrp" || program === "find" ||
    program === "eval" || program === "source" || program === "." || program === "exec" ||
    PRIVILEGE.has(program) || SHELLS.has(program) || isInterpreter(program) ||
    DOWNLOADERS.has(program) || program in LAUNCHERS;
}

/** Package managers and other tools that never run their words as a command line. */
const NO_TAILS = new Set([
  "apt",
  "apt-get",
  "apt-cache",
  "dpkg",
  "yum",
  "dnf",
  "apk",
  "brew",
  "pacman",
  "pip",
  "pip3",
  "pipx",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "cargo",
  "go",
  "gem",
  "bundle",
  "conda",
  "uv",
  "poetry",
  "mvn",
  "gradle",
  "dotnet",
  "rustup",
  "nvm",
  "asdf",
  "mise",
  "pkill",
  "pgrep",
  "killall",
  "kill",
  "cd",
  "pushd",
  "alias",
  "git",
]);

/** Splits launcher options from the command that follows them. */
function splitOptions(spec: LauncherSpec, program: string, args: Word[]): number {
  const short = spec.short ?? "";
  const long = spec.long ?? [];
  let i = 0;
  while (i < args.length) {
    const a = args[i].value;
    if (a === "--") return i + 1;
    if (!a.startsWith("-") || a === "-" || args[i].dynamic) return i;
    if (program === "nice" && /^-[0-9]+$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith("--")) {
      const name = a.slice(2).split("=")[0];
      const takes = !a.includes("=") && long.some((l) => l === name || l.startsWith(name));
      i += takes ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let j = 1; j < a.length; j++) {
      // xargs' `-i[R]`, `-l[N]`, `-e[E]` take their value only when attached.
      if (program === "xargs" && "ile".includes(a[j])) break;
      if (short.includes(a[j])) {
        if (j === a.length - 1) consumed = 2;
        break;
      }
    }
    i += consumed;
  }
  return i;
}

/** The value of an option in `args` (`-c X`, `-cX`, `--command=X`, `--command X`). */
function optionValue(args: Word[], names: readonly string[]): Word | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    if (a === "--") return undefined;
    for (const name of names) {
      if (a === name) return args[i + 1] ?? literalWord("");
      if (name.startsWith("--") && a.startsWith(`${name}=`)) {
        return { ...args[i], value: a.slice(name.length + 1) };
      }
      if (!name.startsWith("--") && /^-[A-Za-z]+$/.test(a) && a.length > 2) {
        // A cluster ending in the option (`-lc`) takes the next word.
        if (a.endsWith(name[1]) && !a.startsWith("--")) return args[i + 1] ?? literalWord("");
      }
    }
  }
  return undefined;
}

interface ShellArgs {
  script?: Word;
  interactive: boolean;
  operand?: Word;
  readsStdin: boolean;
  informational: boolean;
}

function shellArgs(args: Word[]): ShellArgs {
  const out: ShellArgs = { interactive: false, readsStdin: false, informational: false };
  let command = false;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i].value;
    if (a === "--" || a === "-") {
      if (a === "-") out.readsStdin = true;
      i++;
      break;
    }
    if (a.startsWith("--")) {
      if (a === "--version" || a === "--help") out.informational = true;
      if (a === "--rcfile" || a === "--init-file") i++;
      continue;
    }
    if (!/^[-+]./.test(a)) break;
    const letters = a.slice(1);
    if (letters.includes("c")) command = true;
    if (a.startsWith("-") && letters.includes("i")) out.interactive = true;
    if (a.startsWith("-") && letters.includes("s")) out.readsStdin = true;
    // `-o pipefail` / `+O extglob` take the next word.
    if (/[oO]/.test(letters)) i++;
  }
  const rest = args.slice(i);
  if (command) out.script = rest[0] ?? literalWord("");
  else {
    out.operand = rest[0];
    if (out.operand !== undefined && isStdinPath(out.operand.value)) out.readsStdin = true;
  }
  return out;
}

const INFORMATIONAL = new Set(["--version", "-v", "-V", "--help", "-h", "-version"]);

/** Is an interpreter started without a program to run (a REPL, or reading the terminal)? */
function interpreterOpensRepl(program: string, args: Word[], feed: Feed): boolean {
  const values = args.map((a) => a.value);
  if (values.some((v) => INFORMATIONAL.has(v))) return false;
  if (program === "irb" || program === "ipython") return true;
  if (values.includes("-i") || values.includes("--interactive")) return true;
  if (program === "php" && values.includes("-a")) return true;
  if (program === "deno" || program === "bun") return values.length === 0 || values[0] === "repl";
  if (feed.stdin !== "terminal") return false;
  return values.length === 0 || values.every((v) => v.startsWith("-") && !/^-[cemprE]/.test(v));
}

/** Is this a literal script (no substitution, no variable assigned on the line)? */
function scriptIsDynamic(word: Word, assigned: ReadonlySet<string>): boolean {
  return word.substituted || word.vars.some((v) => assigned.has(v));
}

/** A word made of words: `watch 'a' b` runs `a b` through a shell. */
function joined(words: Word[]): Word {
  return {
    ...literalWord(words.map((w) => w.value).join(" ")),
    dynamic: words.some((w) => w.dynamic),
    substituted: words.some((w) => w.substituted),
    vars: words.flatMap((w) => w.vars),
  };
}

/** Editors that leave a rebase todo list as it is, or as a person edits it. */
const SAFE_EDITOR = /^(true|:|cat|vi|vim|nvim|nano|emacs|code --wait|subl -w)$/;

/** Variables whose value is a command line git (or its pager, editor, ssh) runs. */
const COMMAND_VARIABLES = new Set([
  "EDITOR",
  "VISUAL",
  "PAGER",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "GIT_PAGER",
  "GIT_SSH_COMMAND",
  "GIT_SSH",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_EXTERNAL_DIFF",
  "GIT_PROXY_COMMAND",
  "LESSOPEN",
  "LESSCLOSE",
  "MANPAGER",
]);

/**
 * Config keys whose value is a command line: given literally (`git -c core.pager=cat`, `git
 * config alias.st status`) it is analysed like any other; `alias.x=push -f` is `git push -f`.
 */
export const COMMAND_VALUED_KEY =
  /^(core\.(editor|pager|sshcommand|askpass|fsmonitor)|sequence\.editor|pager\.[^.]+|diff\.external|diff\.[^.]+\.(textconv|command)|gpg(\.[^.]+)?\.program|alias\.[^.]+|trailer\.[^.]+\.(cmd|command)|credential(\..+)?\.helper|interactive\.difffilter|merge\.[^.]+\.driver|filter\.[^.]+\.(clean|smudge|process))$/i;

function configValueScript(key: string, value: string): string {
  if (/^alias\./i.test(key)) return value.startsWith("!") ? value.slice(1) : `git ${value}`;
  // A credential helper not starting with `!` is `git credential-<name>`.
  if (/^credential/i.test(key) && !value.startsWith("!") && !value.includes("/")) {
    return `git credential-${value}`;
  }
  return value.startsWith("!") ? value.slice(1) : value;
}

/** Programs whose interpreters the git subcommands below hand a shell command to. */
const GIT_SCRIPT_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  rebase: ["-x", "--exec"],
  difftool: ["-x", "--extcmd"],
  "filter-branch": [
    "--env-filter",
    "--tree-filter",
    "--index-filter",
    "--parent-filter",
    "--msg-filter",
    "--commit-filter",
    "--tag-name-filter",
  ],
};

export function normalizeCommand(
  words: Word[],
  feed: Feed,
  assigned: ReadonlySet<string>,
  env: readonly string[] = [],
  envValues: ReadonlyMap<string, Word> = new Map(),
): Normalized {
  const out: Normalized = { commands: [], scripts: [] };
  const queue: Pending[] = [{ words, env: [...env] }];
  let current: Pending = queue[0];
  let headPath: string | undefined;
  const emit = (argv: Word[]) => {
    const c: NormalizedCommand = {
      argv: argv.map((w) => w.value),
      // A glob given to git may match a file named like an option (`: > --hard; git reset --h*`).
      dynamic: argv.map((w, i) =>
        w.dynamic || (i > 0 && w.glob === true && argv[0].value === "git")
      ),
      splits: argv.map((w) => w.splits === true),
      env: current.env,
    };
    if (current.chdir !== undefined) c.chdir = current.chdir;
    if (current.appended) c.appended = true;
    if (current.guessed) c.guessed = true;
    if (headPath !== undefined) c.path = headPath;
    if (current.viaFind) c.viaFind = true;
    out.commands.push(c);
  };
  const unanalyzable = (reason: string) => {
    out.unanalyzable ??= reason;
  };
  const addScript = (word: Word, wrapper: Word[], what: string) => {
    if (scriptIsDynamic(word, assigned) || word.dynamic && word.vars.length === 0) {
      unanalyzable(`${what} runs a script built at run time`);
      // The wrapper stays visible so rules can see what feeds it (`sh -c "$(curl …)"`).
      emit(wrapper);
    }
    out.scripts.push(word.value);
  };
  const then = (rest: Word[], extra: Partial<Pending> = {}) => {
    queue.unshift({ ...current, ...extra, words: rest });
  };
  for (let hops = 0; queue.length > 0 && hops < 32; hops++) {
    current = queue.shift()!;
    let argv = current.words;
    if (argv.length === 0) continue;
    const head = argv[0];
    headPath = !head.dynamic && head.value.includes("/") ? head.value : undefined;
    let program: string;
    if (head.dynamic || head.glob) {
      // `$DIR/tool` still runs a program called tool; `$(printf rm)` or `r?` could run anything.
      const tail = head.literalTail;
      if (head.dynamic && tail.includes("/") && basename(tail) !== "" && !head.glob) {
        program = canonicalProgram(basename(tail));
      } else {
        unanalyzable(`the program name ${JSON.stringify(head.value)} is only known at run time`);
        emit(argv);
        continue;
      }
    } else {
      // zsh's `=rm` is the path of rm.
      program = canonicalProgram(basename(head.value.replace(/^=(?=[^=])/, "")));
    }
    if (program === "") {
      unanalyzable("the program name is empty");
      continue;
    }
    if (RESERVED_WORDS.has(program)) {
      unanalyzable(
        `${JSON.stringify(program)} is bash syntax in a place the analyzer does not model`,
      );
      emit(argv);
      continue;
    }
    // `/usr/lib/git-core/git-push` is `git push`.
    if (/^git-[a-z][a-z-]*$/.test(program) && program !== "git-lfs") {
      argv = [literalWord("git"), literalWord(program.slice(4)), ...argv.slice(1)];
      program = "git";
    }
    argv = [{ ...head, value: program, dynamic: false, splits: false }, ...argv.slice(1)];
    const args = argv.slice(1);

    const launcher = LAUNCHERS[program];
    if (
      launcher !== undefined && (launcher.sub === undefined || launcher.sub.length === 0 ||
        launcher.sub.includes(args[0]?.value ?? ""))
    ) {
      const privileged = PRIVILEGE.has(program);
      // The privilege rule sees the launcher; the command it runs is judged as well.
      if (privileged) emit(argv);
      const own = launcher.sub !== undefined && launcher.sub.length > 0 ? args.slice(1) : args;
      if (launcher.lookupOnly?.some((o) => own.some((a) => a.value === o))) {
        emit(argv);
        continue;
      }
      if (program === "xargs") {
        xargs(own, then);
        continue;
      }
      const scriptWord = launcher.script !== undefined && launcher.script.length > 0
        ? optionValue(own, launcher.script)
        : undefined;
      if (scriptWord !== undefined) {
        addScript(scriptWord, argv, `${program} ${launcher.script![0]}`);
        continue;
      }
      let start = splitOptions(launcher, program, own);
      const options = own.slice(0, start);
      let chdir = current.chdir;
      for (const name of launcher.chdir ?? []) {
        const dir = optionValue(options, [name]);
        if (dir !== undefined) chdir = dir.dynamic ? null : dir.value;
      }
      if (program === "env") {
        const split = optionValue(options, ["-S", "--split-string"]);
        if (split !== undefined) addScript(split, argv, "env -S");
        if (options.some((o) => /^-[A-Za-z]*S./.test(o.value))) {
          const o = options.find((x) => /^-[A-Za-z]*S./.test(x.value))!;
          addScript({ ...o, value: o.value.slice(o.value.indexOf("S") + 1) }, argv, "env -S");
        }
      }
      const after = COMMAND_AFTER[program];
      if (after !== undefined) {
        const at = own.findIndex((a) => a.value === after);
        if (at === -1) {
          emit(argv);
          continue;
        }
        start = at + 1;
      }
      let rest = own.slice(start + (launcher.skip ?? 0));
      const extraEnv: string[] = [];
      if (program === "env") {
        while (rest.length > 0 && /^[A-Za-z_][A-Za-z0-9_%]*=/.test(rest[0].value)) {
          const name = rest[0].value.slice(0, rest[0].value.indexOf("="));
          if (name.startsWith("BASH_FUNC_")) unanalyzable(`${name} defines a shell function`);
          extraEnv.push(name);
          rest = rest.slice(1);
        }
      }
      if (
        launcher.restIsScript &&
        !(program === "watch" && options.some((o) => /^-[a-z]*x|^--exec$/.test(o.value)))
      ) {
        // parallel's inputs after `:::` are appended to the command it runs.
        const scriptWords = rest.filter((w) => !/^:::+\+?$/.test(w.value));
        if (scriptWords.length > 0) addScript(joined(scriptWords), argv, program);
        else if (!privileged) emit(argv);
        continue;
      }
      if (rest.length === 0) {
        if (launcher.shellWithoutCommand) out.interactive ??= program;
        if (!privileged) emit(argv);
        continue;
      }
      then(rest, { chdir, env: [...current.env, ...extraEnv] });
      continue;
    }
    if (PRIVILEGE.has(program)) {
      emit(argv);
      continue;
    }
    switch (program) {
      case "find": {
        find(argv, emit, then, unanalyzable);
        continue;
      }
      case "eval": {
        let code = args;
        if (code[0]?.value === "--") code = code.slice(1);
        if (code.length === 0) continue;
        const word = joined(code);
        if (word.dynamic) {
          unanalyzable("eval of data only known at run time");
          emit(argv);
        }
        out.scripts.push(word.value);
        continue;
      }
      case "trap": {
        // `trap 'cmd' EXIT` runs cmd later; `trap -p`, `trap -l`, `trap - INT` run nothing.
        const own = args[0]?.value === "--" ? args.slice(1) : args;
        const first = own[0];
        if (first !== undefined && !/^-/.test(first.value) && own.length > 1) {
          addScript(first, argv, "trap");
        }
        emit(argv);
        continue;
      }
      case "mapfile":
      case "readarray": {
        const callback = optionValue(args, ["-C"]);
        if (callback !== undefined) addScript(callback, argv, `${program} -C`);
        emit(argv);
        continue;
      }
      case "complete":
      case "compgen": {
        const command = optionValue(args, ["-C"]);
        if (command !== undefined) addScript(command, argv, `${program} -C`);
        emit(argv);
        continue;
      }
      case "bind":
        if (args.some((a) => /^-[a-zA-Z]*x/.test(a.value))) unanalyzable("bind -x runs commands");
        emit(argv);
        continue;
      case "alias":
        // An alias can be expanded later in the same script (`shopt -s expand_aliases`).
        for (const a of args) {
          const eq = a.value.indexOf("=");
          if (eq > 0) addScript({ ...a, value: a.value.slice(eq + 1) }, argv, "alias");
        }
        emit(argv);
        continue;
      case "source":
      case ".": {
        const file = args[0];
        if (file === undefined) {
          emit(argv);
          continue;
        }
        if (isStdinPath(file.value)) stdinScript(program, argv, feed, addScript, unanalyzable);
        else if (file.substituted || file.dynamic) {
          unanalyzable(`${program} runs a script only known at run time: ${file.value}`);
        }
        emit(argv);
        continue;
      }
      case "git":
        {
          // `GIT_EDITOR=true git …`, `EDITOR='…' git commit`: a command git will run, read here.
          const commandVars = current.env.filter((n) => COMMAND_VARIABLES.has(n));
          for (const name of commandVars) {
            const value = envValues.get(name);
            if (value === undefined || value.dynamic) {
              unanalyzable(`${name} names a program only known at run time`);
            } else if (name === "GIT_SEQUENCE_EDITOR" && !SAFE_EDITOR.test(value.value.trim())) {
              // A sequence editor writes the rebase todo list, whose `exec` lines git runs.
              unanalyzable(`${name} edits the rebase todo list, which can add exec lines`);
            } else addScript(value, argv, name);
          }
          current = { ...current, env: current.env.filter((n) => !COMMAND_VARIABLES.has(n)) };
        }
        git(argv, emit, then, addScript);
        continue;
      case "ed":
      case "red":
        if (
          feed.stdin !== "terminal" &&
          !/^(q|Q|w|[0-9,.$]*[pnl]|\s)*$/.test(feed.stdinText?.value ?? "!")
        ) {
          if (feed.stdinText === undefined || /(^|\n)\s*[^\n]*!/.test(feed.stdinText.value)) {
            unanalyzable("ed runs shell commands given with !");
          }
        }
        emit(argv);
        continue;
      case "sed": {
        const { scripts } = sedScripts(args.map((a) => a.value));
        if (
          args.some((a, i) =>
            /^(-f|--file)$/.test(a.value) && isStdinPath(args[i + 1]?.value ?? "")
          )
        ) {
          const text = feed.stdinText;
          if (text === undefined || text.dynamic || sedRunsCommands(text.value)) {
            unanalyzable("sed reads a script from stdin that runs commands or is not known");
          }
        }
        if (args.some((a) => a.dynamic && !a.value.startsWith("-") && scripts.includes(a.value))) {
          unanalyzable("sed script only known at run time");
        }
        if (scripts.some(sedRunsCommands)) unanalyzable("sed script runs shell commands (e)");
        emit(argv);
        continue;
      }
      case "vim":
      case "vi":
      case "nvim":
      case "ex":
      case "view":
      case "emacs":
      case "gdb":
      case "lldb":
      case "pdb":
      case "expect": {
        if (
          args.some((a) =>
            /^(-c|--cmd|-S|-s|-es|-Es|-e|-ex|-x|--eval|--batch|-batch|--command|-o|--script|-f)$/
              .test(a.value) ||
            a.value.startsWith("+") || a.value.startsWith("--eval=")
          )
        ) {
          unanalyzable(`${program} runs editor or debugger commands given on its command line`);
        } else if (
          feed.stdin === "terminal" &&
          !args.some((a) => a.value === "--args" || INFORMATIONAL.has(a.value))
        ) {
          out.interactive ??= program;
        }
        emit(argv);
        {
          const at = args.findIndex((a) => a.value === "--args");
          if (at !== -1) then(args.slice(at + 1));
        }
        continue;
      }
      case "tar":
      case "bsdtar":
      case "gtar":
        for (const a of args) {
          const m =
            /^--(checkpoint-action=exec|to-command|use-compress-program|rsh-command|info-script|new-volume-script|command)=(.*)$/s
              .exec(a.value);
          if (m !== null) addScript({ ...a, value: m[2] }, argv, `tar --${m[1]}`);
        }
        {
          const i = args.findIndex((a) =>
            /^(-I|-F|--to-command|--use-compress-program|--info-script|--new-volume-script|--rsh-command)$/
              .test(a.value)
          );
          if (i !== -1 && args[i + 1] !== undefined) {
            addScript(args[i + 1], argv, `tar ${args[i].value}`);
          }
        }
        emit(argv);
        continue;
      case "zip": {
        const i = args.findIndex((a) => a.value === "-TT" || a.value === "--unzip-command");
        if (i !== -1 && args[i + 1] !== undefined) addScript(args[i + 1], argv, "zip -TT");
        const inline = args.find((a) => a.value.startsWith("--unzip-command="));
        if (inline !== undefined) {
          addScript({ ...inline, value: inline.value.slice(16) }, argv, "zip");
        }
        emit(argv);
        continue;
      }
      case "rsync": {
        const rsh = optionValue(args, ["-e", "--rsh"]);
        if (rsh !== undefined) addScript(rsh, argv, "rsync -e");
        const rp = optionValue(args, ["--rsync-path"]);
        if (rp !== undefined) addScript(rp, argv, "rsync --rsync-path");
        emit(argv);
        continue;
      }
      case "ssh":
      case "scp":
      case "sftp":
        if (
          args.some((a) =>
            /ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Match\s+exec/i.test(
              a.value,
            ) || a.value.startsWith("-F")
          )
        ) {
          unanalyzable(`${program} option runs a local command`);
        }
        emit(argv);
        continue;
      case "make":
      case "gmake": {
        const file = optionValue(args, ["-f", "--file", "--makefile"]);
        if (file !== undefined && isStdinPath(file.value)) {
          unanalyzable("make reads its makefile from stdin");
        }
        if (args.some((a) => a.value.startsWith("--eval") || a.value.startsWith("SHELL="))) {
          unanalyzable("make is handed recipe code on its command line");
        }
        emit(argv);
        continue;
      }
      case "sqlite3":
      case "sqlite":
        if (
          args.some((a) => /^\.(shell|system|once|output|import)\b/.test(a.value.trim())) ||
          /(^|\n)\s*\.(shell|system)\b/.test(feed.stdinText?.value ?? "") ||
          feed.stdin === "pipe"
        ) {
          unanalyzable("sqlite3 dot-commands run shell commands");
        }
        emit(argv);
        continue;
      case "gcc":
      case "g++":
      case "cc":
      case "c++":
      case "clang":
      case "clang++":
        if (
          args.some((a) =>
            a.value === "-wrapper" || a.value.startsWith("-fplugin") || a.value === "-B"
          )
        ) {
          unanalyzable(`${program} runs a program named on its command line`);
        }
        emit(argv);
        continue;
      case "npm":
      case "pnpm":
      case "yarn":
      case "bun":
      case "npx": {
        if (args.some((a) => /^--script-shell|^--shell/.test(a.value))) {
          unanalyzable(`${program} --script-shell runs scripts with a program named on the line`);
        }
        const installs = /^(i|install|add|ci|update|up|upgrade)$/.test(args[0]?.value ?? "");
        if (
          installs &&
          args.slice(1).some((a) =>
            /^(https?:|git[+:]|github:|gitlab:|bitbucket:|file:)|^[^-][^@\s]*\.(tgz|tar\.gz)$/.test(
              a.value,
            )
          )
        ) {
          unanalyzable(
            `${program} installs a package from outside the registry, whose scripts run`,
          );
        }
        emit(argv);
        continue;
      }
      case "run-parts":
        unanalyzable("run-parts runs every program in a folder");
        emit(argv);
        continue;
      case "man":
        {
          const pager = optionValue(args, ["-P", "--pager", "-H", "--html"]);
          if (pager !== undefined) addScript(pager, argv, "man -P");
        }
        if (current.env.some((n) => /^(MANPAGER|PAGER|BROWSER|MANOPT)$/.test(n))) {
          unanalyzable(`${program} runs a program named in its environment`);
        }
        emit(argv);
        continue;
      case "less":
      case "more":
        if (
          current.env.some((n) =>
            /^(LESSOPEN|LESSCLOSE|MANPAGER|PAGER|LESSKEY|VISUAL|EDITOR)$/.test(n)
          )
        ) {
          unanalyzable(`${program} runs a program named in its environment`);
        }
        emit(argv);
        continue;
    }
    if (SHELLS.has(program)) {
      // `BASH_ENV=x bash -c true`: the variables it is started with matter as much as its script.
      if (current.env.length > 0) emit(argv);
      shell(program, argv, feed, addScript, emit, unanalyzable, out);
      continue;
    }
    if (isInterpreter(program)) {
      const parsed = codeArgs(program, args);
      if (parsed.dynamicCode) unanalyzable(`${program} runs inline code built at run time`);
      // Inline code, and any other word that reads as code (`python -m timeit 'os.system(…)'`).
      for (
        const code of [
          ...parsed.code,
          ...args.map((a) => a.value).filter((v) => /[(;'"`]/.test(v)),
        ]
      ) {
        const why = unsafeCode(program, code);
        if (why !== undefined) unanalyzable(why);
      }
      if (parsed.operand !== undefined && !parsed.stdin) {
        const operand = args.find((a) => a.value === parsed.operand);
        if (operand?.substituted) {
          unanalyzable(`${program} runs a script another program prints`);
        } else if (operand?.dynamic) {
          unanalyzable(`${program} runs a script only known at run time: ${operand.value}`);
        }
      }
      if (
        parsed.stdin && parsed.code.length === 0 && !args.some((a) => INFORMATIONAL.has(a.value))
      ) {
        if (feed.stdinText !== undefined) {
          if (feed.stdinText.dynamic) unanalyzable(`${program} runs code built at run time`);
          const why = unsafeCode(program, feed.stdinText.value);
          if (why !== undefined) unanalyzable(why);
        } else if (
          feed.stdin === "pipe" || feed.stdin === "file" && isStdinPath(parsed.operand ?? "")
        ) {
          unanalyzable(`${program} runs code another program prints`);
        }
      }
      if (interpreterOpensRepl(program, args, feed)) out.interactive ??= program;
      emit(argv);
      continue;
    }
    emit(argv);
    if (!INERT.has(program) && !NO_TAILS.has(program)) {
      guessTails(args, then);
      // `tmux new-session -d 'git reset --hard'`: a word that reads as a command line.
      for (const a of args) {
        const first = /^\s*([^\s;|&]+)\s/.exec(a.value)?.[1];
        if (first !== undefined && isRelevant(canonicalProgram(basename(first)))) {
          addScript(a, argv, `${program} argument`);
        }
      }
    }
  }
  if (queue.length > 0) unanalyzable("too many nested launchers");
  return out;
}

/**
 * An unknown program may be a launcher nobody listed: every tail of its argv that starts with
 * a program the rules care about is judged as a command of its own.
 */
function guessTails(args: Word[], then: (rest: Word[], extra?: Partial<Pending>) => void): void {
  // A lone program name (`tldr sudo`) runs nothing even if it is run.
  for (let i = args.length - 2; i >= 0; i--) {
    const a = args[i];
    if (a.dynamic || a.value.includes(" ")) continue;
    const name = canonicalProgram(basename(a.value));
    if (name !== "" && isRelevant(name) && !a.value.startsWith("-")) {
      then(args.slice(i), { guessed: true });
    }
  }
}

function xargs(own: Word[], then: (rest: Word[], extra?: Partial<Pending>) => void): void {
  const start = splitOptions(LAUNCHERS.xargs, "xargs", own);
  const options = own.slice(0, start);
  let replace: string | undefined;
  for (let i = 0; i < options.length; i++) {
    const o = options[i].value;
    if (o === "-I") replace = options[i + 1]?.value;
    else if (o.startsWith("-I")) replace = o.slice(2);
    else if (o === "-i" || o === "--replace") replace = "{}";
    else if (o.startsWith("-i")) replace = o.slice(2);
    else if (o.startsWith("--replace=")) replace = o.slice(10);
  }
  let rest = own.slice(start);
  if (rest.length === 0) rest = [literalWord("echo")];
  if (replace !== undefined && replace !== "") {
    const r = replace;
    then(rest.map((w) => w.value.includes(r) ? { ...w, dynamic: true, literalTail: "" } : w));
    return;
  }
  const program = canonicalProgram(basename(rest[0].value));
  // Only options or assignments after the launcher: its command is what xargs reads.
  const commandless = rest.slice(1).every((w) =>
    w.value.startsWith("-") || /^[A-Za-z_]\w*=/.test(w.value)
  );
  if (
    (program in LAUNCHERS || PRIVILEGE.has(program) || program === "eval" || SHELLS.has(program)) &&
    commandless
  ) {
    // `echo git reset --hard | xargs -L1 env`: the command itself is read at run time.
    then([{ ...literalWord("xargs-input"), dynamic: true, literalTail: "" }]);
    return;
  }
  then(rest, { appended: true });
}

/** `find ROOT … -exec CMD {} ;`: `{}` is a path found under the roots. */
function find(
  argv: Word[],
  emit: (argv: Word[]) => void,
  then: (rest: Word[], extra?: Partial<Pending>) => void,
  unanalyzable: (reason: string) => void,
): void {
  const own: Word[] = [argv[0]];
  const roots: Word[] = [];
  let i = 1;
  while (i < argv.length && /^-[HLP]$|^-O\d$|^-D$/.test(argv[i].value)) i++;
  for (; i < argv.length && !/^[-(!]/.test(argv[i].value); i++) roots.push(argv[i]);
  const found = (): Word => {
    if (roots.some((r) => r.dynamic)) {
      return { ...literalWord("{}"), dynamic: true, literalTail: "" };
    }
    const bases = roots.length === 0 ? ["."] : roots.map((r) => r.value);
    // One root: a path below it. Several: only a glob at the top of the first says enough.
    const base = bases.length === 1 ? bases[0].replace(/\/+$/, "") : "";
    return { ...literalWord(`${base === "" && bases[0] === "/" ? "" : base}/*`), glob: true };
  };
  for (let j = 1; j < argv.length; j++) {
    if (/^-(exec|execdir|ok|okdir)$/.test(argv[j].value)) {
      let end = j + 1;
      while (end < argv.length && argv[end].value !== ";" && argv[end].value !== "+") end++;
      const command = argv.slice(j + 1, end).map((w) => w.value === "{}" ? found() : w);
      if (command.length > 0 && argv[j + 1].value === "{}") {
        unanalyzable("find -exec runs the files it finds");
      }
      then(command, { viaFind: argv.slice(j + 1, end).some((w) => w.value.includes("{}")) });
      j = end;
    } else {
      own.push(argv[j]);
    }
  }
  emit(own);
}

function git(
  argv: Word[],
  emit: (argv: Word[]) => void,
  then: (rest: Word[], extra?: Partial<Pending>) => void,
  addScript: (word: Word, wrapper: Word[], what: string) => void,
): void {
  emit(argv);
  const values = argv.slice(1).map((w) => w.value);
  const rest = skipGitGlobals(values);
  const at = argv.length - rest.length;
  const sub = rest[0];
  const subArgs = argv.slice(at + 1);
  // `git -c key=value`: the value of a command-valued key is a script.
  const globals = argv.slice(1, at);
  for (let i = 0; i < globals.length; i++) {
    const g = globals[i];
    const kv = g.value === "-c"
      ? globals[++i]
      : /^-c./.test(g.value)
      ? { ...g, value: g.value.slice(2) }
      : undefined;
    if (kv === undefined) continue;
    const eq = kv.value.indexOf("=");
    const key = eq === -1 ? kv.value : kv.value.slice(0, eq);
    if (eq !== -1 && COMMAND_VALUED_KEY.test(key)) {
      addScript(
        { ...kv, value: configValueScript(key, kv.value.slice(eq + 1)) },
        argv,
        `git -c ${key}`,
      );
    }
  }
  if (sub === "config") {
    const operands = subArgs.filter((a) => !a.value.startsWith("-"));
    const [first, second, third] = operands;
    const [key, value] = first?.value === "set" || first?.value === "add"
      ? [second, third]
      : [first, second];
    if (key !== undefined && value !== undefined && COMMAND_VALUED_KEY.test(key.value)) {
      addScript(
        { ...value, value: configValueScript(key.value, value.value) },
        argv,
        `git config ${key.value}`,
      );
    }
  }
  if (sub === "bisect" && rest[1] === "run") {
    then(argv.slice(at + 2));
    return;
  }
  if (sub === "submodule" && subArgs.some((a) => a.value === "foreach")) {
    const i = subArgs.findIndex((a) => a.value === "foreach");
    const script = subArgs.slice(i + 1).filter((a) => !/^--(recursive|quiet)$|^-q$/.test(a.value));
    if (script.length > 0) addScript(joined(script), argv, "git submodule foreach");
    return;
  }
  const options = GIT_SCRIPT_OPTIONS[sub ?? ""];
  if (options !== undefined) {
    for (let i = 0; i < subArgs.length; i++) {
      const a = subArgs[i].value;
      for (const o of options) {
        if (a === o && subArgs[i + 1] !== undefined) {
          addScript(subArgs[i + 1], argv, `git ${sub} ${o}`);
        } else if (a.startsWith(`${o}=`)) {
          addScript({ ...subArgs[i], value: a.slice(o.length + 1) }, argv, `git ${sub} ${o}`);
        } else if (o.length === 2 && a.startsWith(o) && a.length > 2 && !a.startsWith("--")) {
          addScript({ ...subArgs[i], value: a.slice(2) }, argv, `git ${sub} ${o}`);
        }
      }
    }
  }
}

function stdinScript(
  program: string,
  argv: Word[],
  feed: Feed,
  addScript: (word: Word, wrapper: Word[], what: string) => void,
  unanalyzable: (reason: string) => void,
): void {
  if (feed.stdinText !== undefined) addScript(feed.stdinText, argv, `${program} stdin`);
  else if (feed.stdin !== "terminal") {
    unanalyzable(`${program} runs a script another program prints`);
  } else unanalyzable(`${program} runs whatever is typed on stdin`);
}

function shell(
  program: string,
  argv: Word[],
  feed: Feed,
  addScript: (word: Word, wrapper: Word[], what: string) => void,
  emit: (argv: Word[]) => void,
  unanalyzable: (reason: string) => void,
  out: Normalized,
): void {
  const args = argv.slice(1);
  const parsed = shellArgs(args);
  if (parsed.script !== undefined) {
    if (parsed.script.value === "" && !args.some((a) => a.value === "")) {
      // `xargs bash -c`: the script is whatever the words read at run time are.
      unanalyzable(`${program} -c is given its script only at run time`);
      emit(argv);
      return;
    }
    addScript(parsed.script, argv, `${program} -c`);
    return;
  }
  emit(argv);
  if (parsed.informational) return;
  if (parsed.interactive) out.interactive ??= program;
  else if (parsed.operand === undefined || parsed.readsStdin) {
    if (feed.stdinText !== undefined) addScript(feed.stdinText, argv, `${program} stdin`);
    else if (feed.stdin === "pipe" || parsed.readsStdin && feed.stdin === "file") {
      // `… | base64 -d | sh`: the script is whatever another program prints.
      unanalyzable(`${program} runs a script another program prints`);
    } else if (feed.stdin === "terminal") out.interactive ??= program;
  } else if (parsed.operand.substituted || parsed.operand.dynamic) {
    // `bash <(curl …)`, `sh "$f"`: which script runs is only known at run time.
    unanalyzable(`${program} runs a script only known at run time: ${parsed.operand.value}`);
  }
}
