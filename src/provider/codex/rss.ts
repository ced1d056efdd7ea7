/** A codex child's resident memory, for the pool's recycling (pool.ts). */
import { readFileSync } from "node:fs";

/** VmRSS of /proc/<pid>/status in bytes; undefined where there is no /proc or no such process. */
export function readRss(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
