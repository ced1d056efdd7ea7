/**
 * codexd's files are private whatever existed before (issue 10, finding 10): the state dir
 * 0700, the database and its -wal/-shm, the token and the pid files 0600, the daemon's umask 077.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { Store } from "../../src/daemon/store.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { makePrivateDir, tightenStateDir } from "../../src/file-modes.ts";
import { makeTempWorktree, type TempWorktree } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { untilTerminal } from "../support/session-events.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "codexd-modes-"));
  dirs.push(dir);
  return dir;
}

const mode = (file: string) => statSync(file).mode & 0o7777;

/** Runs `fn` under `umask`, restoring the previous one. */
function withUmask<T>(umask: number, fn: () => T): T {
  const previous = process.umask(umask);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}

let model: ScriptedModel;
let worktree: TempWorktree;
beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "GREET", rounds: [[step.message("hello", { deltas: 2 })]] }],
  });
  worktree = await makeTempWorktree();
});
afterAll(async () => {
  await worktree?.remove();
  await model?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("tightenStateDir", () => {
  test("the folder 0700, its files 0600 (0700 if executable), its folders 0700; links and codex's files untouched", () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    writeFileSync(path.join(dir, "codexd.db"), "", { mode: 0o644 });
    writeFileSync(path.join(dir, "token"), "t".repeat(32), { mode: 0o644 });
    mkdirSync(path.join(dir, "builtin-policies"), { mode: 0o755 });
    writeFileSync(path.join(dir, "builtin-policies", "default.yaml"), "x", { mode: 0o644 });
    mkdirSync(path.join(dir, "codex-home", "sessions"), { recursive: true, mode: 0o755 });
    const codexFile = path.join(dir, "codex-home", "sessions", "s.jsonl");
    writeFileSync(codexFile, "{}");
    chmodSync(codexFile, 0o644); // explicitly: a daemon started in this process set umask 077
    const outside = path.join(tempDir(), "outside");
    writeFileSync(outside, "x", { mode: 0o644 });
    chmodSync(outside, 0o644);
    symlinkSync(outside, path.join(dir, "link"));
    for (const file of ["codexd.db", "token", "builtin-policies/default.yaml"]) {
      chmodSync(path.join(dir, file), 0o644);
    }
    for (const folder of ["builtin-policies", "codex-home"]) {
      chmodSync(path.join(dir, folder), 0o755);
    }
    // Not codexd's: an executable someone keeps there stays executable, by its owner only.
    writeFileSync(path.join(dir, "tool.sh"), "#!/bin/sh\n");
    chmodSync(path.join(dir, "tool.sh"), 0o755);

    const changed = tightenStateDir(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(dir, "codexd.db"))).toBe(0o600);
    expect(mode(path.join(dir, "token"))).toBe(0o600);
    expect(mode(path.join(dir, "builtin-policies"))).toBe(0o700);
    expect(mode(path.join(dir, "builtin-policies", "default.yaml"))).toBe(0o600);
    expect(mode(path.join(dir, "codex-home"))).toBe(0o700);
    expect(mode(path.join(dir, "tool.sh"))).toBe(0o700);
    expect(mode(codexFile)).toBe(0o644); // inside a 0700 folder; codex's own business
    expect(mode(outside)).toBe(0o644); // chmod would have followed the link
    expect(changed).toContain(path.join(dir, "codexd.db"));
    // Idempotent: nothing left to change.
    expect(tightenStateDir(dir)).toEqual([]);
  });
});

describe("makePrivateDir", () => {
  test("the folder 0700, missing parents 0755 even under umask 077", () => {
    const base = tempDir();
    const dir = path.join(base, "srv", "codexd", "state");
    withUmask(0o077, () => makePrivateDir(dir));
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(base, "srv"))).toBe(0o755);
    expect(mode(path.join(base, "srv", "codexd"))).toBe(0o755);
    makePrivateDir(dir); // exists: nothing to do
    expect(mode(dir)).toBe(0o700);
  });
});

describe("Store.open", () => {
  test("a new database and its -wal/-shm are 0600 even under umask 022", () => {
    const dir = tempDir();
    const file = path.join(dir, "codexd.db");
    const store = withUmask(0o022, () => Store.open(file));
    try {
      expect(existsSync(`${file}-wal`)).toBe(true);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        expect({ f, mode: mode(f) }).toEqual({ f, mode: 0o600 });
      }
    } finally {
      store.close();
    }
  });

  test("an existing 0644 database is tightened when opened", () => {
    const dir = tempDir();
    const file = path.join(dir, "codexd.db");
    Store.open(file).close();
    chmodSync(file, 0o644);
    const store = withUmask(0o022, () => Store.open(file));
    try {
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        expect({ f, mode: mode(f) }).toEqual({ f, mode: 0o600 });
      }
    } finally {
      store.close();
    }
  });
});

describe("the daemon", () => {
  test("a pre-existing 0755 state dir with a 0644 database comes out 0700/0600", async () => {
    const stateDir = makeStateDir();
    const db = path.join(stateDir, "codexd.db");
    Store.open(db).close();
    writeFileSync(path.join(stateDir, "token"), "a".repeat(64) + "\n");
    for (
      const [file, m] of [[stateDir, 0o755], [db, 0o644], [
        path.join(stateDir, "token"),
        0o644,
      ]] as const
    ) {
      chmodSync(file, m);
    }

    await using d = await startDaemonInProcess({ model, stateDir });
    const { sessionId } = await d.client.spawn({ prompt: "GREET", cwd: worktree.path });
    await untilTerminal(d.client, sessionId);

    expect(mode(stateDir)).toBe(0o700);
    const files = readdirSync(stateDir, { withFileTypes: true });
    // The database, its -wal and -shm, the token, the pid files: all of them.
    expect(files.map((f) => f.name)).toEqual(
      expect.arrayContaining(["codexd.db", "codexd.db-wal", "codexd.db-shm", "token"]),
    );
    for (const entry of files) {
      const file = path.join(stateDir, entry.name);
      const want = entry.isDirectory() ? 0o700 : 0o600;
      expect({ file, mode: mode(file) }).toEqual({ file, mode: want });
    }
    // The daemon's own umask is 077 from here on.
    const status = readFileSync("/proc/self/status", "utf8");
    expect(status).toMatch(/^Umask:\s+0077$/m);
  });
});
