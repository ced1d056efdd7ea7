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
  "julia",
  "osascript",
  "jshell",
  "pwsh",
  "expect",
  "gawk",
  "mawk",
  "awk",
  "nawk",
]);

/** Code interpreters (`python3.12` counts as python). */
export function isInterpreter(program: string): boolean {
  return INTERPRETER_NAMES.has(canonicalProgram(program));
}

/**
 * The program a versioned or packaged name stands for: `perl5.36.0` → perl, `python3.12` →
 * python3, `wget2` → wget, `node20` → node, `bash5.2` → bash. Other names are returned as they are.
 */
export function canonicalProgram(program: string): string {
  if (INTERPRETER_NAMES.has(program) || SHELLS.has(program) || DOWNLOADERS.has(program)) {
    return program;
  }
  const m =
    /^(python3|python2|python|pypy3|pypy|perl|ruby|php|lua|luajit|node|nodejs|tclsh|wget|curl|bash|zsh|ksh|mksh|dash|gawk|mawk|awk|Rscript|sed|gsed|tar|gtar|find|gfind|xargs|gxargs|env|git|rm|chmod|chown)[-_.]?[0-9][0-9.]*(-[A-Za-z0-9_-]+)?$/
      .exec(program);
  if (m !== null) return m[1];
  // Cross and versioned compilers: `gcc-12`, `x86_64-linux-gnu-gcc-12`, `clang-17`.
  const compiler =
    /^(?:[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+-)?(gcc|g\+\+|cc|c\+\+|clang|clang\+\+|cpp)(-[0-9.]+)?$/
      .exec(program);
  if (compiler !== null) return compiler[1];
  // Debian's alternatives: `editor` is some vi; `pdb3` is python's debugger.
  if (program === "editor" || program === "sensible-editor") return "vim";
  if (/^pdb[0-9.]*$/.test(program)) return "pdb";
  // `vim.basic`, `vim.tiny`, `nvim.appimage`, `python3-dbg`.
  const alt =
    /^(vim|vi|nvim|ex|view|python3|python|perl|ruby|node)[.-](basic|tiny|gtk3?|nox|athena|motif|appimage|dbg|debug)$/
      .exec(program);
  return alt === null ? program : alt[1];
}

/** Programs that fetch from the network and print to stdout. */
export const DOWNLOADERS = new Set([
  // `bash < /dev/tcp/host/80`: bash's own network redirection, seen as a program feeding stdin.
  "/dev/tcp",
  "curl",
  "wget",
  "wget2",
  "curlie",
  "axel",
  "ftp",
  "tftp",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "openssl",
  "scp",
  "sftp",
  "rsync",
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
export const PRIVILEGE = new Set([
  "sudo",
  "sudoedit",
  "doas",
  "su",
  "pkexec",
  "run0",
  "runuser",
  "sg",
  "setpriv",
]);

export function basename(program: string): string {
  const stripped = program.replace(/\/+$/, "");
  const i = stripped.lastIndexOf("/");
  return i === -1 ? stripped : stripped.slice(i + 1);
}
