/**
 * Turns the words of one simple command into the commands it really runs: launchers
 * (`env`, `timeout`, `xargs`, `find -exec`, `sudo` …) are stripped, path prefixes dropped,
 * git's global options skipped, and the scripts of `sh -c`, `eval` and literal stdin handed
 * back to be analysed in turn.
 */
import { skipGitGlobals } from "./git.ts";
import { basename, isInterpreter, PRIVILEGE, SHELLS } from "./programs.ts";
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
}

export interface Normalized {
  commands: NormalizedCommand[];
  /** Scripts to analyse as shell code (from `bash -c`, `eval`, `su -c`, literal stdin). */
  scripts: string[];
  unanalyzable?: string;
  interactive?: string;
}

/** Options of launchers that take a value, so the value is not taken for the command. */
const LAUNCHER_VALUES: Record<string, { short: string; long: string[] }> = {
  env: { short: "uCS", long: ["unset", "chdir", "split-string", "block-signal", "default-signal"] },
  command: { short: "", long: [] },
  exec: { short: "a", long: [] },
  nice: { short: "n", long: ["adjustment"] },
  nohup: { short: "", long: [] },
  timeout: { short: "sk", long: ["signal", "kill-after"] },
  stdbuf: { short: "ioe", long: ["input", "output", "error"] },
  time: { short: "fo", long: ["format", "output"] },
  setsid: { short: "", long: [] },
  ionice: { short: "cnp", long: ["class", "classdata", "pid"] },
  builtin: { short: "", long: [] },
  busybox: { short: "", long: [] },
  xargs: {
    short: "IinLlPsdEeaa",
    long: [
      "replace",
      "max-args",
      "max-lines",
      "max-procs",
      "max-chars",
      "delimiter",
      "eof",
      "arg-file",
    ],
  },
  sudo: {
    short: "ugCDprtUThRc",
    long: [
      "user",
      "group",
      "close-from",
      "chdir",
      "prompt",
      "role",
      "type",
      "other-user",
      "command-timeout",
      "host",
      "chroot",
    ],
  },
  doas: { short: "uC", long: [] },
  pkexec: { short: "", long: ["user"] },
  run0: { short: "uDg", long: ["user", "chdir", "group", "unit", "description", "setenv"] },
  nsenter: { short: "tS", long: ["target"] },
  chroot: { short: "", long: ["userspec", "groups"] },
  flock: { short: "wEc", long: ["timeout", "conflict-exit-code", "command"] },
  unbuffer: { short: "", long: [] },
  caffeinate: { short: "tw", long: [] },
  chrt: { short: "", long: [] },
  taskset: { short: "", long: [] },
};

/** Optional-argument short options (`-i[R]`, `-l[N]`, `-e[E]` of xargs) never take the next word. */
const OPTIONAL_VALUE: Record<string, string> = { xargs: "ile" };

interface Split {
  options: Word[];
  rest: Word[];
}

/** Splits launcher options from the command that follows them. */
function splitLauncher(program: string, args: Word[]): Split {
  const spec = LAUNCHER_VALUES[program] ?? { short: "", long: [] };
  const optional = OPTIONAL_VALUE[program] ?? "";
  let i = 0;
  while (i < args.length) {
    const a = args[i].value;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    if (program === "nice" && /^-[0-9]+$/.test(a)) {
      i++;
      continue;
    }
    if (a.startsWith("--")) {
      const name = a.slice(2).split("=")[0];
      const takes = spec.long.some((l) => l.startsWith(name)) && !a.includes("=");
      i += takes ? 2 : 1;
      continue;
    }
    // A short cluster: the first value-taking letter takes the rest or the next word.
    let consumed = 1;
    for (let j = 1; j < a.length; j++) {
      if (optional.includes(a[j])) break;
      if (spec.short.includes(a[j])) {
        if (j === a.length - 1) consumed = 2;
        break;
      }
    }
    i += consumed;
  }
  return { options: args.slice(0, i), rest: args.slice(i) };
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
  else out.operand = rest[0];
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
  // Any option that names code (`-c`, `-e`, `-m`, `-p`, `-r`) or a script operand means not.
  return values.length === 0 || values.every((v) => v.startsWith("-") && !/^-[cemprE]/.test(v));
}

/** Is this a literal script (no substitution, no variable assigned on the line)? */
function scriptIsDynamic(word: Word, assigned: ReadonlySet<string>): boolean {
  return word.substituted || word.vars.some((v) => assigned.has(v));
}

