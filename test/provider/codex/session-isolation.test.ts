/**
 * Against the real codex: one session's commands cannot read another session's worktree or temp
 * files. codex's `:workspace` lets a command read the whole file system; with `worktreeRoots`
 * configured the roots are denied to reads apart from the session's own cwd (worktree-roots.ts),
 * and the folder holding every session's temp folder is denied apart from the session's own
 * (plan.ts `withPrivateTmp`). Session B's command reads session A's worktree and temp folder.
 * Positive control: without `worktreeRoots` B reads A's worktree.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { SessionTmp } from "../../../src/provider/codex/session-tmp.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";
import { makeCodexHome, makeRepository } from "../../support/codex-harness.ts";
import { readDeniedPaths } from "../../../src/provider/codex/read-denied.ts";

/** Session B's command: A's worktree and temp files, then its own cwd, temp folder and git. */
const READ_NEIGHBOUR = [
  `cat ../a/secret.txt`,
  `ls ..`,
  `cat "$TMPDIR"/../*/tmp-secret.txt`,
  `echo own-tmp > "$TMPDIR/own" && cat "$TMPDIR/own"`,
  `echo own-cwd > own.txt && cat own.txt`,
  `git status --short`,
].join("; ");

let model: ScriptedModel;
let outside: string;

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), "codexd-isolation-"));
  model = await startScriptedModel({
    rules: [
      { marker: "READ-NEIGHBOUR", rounds: [[step.exec(READ_NEIGHBOUR)], [step.message("read")]] },
    ],
    fallback: [step.message("hello")],
  });
});

