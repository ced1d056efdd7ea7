/**
 * The real path of a path that exists, symlinks followed: a repository can commit a link to
 * `/` or the home folder, and `rm -rf link/*` then deletes there. The longest existing prefix is
 * resolved and the rest appended; undefined when nothing on the path exists or it cannot be read.
 */
import { realpathSync } from "node:fs";
import { posix } from "node:path";

export function existingRealpath(path: string): string | undefined {
  let head = path;
  let tail = "";
  for (let i = 0; i < 64 && head !== "/" && head !== "."; i++) {
    try {
      const real = realpathSync(head);
      return tail === "" ? real : posix.join(real, tail);
    } catch {
      tail = tail === "" ? posix.basename(head) : posix.join(posix.basename(head), tail);
      head = posix.dirname(head);
    }
  }
  return undefined;
}