export function normalizeCommand(
  words: Word[],
  feed: Feed,
  assigned: ReadonlySet<string>,
): Normalized {
  const out: Normalized = { commands: [], scripts: [] };
  const queue: Word[][] = [words];
  const emit = (argv: Word[]) => out.commands.push({ argv: argv.map((w) => w.value) });
  const addScript = (word: Word, wrapper: Word[], what: string) => {
    if (scriptIsDynamic(word, assigned)) {
      out.unanalyzable ??= `${what} runs a script built at run time`;
      // The wrapper stays visible so rules can see what feeds it (`sh -c "$(curl …)"`).
      emit(wrapper);
    }
    out.scripts.push(word.value);
  };
  for (let hops = 0; queue.length > 0 && hops < 32; hops++) {
    let argv = queue.shift()!;
    if (argv.length === 0) continue;
    const head = argv[0];
    let program: string;
    if (head.dynamic || head.glob) {
      // `$DIR/tool` still runs a program called tool; `$(printf rm)` or `r?` could run anything.
      const tail = head.literalTail;
      if (head.dynamic && tail.includes("/") && basename(tail) !== "" && !head.glob) {
        program = basename(tail);
      } else {
        out.unanalyzable ??= `the program name ${
          JSON.stringify(head.value)
        } is only known at run time`;
        emit(argv);
        continue;
      }
    } else {
      program = basename(head.value);
    }
    if (program === "") {
      out.unanalyzable ??= "the program name is empty";
      continue;
    }
    argv = [{ ...head, value: program }, ...argv.slice(1)];
    const args = argv.slice(1);

    if (PRIVILEGE.has(program)) {
      // The privilege rule sees the launcher; the command it runs is judged as well.
      emit(argv);
      if (program === "su") {
        const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
        if (c !== -1 && args[c + 1] !== undefined) addScript(args[c + 1], argv, "su -c");
        continue;
      }
      const split = splitLauncher(program, args);
      queue.unshift(split.rest);
      continue;
    }
    switch (program) {
      case "env": {
        const split = splitLauncher(program, args);
        const s = split.options.findIndex((w) => /^-S|^--split-string/.test(w.value));
        if (s !== -1) {
          const opt = split.options[s];
          const inline = opt.value.replace(/^-S|^--split-string=?/, "");
          const word = inline !== "" ? { ...opt, value: inline } : split.options[s + 1];
          if (word !== undefined) addScript(word, argv, "env -S");
        }
        let rest = split.rest;
        while (rest.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0].value)) {
          rest = rest.slice(1);
        }
        if (rest.length === 0) emit(argv);
        else queue.unshift(rest);
        continue;
      }
      case "command":
        if (args.some((a) => a.value === "-v" || a.value === "-V")) {
          // `command -v rm` only looks rm up.
          emit(argv);
          continue;
        }
        queue.unshift(splitLauncher(program, args).rest);
        continue;
      case "timeout": {
        const rest = splitLauncher(program, args).rest;
        if (rest.length <= 1) emit(argv);
        else queue.unshift(rest.slice(1));
        continue;
      }
      case "xargs": {
        const rest = splitLauncher(program, args).rest;
        queue.unshift(rest.length === 0 ? [literalWord("echo")] : rest);
        continue;
      }
      case "exec":
      case "nice":
      case "nohup":
      case "stdbuf":
      case "time":
      case "setsid":
      case "ionice":
      case "builtin":
      case "busybox":
      case "nsenter":
      case "unbuffer":
      case "caffeinate":
      case "flock":
      case "chrt":
      case "taskset": {
        let rest = splitLauncher(program, args).rest;
        // flock takes a lock file, chrt a priority, taskset a mask before the command.
        if (program === "flock" || program === "chrt" || program === "taskset") {
          rest = rest.slice(1);
        }
        if (rest.length === 0) emit(argv);
        else queue.unshift(rest);
        continue;
      }
      case "find": {
        const own: Word[] = [argv[0]];
        for (let i = 1; i < argv.length; i++) {
          if (/^-(exec|execdir|ok|okdir)$/.test(argv[i].value)) {
            let end = i + 1;
            while (end < argv.length && argv[end].value !== ";" && argv[end].value !== "+") end++;
            queue.push(argv.slice(i + 1, end));
            i = end;
          } else {
            own.push(argv[i]);
          }
        }
        emit(own);
        continue;
      }
      case "eval": {
        if (args.length === 0) continue;
        const joined = args.map((a) => a.value).join(" ");
        const dynamic = args.some((a) => a.dynamic);
        if (dynamic) {
          out.unanalyzable ??= "eval of data only known at run time";
          emit(argv);
        }
        out.scripts.push(joined);
        continue;
      }
      case "git":
        emit([argv[0], ...skipGitAt(args)]);
        continue;
    }
    if (SHELLS.has(program)) {
      const parsed = shellArgs(args);
      if (parsed.script !== undefined) {
        addScript(parsed.script, argv, `${program} -c`);
        continue;
      }
      emit(argv);
      if (parsed.informational) continue;
      if (parsed.interactive) out.interactive ??= program;
      else if (parsed.operand === undefined || parsed.readsStdin) {
        if (feed.stdinText !== undefined) addScript(feed.stdinText, argv, `${program} stdin`);
        else if (feed.stdin === "pipe") {
          // `… | base64 -d | sh`: the script is whatever another program prints.
          out.unanalyzable ??= `${program} runs a script another program prints`;
        } else if (feed.stdin === "terminal") out.interactive ??= program;
      }
      continue;
    }
    if (isInterpreter(program) && interpreterOpensRepl(program, args, feed)) {
      out.interactive ??= program;
    }
    emit(argv);
  }
  if (queue.length > 0) out.unanalyzable ??= "too many nested launchers";
  return out;
}

function skipGitAt(args: Word[]): Word[] {
  const kept = skipGitGlobals(args.map((a) => a.value));
  return args.slice(args.length - kept.length);
}
