import { afterEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, PidLedger, StateDirBusy } from "../../src/daemon/pid-ledger.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "codexd-ledger-"));
  dirs.push(dir);
  return dir;
}

/** A long-running stand-in for an orphaned codex, in its own process group. */
function fakeCodex(dir: string) {
  const bin = join(dir, "fake-codex");
  writeFileSync(bin, "#!/bin/sh\nsleep 60 &\nwait\n");
  chmodSync(bin, 0o755);
  const child = spawn(bin, ["app-server"], { detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { pid: child.pid!, exited };
}

test("a child recorded by a dead daemon is ended at start-up, with its process group", async () => {
  const dir = stateDir();
  const orphan = fakeCodex(dir);
  writeFileSync(join(dir, "codex.pid"), JSON.stringify({ pid: orphan.pid, daemonPid: 999_999 }));
  const ledger = new PidLedger(dir);
  expect(await ledger.reapOrphan()).toBe(orphan.pid);
  await orphan.exited;
  expect(isAlive(orphan.pid)).toBe(false);
});

test("a child whose daemon is still alive is left alone", async () => {
  const dir = stateDir();
  const other = fakeCodex(dir);
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
