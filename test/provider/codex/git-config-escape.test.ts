/**
 * codex 0.169 runs git itself, unsandboxed, in a session's cwd when a thread starts and at its
 * first turn (`git status --porcelain --ignore-submodules=dirty`, `rev-parse`, `remote -v`), and
 * that git obeys the repository's config (codex only overrides hooks and fsmonitor). A sandboxed
 * command cannot write the cwd's `.git` (codex keeps it read-only), but a linked worktree's
 * common git folder lies elsewhere: when it is in a writable root (`/tmp` under
 * `workspace-write`, as here) a command can define a `filter.<name>.process` in the shared
 * config, name it in the worktree's `.gitattributes` and touch a tracked file; codex's own `git
 * status` at the first turn of the next session on that repository (the same worktree here; any
 * worktree of it once the shared `info/attributes` names the filter) runs the filter outside the
 * sandbox. The payload only touches a marker file. Positive control: a bare codex (thread/start
 * as codexd sent it before); through codexd's provider the git folders are read-only for
 * commands (git-dirs.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { Spec } from "../../../src/provider/spec.ts";
import { InvalidInput } from "../../../src/errors.ts";
import {
  asRecord,
  bareCodexTurn,
  LineClient,
  makeTempWorktree,
  startCodex,
} from "../../support/codex-harness.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

/**
 * Turn 1's command: from the linked worktree's `.git` file to the shared config, a filter whose
 * process touches `$MARK` (the marker's path, set below), and a `.gitattributes` naming it.
 */
function plantFilter(marker: string): string {
  return [
    `common=$(sed -n 's/^gitdir: //p' .git)/../..`,
    `printf '[filter "plant"]\\n\\tprocess = touch ${marker}\\n' >> "$common/config"`,
    `echo '* filter=plant' > .gitattributes`,
    // A tracked file with a new mtime, same size: git status reads it through the filter.
    `touch README.md`,
    `echo planted`,
  ].join("; ");
}

let model: ScriptedModel;
let outside: string;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), "codexd-git-escape-"));
  cleanup.push(() => rm(outside, { recursive: true, force: true }));
  model = await startScriptedModel({
    rules: [
      {
        marker: "PLANT-BARE",
        rounds: [[step.exec(plantFilter(path.join(outside, "bare-ran")))], [step.message("ok")]],
      },
      {
        marker: "PLANT-CODEXD",
        rounds: [[step.exec(plantFilter(path.join(outside, "codexd-ran")))], [
          step.message("ok"),
        ]],
      },
    ],
    fallback: [step.message("next turn")],
  });
});

afterAll(async () => {
  for (const clean of cleanup.reverse()) await clean();
  await model?.close();
});

/** A linked worktree (`git worktree add`) of a fresh repository under the temp folder. */
async function linkedWorktree(): Promise<{ cwd: string; commonConfig: string }> {
  const main = await makeTempWorktree();
  cleanup.push(() => main.remove());
  const cwd = path.join(outside, `linked-${crypto.randomUUID()}`);
  execFileSync("git", ["worktree", "add", "-q", "-b", path.basename(cwd), cwd], {
    cwd: main.path,
  });
  return { cwd, commonConfig: path.join(main.path, ".git", "config") };
}

describe("a sandboxed command cannot get codex's own git to run a program", () => {
  test(
    "positive control: on a bare codex a command plants a filter the next session's git runs",
    async () => {
      const { cwd, commonConfig } = await linkedWorktree();
      await using codex = await startCodex({ model, modelArgs: { requestMaxRetries: 0 } });
      const client = new LineClient(codex);
      client.onServerRequest(() => ({ decision: "accept" }));
      await client.initialize();
      const startThread = async () =>
        String(
          asRecord(
            asRecord(
              await client.request("thread/start", {
                cwd,
                approvalPolicy: "untrusted",
                sandbox: "workspace-write",
              }),
            ).thread,
          ).id,
        );
      await client.runTurn(await startThread(), "PLANT-BARE");
      expect(await readFile(commonConfig, "utf8")).toContain(`[filter "plant"]`);
      expect(existsSync(path.join(outside, "bare-ran"))).toBe(false);
      // The next session on this repository: codex's git status at its first turn runs the filter.
      await client.runTurn(await startThread(), "next session");
      expect(existsSync(path.join(outside, "bare-ran"))).toBe(true);
    },
    60_000,
  );

  test(
    "through codexd's provider the repository's git folders are read-only to commands",
    async () => {
      const { cwd, commonConfig } = await linkedWorktree();
      {
        await using codex = await startTestProvider({ model });
        const handle = await codex.provider.spawn(Spec.parse({ cwd, prompt: "PLANT-CODEXD" }));
        const events = new EventRecorder(handle);
        await events.waitFor((e) => e.type === "result", 30_000, "first result");
        const output = events.events.find((e) => e.type === "tool.result");
        expect(JSON.stringify(output)).toContain("Read-only file system");
        await handle.stop();
        const next = await codex.provider.spawn(Spec.parse({ cwd, prompt: "next session" }));
        await new EventRecorder(next).waitFor((e) => e.type === "result", 30_000, "next result");
        await next.stop();
      }
      expect(await readFile(commonConfig, "utf8")).not.toContain("plant");
      expect(existsSync(path.join(outside, "codexd-ran"))).toBe(false);
    },
    60_000,
  );
});

describe("a repository whose own git config names a program", () => {
  /** A repository whose `.git/config` defines a filter every file uses, its README racily clean. */
  async function shippedFilter(marker: string): Promise<string> {
    const repo = await makeTempWorktree();
    cleanup.push(() => repo.remove());
    execFileSync("git", ["config", "filter.shipped.process", `touch ${marker}`], {
      cwd: repo.path,
    });
    await writeFile(path.join(repo.path, ".gitattributes"), "* filter=shipped\n");
    // Same size, new mtime: git status reads the file through the filter.
    await utimes(path.join(repo.path, "README.md"), new Date(), new Date(Date.now() + 5_000));
    return repo.path;
  }

  test("positive control: a bare codex's own git runs it at the first turn", async () => {
    const marker = path.join(outside, "shipped-bare-ran");
    const cwd = await shippedFilter(marker);
    await bareCodexTurn({ model, modelArgs: { requestMaxRetries: 0 }, cwd, prompt: "first turn" });
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  test("codexd's provider refuses the session before codex sees it", async () => {
    const marker = path.join(outside, "shipped-codexd-ran");
    const cwd = await shippedFilter(marker);
    {
      await using codex = await startTestProvider({ model });
      const refused = codex.provider.spawn(Spec.parse({ cwd, prompt: "first turn" }));
      await expect(refused).rejects.toBeInstanceOf(InvalidInput);
      await expect(refused).rejects.toThrow(
        `Cannot start session: the repository at ${cwd} configures programs git runs or files ` +
          `it reads config from (filter.shipped.process = touch ${marker})`,
      );
    }
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
