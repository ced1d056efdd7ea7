/**
 * codex's rollout folders are made before codex starts (codex-home.ts), so that the sandbox,
 * which denies only paths that exist when a thread starts (read-denied.ts), denies them to the
 * first thread too.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { makeRolloutDirs } from "../../../src/provider/codex/codex-home.ts";
import { CODEX_HOME_ROLLOUT_DIRS } from "../../../src/provider/codex/read-denied.ts";

const dir = mkdtempSync(path.join(tmpdir(), "codexd-rollout-dirs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("makeRolloutDirs", () => {
  test("makes sessions and archived_sessions, private, owned as asked", async () => {
    const home = path.join(dir, "fresh");
    mkdirSync(home);
    const owner = { uid: process.getuid!(), gid: process.getgid!() };
    await makeRolloutDirs(home, owner);
    expect(CODEX_HOME_ROLLOUT_DIRS).toEqual(["sessions", "archived_sessions"]);
    for (const name of CODEX_HOME_ROLLOUT_DIRS) {
      const stat = lstatSync(path.join(home, name));
      expect(stat.isDirectory()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o700);
      expect({ uid: stat.uid, gid: stat.gid }).toEqual(owner);
    }
  });

  test("what is there already (codex's folder, or a link) is left as it is", async () => {
    const home = path.join(dir, "used");
    mkdirSync(path.join(home, "sessions"), { recursive: true, mode: 0o755 });
    symlinkSync(dir, path.join(home, "archived_sessions"));
    await makeRolloutDirs(home);
    expect(lstatSync(path.join(home, "sessions")).mode & 0o777).toBe(0o755);
    expect(lstatSync(path.join(home, "archived_sessions")).isSymbolicLink()).toBe(true);
  });

  test("a home that is not there is an error, not a folder made somewhere", async () => {
    await expect(makeRolloutDirs(path.join(dir, "missing"))).rejects.toThrow("ENOENT");
  });
});
