import { describe, expect, test } from "bun:test";
import { programEntries } from "../../../src/provider/codex/repo-git-programs.ts";

/** `git config --list --show-scope -z` output for `[scope, key, value]` entries. */
function listing(entries: Array<[string, string, string]>): string {
  return entries.map(([scope, key, value]) => `${scope}\0${key}\n${value}\0`).join("");
}

describe("programEntries", () => {
  test("every family whose value git runs, in the repository's scopes", () => {
    const found = programEntries(listing([
      ["local", "filter.evil.process", "touch /tmp/x"],
      ["local", "filter.evil.clean", "sh x"],
      ["worktree", "diff.external", "x"],
      ["local", "diff.bin.textconv", "x"],
      ["local", "merge.ours.driver", "x"],
      ["local", "core.pager", "x"],
      ["local", "core.sshcommand", "x"],
      ["local", "credential.helper", "!x"],
      ["local", "credential.https://h.example.helper", "!x"],
      ["local", "gpg.ssh.program", "x"],
      ["local", "alias.st", "!x"],
      ["local", "remote.origin.uploadpack", "x"],
      ["local", "url.ext::sh -c x.insteadof", "https://h.example/"],
      // Config read from a file the worktree's commands may write later.
      ["local", "include.path", "../team.gitconfig"],
      ["worktree", "includeif.gitdir:/w/.path", "/w/x.gitconfig"],
    ]));
    expect(found).toHaveLength(15);
    expect(found[0]).toBe("filter.evil.process = touch /tmp/x");
  });

  test("the operator's scopes, benign keys and git-lfs's own filter pass", () => {
    expect(programEntries(listing([
      ["global", "filter.evil.process", "x"],
      ["system", "core.pager", "x"],
      ["command", "core.fsmonitor", "false"],
      ["local", "core.repositoryformatversion", "0"],
      ["local", "core.hookspath", ".husky"], // codex runs its git with hooksPath=/dev/null
      ["local", "remote.origin.url", "https://h.example/r.git"],
      ["local", "branch.main.merge", "refs/heads/main"],
      ["local", "filter.lfs.process", "git-lfs filter-process"],
      ["local", "filter.lfs.clean", "git-lfs clean -- %f"],
      ["local", "filter.lfs.required", "true"],
    ]))).toEqual([]);
    // git-lfs's filter name with another program is refused.
    expect(programEntries(listing([["local", "filter.lfs.process", "touch /tmp/x"]]))).toEqual([
      "filter.lfs.process = touch /tmp/x",
    ]);
  });
});
