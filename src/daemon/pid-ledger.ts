/**
 * Which processes a daemon of this state dir owns, on disk, so that nothing outlives it:
 *
 * - `daemon.pid` holds the daemon's own pid. A second daemon on the same state dir is refused
 *   while the first is alive (two daemons would share one database and one CODEX_HOME).
 * - `codex.pid` holds the codex children's pids (their process groups; a pool has several). A
 *   daemon that was SIGKILLed could not stop its children; the next one ends their groups at
 *   start-up.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CodexdError } from "../errors.ts";

const ChildRecord = z.object({
  /** The child started last (the only one before pools). */
  pid: z.number().int().positive(),
  /** Every child that ran when the record was written. */
  pids: z.array(z.number().int().positive()).optional(),
  daemonPid: z.number().int(),
});

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
  /** Children recorded by this daemon (dead ones are dropped at the next record). */
  readonly #children = new Set<number>();

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
    for (const known of this.#children) if (!isAlive(known)) this.#children.delete(known);
    this.#children.add(pid);
    const record = { pid, pids: [...this.#children], daemonPid: process.pid };
    writeFileSync(this.#childFile, JSON.stringify(record), { mode: 0o600 });
  }

  /**
   * Ends the codex children left by an earlier daemon of this state dir (their process groups,
   * so the commands and MCP servers they started go too). Returns the first pid it ended, if any.
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
    const { daemonPid } = record;
    if (daemonPid !== process.pid && isAlive(daemonPid)) return undefined; // not an orphan
    const ended = await Promise.all(
      [...new Set([record.pid, ...(record.pids ?? [])])].map((pid) => reap(pid)),
    );
    return ended.find((pid) => pid !== undefined);
  }
}

async function reap(pid: number): Promise<number | undefined> {
  if (!isAlive(pid)) return undefined;
  // A recycled pid must not be killed: only a codex app-server is ours.
  const cmd = commandLine(pid);
  if (cmd !== undefined && !/codex/.test(cmd)) return undefined;
  signalGroup(pid, "SIGTERM");
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) signalGroup(pid, "SIGKILL");
  return pid;
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
