/**
 * CPU affinity of running processes (Linux `taskset`), for the throughput scenario's second
 * measurement: codex alone on one CPU in both paths, every other process of the run on the rest.
 * On a small machine codex's own CPU (more than one core's worth in a fast stream) and the
 * daemon's share the same cores, so the shared figure measures the sum of their CPU; pinned,
 * it shows whether the daemon keeps up with the codex it serves.
 */
import { execFileSync } from "node:child_process";
import os from "node:os";

/** Why pinning cannot be done here, or undefined when it can. */
export function pinningUnavailable(): string | undefined {
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  if (os.availableParallelism() < 2) return "one CPU only";
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
  } catch {
    return "taskset (util-linux) is not installed";
  }
  return undefined;
}

/** Every thread of each process runs on `cpus` (a taskset list: `0`, `1-3`). */
export function pin(pids: readonly number[], cpus: string): void {
  for (const pid of pids) {
    execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", cpus, String(pid)], {
      stdio: "ignore",
    });
  }
}

/** The taskset list of every CPU (to undo a pin). */
export function allCpus(): string {
  return `0-${os.availableParallelism() - 1}`;
}
