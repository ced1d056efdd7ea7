/**
 * Whether a spec's MCP server would run code the session's own commands can rewrite. codex starts
 * MCP servers outside the sandbox (plan.ts starts them in an empty folder, so nothing is found
 * relative to the worktree), and a session's commands write its worktree: a server run as
 * `python3 <worktree>/tools/mcp.py` (a repository's own server, as its `.mcp.json` would name it)
 * runs whatever the repository shipped, or the agent wrote there since, unsandboxed, at every
 * thread start and resume (test/daemon/mcp-server-code.test.ts proves it against the real codex).
 *
 * Which words of a command line are code and which are data cannot be told in general (`node
 * x.js`, `npm --prefix <dir> start`, `uv run --directory <dir>`, `sh -c 'cd <dir> && make'`), so
 * any word naming a path inside a writable root is refused: the word itself, what follows its
 * first `=` (`--prefix=<dir>`), a `-C<dir>` cluster, and any mention of a root inside a longer
 * word (a `-c` script). A server that only reads the worktree is refused too; it can be handed
 * the folder through its `env`.
 */
import path from "node:path";
import { isWithin } from "../paths.ts";

export interface WritableCode {
  /** Index of the word in `[command, ...args]`. */
  index: number;
  word: string;
  /** The writable root (as named by the caller) the word points into. */
  root: string;
}

/**
 * The first word of `argv` that names a path inside one of `roots`. `realPath` resolves
 * symlinks (a word may name the worktree through a link); `roots` are given by their real paths
 * and, where different, as named.
 */
export function writableCodeIn(
  argv: readonly string[],
  roots: readonly string[],
  realPath: (p: string) => string,
): WritableCode | undefined {
  for (const [index, word] of argv.entries()) {
    for (const candidate of pathCandidates(word)) {
      const real = realPath(candidate);
      const root = roots.find((r) => isWithin(real, r) || isWithin(candidate, r));
      if (root !== undefined) return { index, word, root };
    }
    const mentioned = roots.find((root) => mentions(word, root));
    if (mentioned !== undefined) return { index, word, root: mentioned };
  }
  return undefined;
}

/** A server whose command line names a writable root: which one, and where. */
export interface ServerRunningWritableCode extends WritableCode {
  server: string;
  /** The field the word is in: `command` or `args.<i>`. */
  field: string;
}

/**
 * Every server of `servers` whose command line names a path inside one of `roots` (each also
 * taken by its real path), with the first such word.
 */
export function serversRunningWritableCode(
  servers: Readonly<Record<string, { command: string; args: readonly string[] }>>,
  roots: readonly string[],
  realPath: (p: string) => string,
): ServerRunningWritableCode[] {
  const all = [...new Set([...roots, ...roots.map(realPath)])];
  const found: ServerRunningWritableCode[] = [];
  for (const [server, { command, args }] of Object.entries(servers)) {
    const code = writableCodeIn([command, ...args], all, realPath);
    if (code === undefined) continue;
    const field = code.index === 0 ? "command" : `args.${code.index - 1}`;
    found.push({ ...code, server, field });
  }
  return found;
}

/**
 * The absolute paths a word may stand for: itself, after an `=`, a `-C<dir>` cluster, a file URL,
 * and every absolute path inside it (a `-c` script's `python3 /w//wt/s.py`, `/w/x/../wt`), each
 * then resolved, so other spellings of a root (`//`, `.`, `..`, a link) are caught too.
 */
function pathCandidates(word: string): string[] {
  const out = [word];
  const eq = word.indexOf("=");
  if (eq !== -1) out.push(word.slice(eq + 1));
  if (/^-[A-Za-z]\//.test(word)) out.push(word.slice(2));
  if (word.startsWith("file://")) out.push(word.slice("file://".length));
  out.push(...word.match(EMBEDDED_PATH) ?? []);
  return out.filter((p) => path.isAbsolute(p));
}

/** An absolute path inside a longer word, up to the shell's separators and quotes. */
const EMBEDDED_PATH = /\/[^\s'"`;&|<>(){}$]+/g;

/** `root` appears in `word` as a whole path (not as the start of a longer folder name). */
function mentions(word: string, root: string): boolean {
  for (let at = word.indexOf(root); at !== -1; at = word.indexOf(root, at + 1)) {
    const after = word[at + root.length];
    if (after === undefined || after === "/" || !/[A-Za-z0-9._-]/.test(after)) return true;
  }
  return false;
}
