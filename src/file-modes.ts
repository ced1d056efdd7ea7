/**
 * codexd's own files are private: folders 0700, files 0600, whatever existed before. The daemon
 * sets umask 077 as it starts (so nothing it or SQLite creates is readable by others) and
 * tightens an existing state dir; codex and the commands it runs get the umask the daemon was
 * started with, so files agents write in a worktree keep their ordinary modes.
 */
import { chmodSync, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import process from "node:process";

export const PRIVATE_DIR_MODE = 0o700;

let inherited: number | undefined;

/** Sets umask 077 for the rest of the process; remembers the one it replaced. Idempotent. */
export function restrictUmask(): void {
  if (inherited !== undefined) return;
  inherited = process.umask(0o077);
}

/** The umask the process had before restrictUmask(); undefined when it was never called. */
export function inheritedUmask(): number | undefined {
  return inherited;
}

/**
 * Runs `fn` (a synchronous spawn) under the umask the daemon was started with, so the child
 * inherits that one rather than 077. JavaScript is single-threaded and the spawn call returns
 * once the child exists, so nothing else of codexd creates a file meanwhile.
 */
export function withInheritedUmask<T>(fn: () => T): T {
  if (inherited === undefined) return fn();
  const previous = process.umask(inherited);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}

/**
 * Creates `dir` 0700, and its missing parents 0755 (as `mkdir -p` under an ordinary umask would:
 * under 077 they would come out 0700 and shut out a codex.user whose codex home sits beside).
 */
export function makePrivateDir(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (d === path.dirname(d)) break;
  }
  for (const d of missing) {
    mkdirSync(d);
    chmodSync(d, d === path.resolve(dir) ? PRIVATE_DIR_MODE : 0o755);
  }
}

/** Folders inside the state dir whose files codexd itself writes, tightened one level down. */
const OWN_FOLDERS = new Set(["builtin-policies"]);

/**
 * Makes the state dir 0700 and everything directly in it private (folders 0700, files lose every
 * group and other bit: codexd's own become 0600, an executable someone keeps there stays
 * executable by its owner), plus the files of codexd's own sub-folders. Symbolic links are left
 * alone (chmod would follow them), and so is what codex keeps in a codex home inside it: the
 * folder itself becomes 0700, which already keeps everyone else out. Returns the paths whose mode
 * changed.
 */
export function tightenStateDir(dir: string): string[] {
  const changed: string[] = [];
  const tighten = (file: string, dirMode?: number) => {
    const stat = lstatSync(file);
    if (stat.isSymbolicLink()) return;
    const mode = dirMode ?? (stat.mode & 0o700);
    if ((stat.mode & 0o7777) !== mode) {
      chmodSync(file, mode);
      changed.push(file);
    }
  };
  tighten(dir, PRIVATE_DIR_MODE);
  const visit = (folder: string, entries: Dirent[], recurse: boolean) => {
    for (const entry of entries) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        tighten(file, PRIVATE_DIR_MODE);
        if (recurse && OWN_FOLDERS.has(entry.name)) {
          visit(file, readdirSync(file, { withFileTypes: true }), false);
        }
      } else if (entry.isFile()) {
        tighten(file);
      }
    }
  };
  visit(dir, readdirSync(dir, { withFileTypes: true }), true);
  return changed;
}
