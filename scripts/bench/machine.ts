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
