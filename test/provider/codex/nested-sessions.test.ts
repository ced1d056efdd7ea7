import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { InvalidInput } from "../../../src/errors.ts";
import { refuseNestedSessions } from "../../../src/provider/codex/nested-sessions.ts";

const base = await realpath(await mkdtemp(path.join(tmpdir(), "codexd-nested-")));
afterAll(() => rm(base, { recursive: true, force: true }));
const workspace = path.join(base, "workspace"); // no repository
const mono = path.join(workspace, "mono"); // a repository
const pkg = path.join(mono, "packages", "pkg"); // a folder of it
const vendored = path.join(mono, "vendor", "lib"); // another repository inside it
const apart = path.join(base, "apart");
for (const dir of [pkg, vendored, apart]) await mkdir(dir, { recursive: true });
for (const repo of [mono, vendored]) execFileSync("git", ["init", "-q"], { cwd: repo });
await symlink(mono, path.join(base, "mono-link"));

const live = (...cwds: string[]) => cwds.map((cwd, i) => ({ sessionId: `ses_${i}`, cwd }));

describe("refuseNestedSessions", () => {
  test("the same folder, folders apart, and one repository's root and package may live at once", async () => {
    await refuseNestedSessions(mono, live(mono, apart));
    await refuseNestedSessions(pkg, live(mono));
    await refuseNestedSessions(mono, live(pkg));
    await refuseNestedSessions(path.join(base, "mono-link", "packages", "pkg"), live(mono));
  });

  test("a folder holding another session's repository is refused, in either order", async () => {
    for (const [cwd, other] of [[workspace, mono], [mono, workspace], [vendored, mono]]) {
      const refused = refuseNestedSessions(cwd!, live(other!));
      await expect(refused).rejects.toBeInstanceOf(InvalidInput);
      await expect(refused).rejects.toThrow(
        `Cannot start session: ${cwd} and the cwd of live session ses_0 (${other}) nest in ` +
          "different repositories",
      );
    }
  });

  test("spellings through a symlink are resolved", async () => {
    await expect(refuseNestedSessions(workspace, live(path.join(base, "mono-link"))))
      .rejects.toBeInstanceOf(InvalidInput);
  });
});
