/**
 * Where a path operand really points: resolved against the directory the command runs in
 * (after any `cd` on the line) and the session's worktree, with `..`, `~`, `/proc/self/root`
 * and trailing `/*` or `/.` understood. Nothing touches the filesystem.
 */
import { posix } from "node:path";

/** Stands for the home folder in resolved paths. */
export const HOME = "/home/~";

/** The worktree assumed when none is known: deep enough that `..` leaves it. */
export const UNKNOWN_WORKTREE = "/codexd-unknown/worktree";

/** Top-level folders whose loss breaks the machine or other users' data. */
export const SYSTEM_FOLDERS = new Set([
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

export interface Resolved {
  /** Absolute and normalized; `/home/~` stands for the home folder. */
  path: string;
  /** A relative path whose `..` climbs above the worktree. */
  leavesWorktree: boolean;
}

function expandHome(path: string): string {
  if (/^~[A-Za-z0-9_.-]*(\/|$)/.test(path)) return HOME + path.slice(path.search(/\/|$/));
  if (/^\$HOME(\/|$)/.test(path)) return HOME + path.slice(5);
  return path;
}

/** A last path segment made only of glob characters and bracket expressions, or `.`. */
const GLOB_TAIL = /\/(?:[*?]|\[[^\]/]*\])+$|\/\.$/;

/** Where the command runs: the session's worktree and the directory codex runs it in. */
export interface Place {
  worktree?: string;
  /** Absolute; the worktree when absent. */
  cwd?: string;
}

/**
 * Resolves `operand` for a command run in `lineCwd` (where `cd` on the line moved it: relative
 * to the command's directory, or absolute, or `~`; null when unknown). Undefined when it cannot
 * be known.
 */
export function resolvePath(
  operand: string,
  lineCwd: string | null | undefined,
  place: Place,
): Resolved | undefined {
  const root = place.worktree ?? UNKNOWN_WORKTREE;
  const start = place.cwd ?? root;
  // `~+`, `~-` and `~N` are places on the directory stack.
  if (/^~[-+0-9]/.test(operand)) return undefined;
  let path = expandHome(operand);
  const base = lineCwd === null
    ? undefined
    : lineCwd === undefined || lineCwd === "."
    ? start
    : resolvePath(lineCwd, undefined, place)?.path;
  if (!path.startsWith("/")) {
    if (base === undefined) return undefined;
    path = `${base}/${path}`;
  }
  let normalized = posix.normalize(path);
  // `/proc/self/root`, `/proc/1/root` and `/proc/thread-self/root` are the root folder again,
  // `/proc/self/cwd` the directory the command runs in.
  normalized = normalized.replace(/^\/proc\/[^/]+\/root(?=\/|$)/, "") || "/";
  // `/proc/self/fd/0` is whatever stdin was opened on (`exec < ~`).
  if (/^\/(proc\/[^/]+|dev)\/fd(\/|$)/.test(normalized)) return undefined;
  if (/^\/proc\/[^/]+\/cwd(?=\/|$)/.test(normalized)) {
    if (base === undefined) return undefined;
    normalized = posix.normalize(normalized.replace(/^\/proc\/[^/]+\/cwd/, base));
  }
  // `/usr/*` and `/usr/.` delete as much as `/usr`.
  // `/usr/*`, `/usr/.`, `~/**`, `~/?*`, `~/[!.]*` delete as much as the folder itself.
  normalized = normalized.replace(/(.)\/+$/, "$1");
  for (let m = GLOB_TAIL.exec(normalized); m !== null; m = GLOB_TAIL.exec(normalized)) {
    normalized = normalized.slice(0, m.index) || "/";
  }
  normalized = normalized.replace(/\/+$/, "") || "/";
  // A relative path that ends up outside the worktree got there by `..` in it or in a `cd`.
  const relative = !/^[/~]|^\$HOME/.test(operand);
  return { path: normalized, leavesWorktree: relative && !isInside(normalized, root) };
}

export function isInside(path: string, folder: string): boolean {
  const f = folder.replace(/\/+$/, "");
  return path === f || path.startsWith(`${f}/`);
}

/** `/`, the home folder, a top-level system folder, or a glob at the top level. */
/** Folders whose own subfolders (`/usr/lib`, `/var/lib`, `/etc/ssl`) the machine needs. */
const DEEP_SYSTEM = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "proc",
  "root",
  "run",
  "sbin",
  "sys",
  "usr",
  "var",
  "snap",
  "nix",
  "System",
  "Library",
  "private",
]);

export function isRootPath(path: string): boolean {
  if (path === "/" || path === HOME) return true;
  const segments = path.split("/").slice(1);
  if (segments.length === 2 && (segments[0] === "home" || segments[0] === "Users")) return true;
  if (
    segments[0] === "home" && segments[1] === "~" && segments.length === 3 &&
    segments[2].startsWith(".")
  ) {
    // `~/.ssh`, `~/.config`: the user's own settings and keys.
    return true;
  }
  if (
    segments.length <= 3 && DEEP_SYSTEM.has(segments[0]) &&
    !/^(tmp|folders|cache)$/.test(segments[1] ?? "")
  ) {
    return segments.length === 1 ||
      !(segments[0] === "usr" && segments[1] === "local" && segments.length === 3);
  }
  if (segments.length !== 1) return false;
  return SYSTEM_FOLDERS.has(segments[0]) || /[*?[]/.test(segments[0]);
}

/** Is the path the worktree's parent, or any folder above it? */
export function containsWorktree(path: string, worktree: string | undefined): boolean {
  const root = worktree ?? UNKNOWN_WORKTREE;
  return path !== root && isInside(root, path);
}
