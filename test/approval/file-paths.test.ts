import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { evaluate, type SessionFacts } from "../../src/approval/engine.ts";
import { checkPaths, isInside, realLocation } from "../../src/approval/file-paths.ts";
import type { PolicyStore } from "../../src/approval/policy-store.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { type TempDir, tempDir } from "./support/policies.ts";
import { storeWith } from "./support/store.ts";

let root: TempDir;
let wt: string;
let outside: string;
let extra: string;
let env: ReturnType<typeof storeWith>;
let store: PolicyStore;

beforeAll(() => {
  root = tempDir("codexd-files-");
  wt = join(root.dir, "wt");
  outside = join(root.dir, "wt-evil");
  extra = join(root.dir, "scratch");
  for (
    const d of [
      wt,
      outside,
      extra,
      join(wt, "src"),
      join(root.dir, "repo.git", "worktrees", "wt", "hooks"),
      join(root.dir, "repo.git", "hooks"),
    ]
  ) {
    mkdirSync(d, { recursive: true });
  }
  // A linked worktree: `.git` is a pointer file naming the gitdir, which names the common dir.
  writeFileSync(join(wt, ".git"), `gitdir: ${join(root.dir, "repo.git", "worktrees", "wt")}\n`);
  writeFileSync(join(root.dir, "repo.git", "worktrees", "wt", "commondir"), "../..\n");
  symlinkSync(outside, join(wt, "escape"));
  symlinkSync(join(outside, "missing", "deeper"), join(wt, "dangling"));
  symlinkSync(join(wt, "src"), join(wt, "src-link"));
  symlinkSync(join(root.dir, "repo.git", "hooks"), join(wt, "hooks-link"));
  env = storeWith({
    files: `
version: 1
name: files
default: allow
files:
  deny: ["**/.env", "secrets/**"]
  allowRoots: ["${extra}"]
`,
    askfiles: "version: 1\nname: askfiles\ndefault: allow\nfiles: { default: ask }\n",
  }, fakeAnalyzer);
  store = env.store;
});
afterAll(() => {
  env[Symbol.dispose]();
  root[Symbol.dispose]();
});

const facts = (mode: SessionFacts["permissionMode"] = "default"): SessionFacts => ({
  worktree: wt,
  permissionMode: mode,
});

function judge(
  paths: string[],
  mode?: SessionFacts["permissionMode"],
  grantRoot?: string,
  policy = "files",
) {
  return evaluate(
    store.get(policy),
    { kind: "fileChange", paths, grantRoot },
    facts(mode),
    fakeAnalyzer,
  );
}

describe("isInside", () => {
  test("/wt-evil is not inside /wt", () => {
    expect(isInside("/wt", "/wt-evil")).toBe(false);
    expect(isInside("/wt", "/wt-evil/x")).toBe(false);
    expect(isInside("/wt", "/wt/x")).toBe(true);
    expect(isInside("/wt", "/wt")).toBe(true);
    expect(isInside("/wt", "/wt/..x")).toBe(true);
    expect(isInside("/wt", "/")).toBe(false);
  });
});

