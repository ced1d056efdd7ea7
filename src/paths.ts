/** Path helpers shared by the layers (spec guard, config, sandbox profiles). */
import path from "node:path";

/** Whether the path `inner` is the folder `outer` or lies inside it (both absolute, resolved). */
export function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  // `..b` is a folder inside; only `..` itself or `../...` leaves `outer`.
  const leaves = relative === ".." || relative.startsWith(`..${path.sep}`);
  return !leaves && !path.isAbsolute(relative);
}