afterAll(async () => {
  await model?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

/**
 * Session A (a secret in its worktree and its temp folder) stays open while session B, in the
 * same root (its cwd spelled through `viaLink` when set), runs READ_NEIGHBOUR. B's output.
 */
async function readNeighbour(
  options: { isolate: boolean; viaLink?: boolean },
): Promise<{ output: string; ownCwd: string }> {
  const root = await mkdtemp(path.join(outside, "root-"));
  const a = await makeRepository(path.join(root, "a"));
  await writeFile(path.join(a, "secret.txt"), "SECRET-OF-A\n");
  const b = await makeRepository(path.join(root, "b"));
  let cwdOfB = b;
  if (options.viaLink) {
    cwdOfB = path.join(outside, `link-${path.basename(root)}`);
    await symlink(b, cwdOfB);
  }
  await using sessionTmp = new SessionTmp();
  await using codex = await startTestProvider({
    model,
    provider: { sessionTmp, ...(options.isolate && { worktreeRoots: [root] }) },
  });
  const sessionA = await codex.provider.spawn(Spec.parse({ cwd: a, prompt: "session A" }));
  await new EventRecorder(sessionA).waitFor((e) => e.type === "result", 30_000, "A's result");
  const tmpOfA = await sessionTmp.ensure(sessionA.sessionId);
  await writeFile(path.join(tmpOfA, "tmp-secret.txt"), "TMP-SECRET-OF-A\n");

  const sessionB = await codex.provider.spawn(
    Spec.parse({ cwd: cwdOfB, prompt: "READ-NEIGHBOUR" }),
  );
  const events = new EventRecorder(sessionB);
  await events.waitFor((e) => e.type === "result", 30_000, "B's result");
  const output = String(events.events.find((e) => e.type === "tool.result")?.output);
  // The files B looked for are there, where its command looked (outside any sandbox).
  expect(await readFile(path.join(b, "..", "a", "secret.txt"), "utf8")).toBe("SECRET-OF-A\n");
  expect(await readdir(sessionTmp.root)).toContain(sessionA.sessionId);
  await sessionB.stop();
  await sessionA.stop();
  return { output, ownCwd: b };
}

describe("a session's commands read no other session's files (real codex)", () => {
  test("positive control: without worktreeRoots, B reads A's worktree", async () => {
    const { output } = await readNeighbour({ isolate: false });
    expect(output).toContain("SECRET-OF-A");
    expect(output).not.toContain("TMP-SECRET-OF-A"); // temp folders are private either way
  }, 60_000);

  test(
    "with worktreeRoots, B sees neither A's worktree nor A's temp folder; its own work goes on",
    async () => {
      const { output, ownCwd } = await readNeighbour({ isolate: true });
      expect(output).not.toContain("SECRET-OF-A");
      expect(output).toContain("cannot open directory '..': Permission denied");
      expect(output).toContain("own-tmp");
      expect(output).toContain("own-cwd");
      expect(output).toContain("?? own.txt"); // git works in its own repository
      expect(existsSync(path.join(ownCwd, "own.txt"))).toBe(true);
    },
    60_000,
  );

  test("the same when B's cwd is spelled through a symlink", async () => {
    const { output, ownCwd } = await readNeighbour({ isolate: true, viaLink: true });
    expect(output).not.toContain("SECRET-OF-A");
    expect(output).toContain("own-cwd");
    expect(existsSync(path.join(ownCwd, "own.txt"))).toBe(true);
  }, 60_000);
});

describe("a session's commands read no other session's history in codex's home (real codex)", () => {
  /**
   * Session A's prompt carries a secret; session B's command searches codex's home for it (an
   * agent finds that home with `find / -name 'state_*.sqlite'`). B's output, and what the home holds.
   */
  async function searchHome(listHome: boolean): Promise<{ output: string; stored: boolean }> {
    const codexHome = await makeCodexHome();
    const userHome = path.join(codexHome, "user-home");
    // Each call searches its own home: a rule per call (the first matching rule answers).
    const marker = `SEARCH-HOME-${listHome ? "listed" : "fixed"}`;
    const search =
      `grep -a -r -o -h 'PROMPT-SECRET-[0-9]*' ${codexHome} 2>/dev/null | sort -u; true`;
    model.addRule({ marker, rounds: [[step.exec(search)], [step.message("done")]] });
    await using codex = await startTestProvider({
      model,
      codexHome,
      provider: {
        // As create-pool.ts wires it; without `list`, only the logins and rollouts are denied.
        readDenied: () =>
          readDeniedPaths({
            home: userHome,
            codexHome,
            exists: existsSync,
            ...(listHome && { list: (dir: string) => readdirSync(dir) }),
          }),
      },
    });
    const a = await makeRepository(path.join(await mkdtemp(path.join(outside, "home-")), "a"));
    const b = await makeRepository(path.join(path.dirname(a), "b"));
    const sessionA = await codex.provider.spawn(
      Spec.parse({ cwd: a, prompt: "PROMPT-SECRET-4242 is the customer's" }),
    );
    await new EventRecorder(sessionA).waitFor((e) => e.type === "result", 30_000, "A's result");
    await sessionA.stop();
    const sessionB = await codex.provider.spawn(Spec.parse({ cwd: b, prompt: marker }));
    const events = new EventRecorder(sessionB);
    await events.waitFor((e) => e.type === "result", 30_000, "B's result");
    await sessionB.stop();
    const stored = readdirSync(codexHome).some((name) =>
      name.endsWith(".sqlite-wal") &&
      readFileSync(path.join(codexHome, name), "latin1").includes("PROMPT-SECRET-4242")
    );
    return { output: String(events.events.find((e) => e.type === "tool.result")?.output), stored };
  }

  test(
    "positive control: with only the logins and rollouts denied, B finds A's prompt",
    async () => {
      const { output, stored } = await searchHome(false);
      expect(stored).toBe(true);
      expect(output).toContain("PROMPT-SECRET-4242");
    },
    60_000,
  );

  test("everything in the home but its tmp is denied: B finds nothing", async () => {
    const { output, stored } = await searchHome(true);
    expect(stored).toBe(true); // codex keeps it there all the same
    expect(output).not.toContain("PROMPT-SECRET-4242");
  }, 60_000);
});
