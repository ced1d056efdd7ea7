/**
 * What the numbers were measured on: CPU, cores, memory, runtime and codex version, and the
 * resident memory of processes (Linux `/proc/<pid>/status`).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { runtimeName } from "../../src/runtime.ts";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memTotalMiB: number;
  os: string;
  runtime: string;
}

export function machineInfo(): MachineInfo {
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    memTotalMiB: Math.round(os.totalmem() / 1024 / 1024),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    runtime: runtimeName,
  };
}

/** `codex --version` of the binary every scenario runs. */
export function codexVersion(binary: string): string {
  try {
    return execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  } catch (error) {
    return `unknown (${error instanceof Error ? error.message : String(error)})`;
  }
}

export interface MemoryUse {
  /** Resident set now, MiB. */
  rssMiB: number;
  /** Peak resident set of the process's life (VmHWM), MiB. */
  peakMiB: number;
}

/** VmRSS and VmHWM of one process; undefined once it is gone. */
export function memoryOf(pid: number): MemoryUse | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

/** Every descendant pid of `pid` (children of all its threads, recursively). */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let text = "";
      try {
        text = readFileSync(`/proc/${parent}/task/${task}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of text.trim().split(/\s+/).filter(Boolean).map(Number)) {
        if (!found.includes(child)) {
          found.push(child);
          queue.push(child);
        }
      }
    }
  }
  return found;
}

/** The short command name of a process (`/proc/<pid>/comm`), or "" once it is gone. */
export function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** The codex processes under `pid` (the app-server child, and anything it runs). */
export function codexPidsUnder(pid: number): number[] {
  return descendants(pid).filter((p) => commandName(p).startsWith("codex"));
}

/** CPU time (user + system) a process has used so far, ms (`/proc/<pid>/stat`); 0 once gone. */
export function cpuMsOf(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return 0;
  }
  // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Linux's USER_HZ: 100 on every architecture codexd runs on. */
const CLOCK_TICKS = 100;

/** The 1-, 5- and 15-minute load averages: how busy the (shared) machine was. */
export function loadAverage(): [number, number, number] {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg().map((v) => Math.round(v * 100) / 100);
  return [one, five, fifteen];
}
