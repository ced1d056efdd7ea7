/**
 * A cap on the processes codex and everything it starts may hold (RLIMIT_NPROC), so that one
 * session's fork bomb exhausts its account's allowance instead of the machine: the daemon (root,
 * or another account) keeps running and restarts codex, and the host stays usable. The sandbox
 * confines paths, not process counts, and an analyzer cannot tell a fork bomb written in a script
 * from a build.
 *
 * Limits: the count is the account's across the machine (every process and thread of the user
 * codex runs as, codex's own threads included, and every pool child); root ignores it, so it binds
 * when codex runs as `codex.user` or the daemon itself is not root. Node cannot set a child's
 * rlimits, so codex starts under util-linux's `prlimit`, which sets the limit and execs codex (same
 * pid, same process group).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { ProviderUnavailable } from "../../errors.ts";

/** `codex.maxProcesses` when the config says nothing, on Linux (where `prlimit` is). */
export const DEFAULT_MAX_PROCESSES = 4096;

/** The default for this platform: none where there is no `prlimit` (macOS). */
export function defaultMaxProcesses(platform: string = process.platform): number | null {
  return platform === "linux" ? DEFAULT_MAX_PROCESSES : null;
}

/** Where `prlimit` is looked for after the absolute folders of PATH. */
const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

export interface LaunchCommand {
  file: string;
  args: string[];
}

/**
 * The command that starts `binary` with `args`, under `maxProcesses` when given. `pathValue` is the
 * PATH to find `prlimit` in (only its absolute folders count).
 */
export function limitedLaunch(
  binary: string,
  args: readonly string[],
  maxProcesses: number | undefined,
  pathValue: string | undefined,
  exists: (file: string) => boolean = existsSync,
): LaunchCommand {
  if (maxProcesses === undefined) return { file: binary, args: [...args] };
  const dirs = [...(pathValue ?? "").split(path.delimiter), ...SYSTEM_DIRS]
    .filter((dir) => path.isAbsolute(dir));
  const prlimit = dirs.map((dir) => path.join(dir, "prlimit")).find(exists);
  if (prlimit === undefined) {
    throw new ProviderUnavailable(
      "Cannot start codex: codex.maxProcesses needs prlimit (util-linux) and none was found on " +
        "PATH or in /usr/bin; install util-linux, or set codex.maxProcesses to null to start " +
        "codex without a process limit",
    );
  }
  return {
    file: prlimit,
    args: [`--nproc=${maxProcesses}:${maxProcesses}`, "--", binary, ...args],
  };
}
