import { afterEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { isAlive, PidLedger, StateDirBusy } from "../../src/daemon/pid-ledger.ts";
import { eventually } from "../support/eventually.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "codexd-ledger-"));
  dirs.push(dir);
  return dir;
}

/**
 * A long-running stand-in for an orphaned codex, in its own process group; resolves once it runs
 * as `fake-codex` (just after the fork its command line is still the test runner's, which the
 * ledger rightly refuses to kill).
 */
async function fakeCodex(dir: string) {
  const bin = join(dir, "fake-codex");
  writeFileSync(bin, "#!/bin/sh\nsleep 60 &\nwait\n");
  chmodSync(bin, 0o755);
  const child = spawn(bin, ["app-server"], { detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid!;
  await eventually("the stand-in codex to exec", () => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("fake-codex") ? true : undefined;
    } catch {
      return undefined;
    }
  });
  return { pid, exited };
}

test("a child recorded by a dead daemon is ended at start-up, with its process group", async () => {
  const dir = stateDir();
  const orphan = await fakeCodex(dir);
  writeFileSync(join(dir, "codex.pid"), JSON.stringify({ pid: orphan.pid, daemonPid: 999_999 }));
  const ledger = new PidLedger(dir);
  expect(await ledger.reapOrphan()).toBe(orphan.pid);
  await orphan.exited;
  expect(isAlive(orphan.pid)).toBe(false);
});

test("every child of a pool recorded by a dead daemon is ended at start-up", async () => {
  const dir = stateDir();
  const recorder = new PidLedger(dir);
  const pool = await Promise.all([fakeCodex(dir), fakeCodex(dir), fakeCodex(dir)]);
  for (const child of pool) recorder.recordChild(child.pid);
  const record = JSON.parse(readFileSync(join(dir, "codex.pid"), "utf8"));
  expect(record.pids).toEqual(pool.map((c) => c.pid));
  // As a SIGKILLed daemon left it: its own pid dead.
  writeFileSync(join(dir, "codex.pid"), JSON.stringify({ ...record, daemonPid: 999_999 }));
  const reaped = await new PidLedger(dir).reapOrphan();
  expect(pool.map((c) => c.pid)).toContain(reaped!);
  await Promise.all(pool.map((c) => c.exited));
  for (const child of pool) expect(isAlive(child.pid)).toBe(false);
});

test("a child whose daemon is still alive is left alone", async () => {
  const dir = stateDir();
  const other = await fakeCodex(dir);
  writeFileSync(join(dir, "codex.pid"), JSON.stringify({ pid: other.pid, daemonPid: 1 }));
  expect(await new PidLedger(dir).reapOrphan()).toBeUndefined();
  expect(isAlive(other.pid)).toBe(true);
  process.kill(-other.pid, "SIGKILL");
  await other.exited;
});

test("a second daemon on the same state dir is refused while the first lives", () => {
  const dir = stateDir();
  writeFileSync(join(dir, "daemon.pid"), "1\n"); // pid 1 is always alive
  expect(() => new PidLedger(dir).claim()).toThrow(StateDirBusy);
  writeFileSync(join(dir, "daemon.pid"), "999999\n"); // a dead daemon's claim is taken over
  expect(() => new PidLedger(dir).claim()).not.toThrow();
});

test("a zombie counts as dead, though kill(pid, 0) still reaches it", async () => {
  // The child exits only once its parent has exec'd into `sleep 5`, which never waits for it (a
  // child exiting at once could be reaped by the shell before the exec, under load).
  const child = `while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done`;
  const parent = spawn("sh", ["-c", `sh -c '${child}' & echo $!; exec sleep 5`], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const [line] = await once(createInterface({ input: parent.stdout! }), "line");
    const zombie = Number(line);
    let state = "";
    for (let i = 0; i < 500 && state !== "Z"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const stat = readFileSync(`/proc/${zombie}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    }
    expect(state).toBe("Z");
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isAlive(zombie)).toBe(false);
    expect(isAlive(parent.pid!)).toBe(true);
  } finally {
    parent.kill("SIGKILL");
  }
});
