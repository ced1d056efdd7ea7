/**
 * Which processes a daemon of this state dir owns, on disk, so that nothing outlives it:
 *
 * - `daemon.pid` holds the daemon's own pid. A second daemon on the same state dir is refused
 *   while the first is alive (two daemons would share one database and one CODEX_HOME).
 * - `codex.pid` holds the codex child's pid (its process group). A daemon that was SIGKILLed
 *   could not stop its child; the next one ends that child's group at start-up.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CodexdError } from "../errors.ts";

const ChildRecord = z.object({ pid: z.number().int().positive(), daemonPid: z.number().int() });

export class StateDirBusy extends CodexdError {
  constructor(stateDir: string, pid: number) {
    super(
      "state_dir_busy",
      `Cannot start: another codexd (pid ${pid}) is running with state dir ${stateDir}`,
    );
  }
}

/**
 * True while the process runs. A zombie counts as dead: it has exited, and in a container whose
 * pid 1 does not reap orphans it may stay a zombie for good, yet `kill(pid, 0)` still succeeds.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return processState(pid) !== "Z";
}

/** The state letter of a process from /proc (Linux), or undefined where there is none. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may contain spaces: the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
}

/** The command line of a live process, where the OS tells it (Linux /proc). */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return undefined;
  }
}

export class PidLedger {
  readonly #daemonFile: string;
  readonly #childFile: string;

  constructor(readonly stateDir: string) {
    this.#daemonFile = join(stateDir, "daemon.pid");
    this.#childFile = join(stateDir, "codex.pid");
  }

  /** Claims the state dir for this process; throws StateDirBusy if a live daemon holds it. */
  claim(pid = process.pid): void {
    const holder = readPid(this.#daemonFile);
    if (holder !== undefined && holder !== pid && isAlive(holder)) {
      throw new StateDirBusy(this.stateDir, holder);
    }
    writeFileSync(this.#daemonFile, `${pid}\n`, { mode: 0o600 });
  }

  release(): void {
    rmSync(this.#daemonFile, { force: true });
    rmSync(this.#childFile, { force: true });
  }

  recordChild(pid: number): void {
    writeFileSync(this.#childFile, JSON.stringify({ pid, daemonPid: process.pid }), {
      mode: 0o600,
    });
  }

  /**
   * Ends a codex child left by an earlier daemon of this state dir (its process group, so the
   * commands and MCP servers it started go too). Returns the pid it ended, if any.
   */
  async reapOrphan(): Promise<number | undefined> {
    let record: z.infer<typeof ChildRecord>;
    try {
      const parsed = ChildRecord.safeParse(JSON.parse(readFileSync(this.#childFile, "utf8")));
      if (!parsed.success) return undefined;
      record = parsed.data;
    } catch {
      return undefined;
    }
    rmSync(this.#childFile, { force: true });
    const { pid, daemonPid } = record;
    if (daemonPid !== process.pid && isAlive(daemonPid)) return undefined; // not an orphan
    if (!isAlive(pid)) return undefined;
    // A recycled pid must not be killed: only a codex app-server is ours.
    const cmd = commandLine(pid);
    if (cmd !== undefined && !/codex/.test(cmd)) return undefined;
    signalGroup(pid, "SIGTERM");
    for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) signalGroup(pid, "SIGKILL");
    return pid;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
