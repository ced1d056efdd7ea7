import { afterAll, expect, test } from "bun:test";
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { worktreeRootsHiddenFrom } from "../../../src/provider/codex/worktree-roots.ts";

const base = await realpath(await mkdtemp(path.join(tmpdir(), "codexd-roots-")));
afterAll(() => rm(base, { recursive: true, force: true }));
const root = path.join(base, "worktrees");
const other = path.join(base, "other-fleet");
await mkdir(path.join(root, "a", "pkg"), { recursive: true });
await mkdir(other, { recursive: true });
await symlink(root, path.join(base, "root-link"));

test("roots around the cwd and roots apart from it are hidden, by their real paths", async () => {
  expect(await worktreeRootsHiddenFrom(path.join(root, "a"), [root, other])).toEqual([root, other]);
  expect(await worktreeRootsHiddenFrom(path.join(root, "a", "pkg"), [path.join(base, "root-link")]))
    .toEqual([root]);
});

test("a root that is the cwd or inside it stays visible: it holds the session's own files", async () => {
  expect(await worktreeRootsHiddenFrom(root, [root])).toEqual([]);
  expect(await worktreeRootsHiddenFrom(base, [root, other])).toEqual([]);
  expect(await worktreeRootsHiddenFrom(path.join(base, "root-link", "a"), [root])).toEqual([root]);
});

test("no roots configured: nothing hidden", async () => {
  expect(await worktreeRootsHiddenFrom(path.join(root, "a"), [])).toEqual([]);
});