describe("file containment", () => {
  const cases: Array<{ name: string; paths: () => string[]; decision: string; ruleId: string }> = [
    {
      name: "a new file in the worktree",
      paths: () => [join(wt, "src", "new.ts")],
      decision: "allow",
      ruleId: "default",
    },
    {
      name: "a new file in a new folder",
      paths: () => [join(wt, "a", "b", "c.ts")],
      decision: "allow",
      ruleId: "default",
    },
    {
      name: "a relative path is taken from the worktree",
      paths: () => ["src/x.ts"],
      decision: "allow",
      ruleId: "default",
    },
    {
      name: ".. out of the worktree",
      paths: () => [join(wt, "src", "..", "..", "wt-evil", "x")],
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    },
    {
      name: "a sibling folder sharing the prefix",
      paths: () => [join(outside, "x")],
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    },
    {
      name: "through a symlinked folder that leaves",
      paths: () => [join(wt, "escape", "x")],
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    },
    {
      name: "a dangling symlink that points outside",
      paths: () => [join(wt, "dangling")],
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    },
    {
      name: "a symlink that stays inside",
      paths: () => [join(wt, "src-link", "y.ts")],
      decision: "allow",
      ruleId: "default",
    },
    {
      name: "one bad path among good ones",
      paths: () => [join(wt, "ok.ts"), "/etc/passwd"],
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    },
    {
      name: "the .git pointer file",
      paths: () => [join(wt, ".git")],
      decision: "deny",
      ruleId: "builtin.files.protected",
    },
    {
      name: "a .git folder deeper down",
      paths: () => [join(wt, "vendor", ".git", "config")],
      decision: "deny",
      ruleId: "builtin.files.protected",
    },
    {
      name: ".codex",
      paths: () => [join(wt, ".codex", "config.toml")],
      decision: "deny",
      ruleId: "builtin.files.protected",
    },
    {
      name: ".agents",
      paths: () => [join(wt, ".agents", "x.md")],
      decision: "deny",
      ruleId: "builtin.files.protected",
    },
    {
      name: "files.deny glob **/.env",
      paths: () => [join(wt, "app", ".env")],
      decision: "deny",
      ruleId: "files.files.deny",
    },
    {
      name: "files.deny glob secrets/**",
      paths: () => [join(wt, "secrets", "k.pem")],
      decision: "deny",
      ruleId: "files.files.deny",
    },
    {
      name: "a folder from allowRoots",
      paths: () => [join(extra, "notes.md")],
      decision: "allow",
      ruleId: "default",
    },
    {
      name: "no paths at all",
      paths: () => [],
      decision: "deny",
      ruleId: "builtin.files.no-paths",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      expect(judge(c.paths())).toMatchObject({ decision: c.decision, ruleId: c.ruleId });
    });
  }

  test("the gitdir a pointer file names is protected, hooks included (through a symlink too)", () => {
    const gitdir = join(root.dir, "repo.git", "worktrees", "wt");
    using pointer = storeWith({
      p: `version: 1\nname: p\ndefault: allow\nfiles: { allowRoots: ["${root.dir}"] }\n`,
    });
    const run = (p: string) =>
      evaluate(pointer.store.get("p"), { kind: "fileChange", paths: [p] }, facts(), fakeAnalyzer);
    expect(run(join(gitdir, "HEAD"))).toMatchObject({
      decision: "deny",
      ruleId: "builtin.files.protected",
    });
    expect(run(join(root.dir, "repo.git", "hooks", "pre-commit"))).toMatchObject({
      decision: "deny",
      ruleId: "builtin.files.protected",
    });
    expect(run(join(wt, "hooks-link", "pre-commit"))).toMatchObject({
      decision: "deny",
      ruleId: "builtin.files.protected",
    });
    expect(run(join(root.dir, "elsewhere.txt")).decision).toBe("allow");
  });

  test("grantRoot must be contained too", () => {
    expect(judge([join(wt, "a.ts")], "default", "/")).toMatchObject({
      decision: "deny",
      ruleId: "builtin.files.outside-worktree",
    });
    expect(judge([join(wt, "a.ts")], "default", join(wt, "src")).decision).toBe("allow");
  });

  test("realLocation resolves symlinks through the deepest existing parent", () => {
    expect(realLocation(join(wt, "escape", "new", "file"))).toBe(
      join(realLocation(outside), "new", "file"),
    );
  });

  test("checkPaths reports the real path and its root", () => {
    const [v] = checkPaths([join(wt, "src-link", "z.ts")], {
      worktree: wt,
      allowRoots: [],
      denied: () => false,
    });
    expect(v).toMatchObject({ ok: true, relative: join("src", "z.ts"), inWorktree: true });
  });
});

describe("permission modes for file changes", () => {
  test("acceptEdits accepts edits inside the worktree without further rules", () => {
    expect(judge([join(wt, "a.ts")], "acceptEdits", undefined, "askfiles")).toMatchObject({
      decision: "allow",
      source: "mode",
    });
    expect(judge([join(wt, "a.ts")], "default", undefined, "askfiles")).toMatchObject({
      decision: "ask",
      ruleId: "files.default",
    });
  });
  test("acceptEdits never accepts protected, denied or outside paths", () => {
    expect(judge([join(wt, ".git")], "acceptEdits").decision).toBe("deny");
    expect(judge([join(wt, ".env")], "acceptEdits").decision).toBe("deny");
    expect(judge([join(outside, "x")], "acceptEdits").decision).toBe("deny");
  });
  test("acceptEdits covers the worktree only, not allowRoots", () => {
    expect(judge([join(extra, "x")], "acceptEdits")).toMatchObject({
      decision: "allow",
      source: "default",
    });
  });
  test("plan declines every file change", () => {
    expect(judge([join(wt, "a.ts")], "plan")).toMatchObject({
      decision: "deny",
      source: "mode",
      ruleId: "mode.plan",
    });
  });
});
