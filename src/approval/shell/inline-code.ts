/**
 * Code handed to another program on its command line: `python -c`, `perl -e`, `awk
 * 'BEGIN{system(…)}'`, `sed 1e`, `tar --checkpoint-action=exec=…`. Pure inline code stays
 * allowed; code that can start processes, delete or re-permission files, or build code at run
 * time cannot be judged by the built-in rules and is reported so.
 */

/** Per interpreter family: the options whose value is code, and what in that code is unsafe. */
interface Language {
  codeOptions: readonly string[];
  unsafe: RegExp;
}

const PYTHON: Language = {
  codeOptions: ["-c"],
  unsafe:
    /\b(subprocess|pty|shutil|ctypes|cffi|importlib|multiprocessing|commands|popen2|runpy|pickle|marshal|posix|webbrowser)\b|\bos\s*\.\s*(system|popen|exec\w*|spawn\w*|fork\w*|remove\w*|unlink|rmdir|removedirs|chmod|chown|lchown|rename|renames|replace|symlink|link|kill\w*|posix_spawn\w*|truncate|set\w*id|__dict__)|from\s+os\s+import|import\s+os\s+as|\bvars\s*\(|__import__|__builtins__|__globals__|__subclasses__|\b(exec|eval|compile|getattr|globals|breakpoint|chr)\s*\(|\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\\u[0-9a-fA-F]{4}|base64|codecs|\.decode\s*\(|\bPath\s*\([^)]*\)\s*\.\s*(unlink|rmdir|chmod|rename|replace|write_\w+)|__getattribute__|__getattr__|sys\s*\.\s*modules|create_subprocess|pydoc|\bos\s+as\b|\bpty\b|(urllib|requests|socket|http\.client)[\s\S]*\.write\s*\(|\.write\s*\([\s\S]*(urllib|requests)|fromhex|unhexlify|urlretrieve|\btimeit\b|cProfile|\bprofile\b|InteractiveInterpreter|runsource|\bcode\s*\.|\bpdb\b|zlib|lzma|bz2|rot.?13/,
};
const JS: Language = {
  codeOptions: ["-e", "--eval", "-p", "--print"],
  unsafe:
    /child_process|worker_threads|\bprocess\s*\.\s*(binding|dlopen|kill|chdir|mainModule|_linkedBinding)|\bprocess\s*\[|\bmodule\s*\.\s*(constructor|require)|\brequire\s*\(\s*[^'"` ]|\brequire\s*\(\s*`[^`]*\$\{|\brequire\s*\[|\bimport\s*\(|\bFunction\s*\(|\beval\s*\(|\bvm\b|['"`]vm['"`]|\b(rm|rmdir|unlink|chmod|chown|lchown|rename|writeFile|appendFile|symlink|link|truncate|cp|copyFile|createWriteStream|open)(Sync)?\s*\(|Deno\s*\.\s*(run|Command|remove|chmod|chown|writeFile|writeTextFile|symlink|rename|open)|Bun\s*\.\s*(spawn|spawnSync|\$|write)|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\u\{|fromCharCode|fromCodePoint|atob|Buffer\s*\.\s*from|globalThis\s*\[|\bconstructor\b|\[\s*['"`][a-z_]+['"`]\s*\+/,
};
const PERL: Language = {
  codeOptions: ["-e", "-E"],
  unsafe:
    /\b(system|exec|fork|qx|open|sysopen|opendir|unlink|rmdir|rmtree|remove_tree|chmod|chown|rename|symlink|link|kill|eval|syscall|pipe|readpipe|truncate|utime|dump)\b|\bdo\s*["'$(]|\brequire\s*["'$]|`|File::|IPC::|POSIX|\\x\{?[0-9a-fA-F]{2}|\\[0-7]{3}|\bchr\s*\(|\bpack\s*\(|MIME::Base64|\bs(.).*\1.*\1[a-z]*e[a-z]*/,
};
const RUBY: Language = {
  codeOptions: ["-e"],
  unsafe:
    /\b(system|exec|spawn|fork|syscall|eval|instance_eval|class_eval|module_eval|send|public_send|__send__|open|popen|popen3|capture2|capture2e|capture3|const_get|Kernel|Process|Open3|PTY|ObjectSpace|Fiddle|DL|FileUtils|Pathname|binding)\b|File\s*\.\s*(delete|unlink|chmod|lchmod|chown|lchown|rename|symlink|link|write|truncate|open|new)|Dir\s*\.\s*(rmdir|delete|unlink)|IO\s*\.\s*(popen|sysopen|write|open|new|for_fd)|`|%x|\\x[0-9a-fA-F]{2}|\\[0-7]{3}|\.chr\b|pack\s*\(|unpack|Base64/,
};
const PHP: Language = {
  codeOptions: ["-r", "-B", "-R", "-E", "-F"],
  unsafe:
    /\b(system|exec|shell_exec|passthru|proc_open|popen|pcntl_\w+|eval|assert|create_function|call_user_func\w*|unlink|rmdir|chmod|chown|rename|symlink|link|file_put_contents|fopen|include|require|include_once|require_once|preg_replace|mail|putenv|dl|ffi|base64_decode|str_rot13|gzinflate|hex2bin|chr)\b|`|\$\w+\s*\(|\\x[0-9a-fA-F]{2}/i,
};
const LUA: Language = {
  codeOptions: ["-e"],
  unsafe:
    /\b(os|io|load|loadstring|loadfile|dofile|require|package|debug)\b|\\[0-9]{1,3}|string\.char/,
};
const TCL: Language = {
  codeOptions: [],
  unsafe: /\b(exec|open|file|eval|source|load|socket|uplevel|subst|interp)\b/,
};
const R: Language = {
  codeOptions: ["-e"],
  unsafe:
    /\b(system|system2|shell|pipe|unlink|file\.remove|Sys\.chmod|Sys\.setenv|eval|parse|source|do\.call|get|match\.fun|dyn\.load|file\.rename)\b/,
};
const AWK: Language = {
  codeOptions: [],
  // `system()`, `print | "cmd"`, `"cmd" | getline`, `|&` coprocesses, `@load` extensions.
  unsafe:
    /\bsystem\s*\(|\|\s*&|\|\s*("|[A-Za-z_$(])|getline|@load|@include|\bENVIRON\b|\bprintf?\b[^;}]*>/,
};

const LANGUAGES: Readonly<Record<string, Language>> = {
  python: PYTHON,
  python2: PYTHON,
  python3: PYTHON,
  pypy: PYTHON,
  pypy3: PYTHON,
  ipython: PYTHON,
  node: JS,
  nodejs: JS,
  deno: JS,
  bun: JS,
  perl: PERL,
  ruby: RUBY,
  irb: RUBY,
  php: PHP,
  lua: LUA,
  luajit: LUA,
  tclsh: TCL,
  Rscript: R,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
};

export function languageOf(program: string): Language | undefined {
  return LANGUAGES[program];
}

/** Why this code cannot be vouched for, or undefined when it is pure. */
/** Files whose writing plants code that runs later, in any language's strings. */
const PLANTS =
  /\.git\/(hooks|config|info)|\.gitconfig|\.config\/git|\.(bashrc|profile|bash_profile|zshrc|zshenv)\b|\.ssh\/|sitecustomize|usercustomize|\.pth\b/;

export function unsafeCode(program: string, code: string): string | undefined {
  const language = LANGUAGES[program];
  if (language === undefined) return `${program} runs code the analyzer does not read`;
  const planted = PLANTS.exec(code);
  if (planted !== null) return `${program} code names ${JSON.stringify(planted[0])}`;
  const hit = language.unsafe.exec(code);
  return hit === null ? undefined : `${program} code uses ${JSON.stringify(hit[0].trim())}`;
}

export interface CodeArgs {
  /** Inline code words (`-c CODE`, `-e CODE`, awk's program operand). */
  code: string[];
  /** Some code word is only known at run time. */
  dynamicCode: boolean;
  /** The first operand (a script file), when no inline code was given. */
  operand?: string;
  /** Reads its program from stdin (`python -`, `perl` alone, `node /dev/stdin`). */
  stdin: boolean;
}

const STDIN_PATHS = new Set(["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]);

/** stdin, or another inherited descriptor (`bash /dev/fd/3 3<<EOF`): not a file on disk. */
export function isStdinPath(path: string): boolean {
  return STDIN_PATHS.has(path) || /^\/(dev|proc\/self|proc\/\d+)\/fd\/\d+$/.test(path);
}

/** Options that take the next word as their value, per interpreter family. */
const VALUE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  python: ["-W", "-X", "--check-hash-based-pycs"],
  node: [
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--input-type",
    "--conditions",
    "-C",
  ],
  ruby: ["-I", "-r", "-C", "-E", "-F", "-K"],
  perl: ["-I", "-M", "-m", "-x"],
};

function valueOptionsOf(program: string): readonly string[] {
  if (/^(python|pypy|ipython)/.test(program)) return VALUE_OPTIONS.python;
  if (program === "node" || program === "nodejs" || program === "bun" || program === "deno") {
    return VALUE_OPTIONS.node;
  }
  if (program === "ruby" || program === "irb") return VALUE_OPTIONS.ruby;
  if (program === "perl") return VALUE_OPTIONS.perl;
  return [];
}

/** Splits an interpreter's argv into its inline code, script operand and stdin use. */
export function codeArgs(
  program: string,
  args: ReadonlyArray<{ value: string; dynamic: boolean }>,
): CodeArgs {
  const language = LANGUAGES[program];
  const options = language?.codeOptions ?? [];
  const out: CodeArgs = { code: [], dynamicCode: false, stdin: false };
  const isAwk = language === AWK;
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    if (a === "--") {
      const next = args[i + 1];
      if (next !== undefined && out.code.length === 0) {
        out.operand = next.value;
        if (isStdinPath(next.value)) out.stdin = true;
      }
      break;
    }
    const option = options.find((o) =>
      a === o || (o.length === 2 && a.startsWith(o) && !a.startsWith("--"))
    );
    const clustered = options.find((o) =>
      o.length === 2 && /^-[A-Za-z]+$/.test(a) && a.length > 2 && a.endsWith(o[1])
    );
    if (option !== undefined || clustered !== undefined) {
      const inline = option !== undefined && a !== option ? a.slice(option.length) : "";
      const word = inline !== "" ? { value: inline, dynamic: args[i].dynamic } : args[++i];
      if (word !== undefined) {
        out.code.push(word.value);
        if (word.dynamic) out.dynamicCode = true;
      }
      continue;
    }
    if (isAwk && (a === "-f" || a === "--file")) {
      out.operand = args[++i]?.value;
      if (out.operand !== undefined && isStdinPath(out.operand)) out.stdin = true;
      continue;
    }
    if (isAwk && /^-[Fv]$/.test(a)) {
      i++;
      continue;
    }
    if (valueOptionsOf(program).includes(a)) {
      i++;
      continue;
    }
    // `python -m module`: runs a module, never stdin.
    if (a === "-m" && !isAwk) {
      out.operand = `-m ${args[i + 1]?.value ?? ""}`;
      break;
    }
    if (a.startsWith("-") && a !== "-") continue;
    // The first operand: awk's program text, or a script file for the others.
    if (out.code.length === 0 && out.operand === undefined) {
      if (isAwk) {
        out.code.push(a);
        if (args[i].dynamic) out.dynamicCode = true;
      } else {
        out.operand = a;
        if (isStdinPath(a)) out.stdin = true;
      }
    }
    break;
  }
  if (!isAwk && out.code.length === 0 && out.operand === undefined) out.stdin = true;
  return out;
}

/** sed's `e` command and `s///e` flag run the pattern space as a shell command. */
export function sedRunsCommands(script: string): boolean {
  // `e` after an address (`1e`, `/x/e`, `/x/Ie`, `\%x%e`, `$e`) or at a command's start.
  if (/(^|[;\n{}!]|[0-9$/%,~][IM]*\s*)\s*e(\s|;|$)/.test(script)) return true;
  return /s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImMw0-9]*e/.test(script);
}

/** The sed scripts of an argv: every `-e SCRIPT`, or the first operand. */
export function sedScripts(args: readonly string[]): { scripts: string[]; fromFile: boolean } {
  const scripts: string[] = [];
  let fromFile = false;
  let operand: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-e" || a === "--expression") scripts.push(args[++i] ?? "");
    else if (a.startsWith("--expression=")) scripts.push(a.slice(13));
    else if (/^-[a-zA-Z]*e$/.test(a) && !a.startsWith("--")) scripts.push(args[++i] ?? "");
    else if (/^-[a-zA-Z]*e./.test(a) && !a.startsWith("--")) {
      scripts.push(a.slice(a.indexOf("e") + 1));
    } else if (a === "-f" || a === "--file" || a.startsWith("--file=")) fromFile = true;
    else if (a === "-l" || a === "--line-length") i++;
    else if (!a.startsWith("-") && operand === undefined) operand = a;
  }
  if (scripts.length === 0 && !fromFile && operand !== undefined) scripts.push(operand);
  return { scripts, fromFile };
}
