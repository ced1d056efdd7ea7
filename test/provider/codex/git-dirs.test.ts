import { afterEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { repositoryGitDirs } from "../../../src/provider/codex/git-dirs.ts";

let root: string;

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  root = await mkdtemp(path.join(tmpdir(), "codexd-git-dirs-"));
  return root;
}

describe("repositoryGitDirs (read from the files, no git run)", () => {
  test("a `.git` folder at or above the cwd", async () => {
    const repo = await scratch();
    await mkdir(path.join(repo, ".git"));
    await mkdir(path.join(repo, "packages", "app"), { recursive: true });
    expect(await repositoryGitDirs(repo)).toEqual([path.join(repo, ".git")]);
    expect(await repositoryGitDirs(path.join(repo, "packages", "app"))).toEqual([
      path.join(repo, ".git"),
    ]);
  });

  test("a linked worktree: the folder its `.git` file names and that folder's common folder", async () => {
    const dir = await scratch();
    const gitDir = path.join(dir, "main", ".git", "worktrees", "wt");
    await mkdir(gitDir, { recursive: true });
    await writeFile(path.join(gitDir, "commondir"), "../..\n");
    await mkdir(path.join(dir, "wt"));
    await writeFile(path.join(dir, "wt", ".git"), `gitdir: ${gitDir}\n`);
    expect(await repositoryGitDirs(path.join(dir, "wt"))).toEqual([
      gitDir,
      path.join(dir, "main", ".git"),
    ]);
  });

  test("a relative `gitdir:` resolves from the `.git` file's folder; no repository, no folders", async () => {
    const dir = await scratch();
    await mkdir(path.join(dir, "wt"));
    await mkdir(path.join(dir, "gitdir"));
    await writeFile(path.join(dir, "wt", ".git"), "gitdir: ../gitdir\n");
    expect(await repositoryGitDirs(path.join(dir, "wt"))).toEqual([path.join(dir, "gitdir")]);
    await mkdir(path.join(dir, "plain"));
    expect(await repositoryGitDirs(path.join(dir, "plain"))).toEqual(
      await repositoryGitDirs(dir),
    );
  });

  test("by real paths: a cwd through a symlink; a named folder that does not exist is kept", async () => {
    const dir = await scratch();
    await mkdir(path.join(dir, "repo", ".git"), { recursive: true });
    await symlink(path.join(dir, "repo"), path.join(dir, "link"));
    expect(await repositoryGitDirs(path.join(dir, "link"))).toEqual([
      path.join(dir, "repo", ".git"),
    ]);
    await mkdir(path.join(dir, "wt"));
    await writeFile(path.join(dir, "wt", ".git"), "gitdir: ../missing\n");
    expect(await repositoryGitDirs(path.join(dir, "wt"))).toEqual([path.join(dir, "missing")]);
  });
});
