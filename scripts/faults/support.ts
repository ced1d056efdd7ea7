/**
 * Shared pieces of the fault report and the soak: which codex processes belong to a run (from
 * /proc), how much memory a process holds, and whether what SSE clients saw is all in the
 * database.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { StoredEvent } from "../../src/api/schemas.ts";
import { Store } from "../../src/daemon/store.ts";
import { eventually } from "../../test/support/eventually.ts";

/**
 * Live codex processes of one state dir: a `codex` command line whose CODEX_HOME or working
 * folder lies inside `stateDir` (the daemon's codex home is `<stateDir>/codex-home`).
 */
export function codexProcessesOf(stateDir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!/codex/.test(cmd) || !/app-server/.test(cmd)) continue;
      if (/^zombie|^Z/m.test(state(name))) continue;
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      const home = env.find((v) => v.startsWith("CODEX_HOME="))?.slice("CODEX_HOME=".length);
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if ([home, cwd].some((p) => p !== undefined && isInside(p, stateDir))) {
        pids.push(Number(name));
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Daemons (`serve --state-dir <stateDir>`) still running. */
export function daemonProcessesOf(stateDir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (!argv.includes("serve") || /^Z/m.test(state(name))) continue;
      if (argv.some((a, i) => a === stateDir && argv[i - 1] === "--state-dir")) {
        pids.push(Number(name));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function state(pid: string): string {
  return /^State:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** Resident memory of a process in MiB (Linux), or NaN when it is gone. */
export function rssMiB(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Reads a stopped daemon's database: every session's events. */
export function storedEventsOf(stateDir: string, sessionIds: readonly string[]) {
  const store = Store.open(path.join(stateDir, "codexd.db"));
  try {
    return new Map(
      sessionIds.map((id) => [id, store.eventsAfter(id, 0) as StoredEvent[]] as const),
    );
  } finally {
    store.close();
  }
}

/** Events a client received that the database lacks or holds differently, plus gaps in it. */
export function eventsLost(
  received: readonly StoredEvent[],
  stored: readonly StoredEvent[],
): number {
  const bySeq = new Map(stored.map((e) => [e.seq, canonical(e)]));
  const missing = received.filter((e) => bySeq.get(e.seq) !== canonical(e));
  if (process.env.FAULT_DEBUG) {
    for (const e of missing) {
      process.stderr.write(`lost? ${canonical(e)}\n   db: ${bySeq.get(e.seq)}\n`);
    }
  }
  let lost = missing.length;
  stored.forEach((e, i) => {
    if (e.seq !== i + 1) lost++;
  });
  return lost;
}

/** JSON with sorted keys, so key order does not count as a difference. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
        : v,
  );
}

/** Gaps and duplicates in one session's seqs, as readable notes. */
export function sequenceProblems(events: readonly StoredEvent[]): string[] {
  const problems: string[] = [];
  let expected = 1;
  for (const event of events) {
    if (event.seq < expected) problems.push(`duplicate seq ${event.seq}`);
    else if (event.seq > expected) problems.push(`gap ${expected}..${event.seq - 1}`);
    expected = Math.max(expected, event.seq + 1);
  }
  return problems;
}

/** Polls until `probe` gives a value or `limitMs` passes (then throws, naming `what`). */
export function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  limitMs = 30_000,
): Promise<T> {
  return eventually(what, probe, { limitMs, intervalMs: 50 });
}
