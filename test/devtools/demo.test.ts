/** `npm run demo` as a newcomer runs it: one command, the whole product, exit 0. */
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "../support/codex-harness.ts";

test("codexd demo edits a file, runs a command, has a force-push denied, and exits 0", () => {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, "src/main.ts"), "demo"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    env: process.env,
  });
  expect(result.stderr).not.toContain('"level":"error"');
  expect(result.status).toBe(0);
  const out = result.stdout;
  expect(out).toMatch(/approval\s+ALLOW fileChange .*NOTES\.md/);
  expect(out).toMatch(
    /approval\s+DENY command .*git push --force.*builtin\/builtin\.git-push-force/,
  );
  expect(out).toMatch(/result\s+Done: NOTES\.md is added/);
  expect(out).toContain("Written by the codexd demo session.");
});
