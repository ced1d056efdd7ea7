/** Families of programs the analyzer and the built-in rules treat specially. */

/** Shells whose `-c` script is analysed like the command line itself. */
export const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "fish",
  "csh",
  "tcsh",
  "rbash",
]);

const INTERPRETER_NAMES = new Set([
  "python",
  "python2",
  "python3",
  "pypy",
  "pypy3",
  "node",
  "nodejs",
  "perl",
  "ruby",
  "php",
  "lua",
  "luajit",
  "deno",
  "bun",
  "irb",
  "ipython",
  "tclsh",
  "Rscript",
]);

/** Code interpreters (`python3.12` counts as python). */
export function isInterpreter(program: string): boolean {
  return INTERPRETER_NAMES.has(program) || /^(python|pypy)[0-9.]+$/.test(program);
}

/** Programs that fetch from the network and print to stdout. */
export const DOWNLOADERS = new Set([
  "curl",
  "wget",
  "fetch",
  "aria2c",
  "http",
  "https",
  "xh",
  "xhs",
  "lwp-request",
  "GET",
  "lynx",
  "links",
  "httpie",
]);

/** Programs that gain another user's privileges. */
export const PRIVILEGE = new Set(["sudo", "sudoedit", "doas", "su", "pkexec", "run0"]);

export function basename(program: string): string {
  const stripped = program.replace(/\/+$/, "");
  const i = stripped.lastIndexOf("/");
  return i === -1 ? stripped : stripped.slice(i + 1);
}
