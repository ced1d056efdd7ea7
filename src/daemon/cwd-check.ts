/**
 * A spec's cwd must be a folder that exists. The wire schema (src/api/schemas.ts) checks only its
 * form, so that the client shares it without filesystem access; the session service asks here.
 */
import { statSync } from "node:fs";
import { InvalidInput } from "../errors.ts";

/** @throws InvalidInput naming `cwd` (a 400): `Cannot spawn session: cwd /x does not exist`. */
export function checkCwdExists(action: string, cwd: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    throw new InvalidInput(`Cannot ${action}: cwd ${cwd} does not exist`, "cwd");
  }
  if (!isDirectory) {
    throw new InvalidInput(`Cannot ${action}: cwd ${cwd} is not a directory`, "cwd");
  }
}
