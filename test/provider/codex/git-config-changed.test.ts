/**
 * codex runs git itself, outside the sandbox, at a thread's start, its first turn and every
 * `thread/resume` (a move to another child in a rolling restart or a recycle is one), and that
 * git obeys the repository's config. codexd refuses a repository whose config names a program
 * (git-config-escape.test.ts) and keeps the session's own git folders read-only; this file is
 * about the config changing after that check:
 * - another session whose cwd holds the repository can write its `.git/config` (only the
 *   session's own git folders are read-only to its commands): such sessions may not live at
 *   once (nested-sessions.ts), and codexd checks again before a move and ends the session with
 *   `unsafe_repository` instead of resuming it;
 * - an `include.path` makes git read config from a file in the worktree, which the session's
 *   own commands may write: such a repository is refused at the start.
 * Positive controls: a bare codex obeys both; the payloads only touch a marker file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CodexdApiError } from "../../../src/client.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import {
  asRecord,
  bareCodexTurn,
  LineClient,
  makeCodexHome,
  makeRepository,
  startCodex,
} from "../../support/codex-harness.ts";
import { startDaemonInProcess } from "../../support/daemon-in-process.ts";
import { eventually } from "../../support/eventually.ts";

let model: ScriptedModel;
let outside: string;

/** A command that defines a filter running `touch marker` in `configFile`, used by every file. */
function plantFilter(configFile: string, repo: string, marker: string): string {
  return [
    `printf '[filter "plant"]\\n\\tprocess = touch ${marker}\\n' >> ${configFile}`,
    `echo '* filter=plant' > ${repo}/.gitattributes`,
    // A tracked file with a new mtime, same size: git status reads it through the filter.
    `touch ${repo}/README.md`,
    `echo planted`,
  ].join("; ");
}

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), "codexd-git-changed-"));
  model = await startScriptedModel({
    rules: [
      {
        // Session A, whose cwd holds B's repository: writes B's git config.
        marker: "PLANT-NEIGHBOUR",
        rounds: [
          [step.exec(plantFilter("repo/.git/config", "repo", path.join(outside, "moved-ran")))],
          [step.message("ok")],
        ],
      },
      {
        // In a repository whose config includes ../team.gitconfig: the session writes that file.
        marker: "PLANT-INCLUDE",
        rounds: [
          [step.exec(plantFilter("team.gitconfig", ".", path.join(outside, "include-ran")))],
          [step.message("ok")],
        ],
      },
    ],
    fallback: [step.message("next turn")],
  });
});

afterAll(async () => {
  await model?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

const NO_RETRIES = { requestMaxRetries: 0 };

/** A line client on `codex`, past `initialize`. */
async function initialized(
  codex: ConstructorParameters<typeof LineClient>[0],
): Promise<LineClient> {
  const client = new LineClient(codex);
  await client.initialize();
  return client;
}

/** Whether a plain `git status` in `repo` (the test's own, unsandboxed) ran the planted filter. */
function plainGitStatusRuns(repo: string, marker: string): boolean {
  try {
    execFileSync("git", ["status", "--porcelain"], { cwd: repo, stdio: "ignore" });
  } catch {
    // `touch` speaks no filter protocol: git fails after running it.
  }
  return existsSync(marker);
}

describe("a repository whose git config changed after the session's start", () => {
  test("positive control: a bare codex resuming the thread runs the filter", async () => {
    const repo = await makeRepository(path.join(outside, "bare-resume"));
    const marker = path.join(outside, "bare-resume-ran");
    const codexHome = await makeCodexHome();
    let threadId: string;
    {
      await using codex = await startCodex({ model, codexHome, modelArgs: NO_RETRIES });
      const client = await initialized(codex);
      const started = asRecord(
        await client.request("thread/start", { cwd: repo, sandbox: "workspace-write" }),
      );
      threadId = String(asRecord(started.thread).id);
      await client.runTurn(threadId, "first turn");
    }
    execFileSync("git", ["config", "filter.plant.process", `touch ${marker}`], { cwd: repo });
    await writeFile(path.join(repo, ".gitattributes"), "* filter=plant\n");
    await utimes(path.join(repo, "README.md"), new Date(), new Date(Date.now() + 5_000));
    expect(existsSync(marker)).toBe(false);
    {
      await using codex = await startCodex({ model, codexHome, modelArgs: NO_RETRIES });
      const client = await initialized(codex);
      await client.request("thread/resume", { threadId, cwd: repo });
      await client.runTurn(threadId, "after the resume");
    }
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  test(
    "through codexd: a session holding the repository writes it, so the two may not live at once; " +
      "a change made meanwhile ends the session at the rolling restart instead of moving it",
    async () => {
      const parent = path.join(outside, "neighbours");
      const repo = await makeRepository(path.join(parent, "repo"));
      const config = path.join(repo, ".git", "config");
      const marker = path.join(outside, "moved-ran");
      await using d = await startDaemonInProcess({
        model,
        configure: (config) => void (config.codex.pool = 1),
      });
      const idle = (id: string) =>
        eventually(
          `${id} idle`,
          async () => (await d.client.get(id)).status === "idle" || undefined,
        );
      const refusal = (spec: { prompt: string; cwd: string }) =>
        d.client.spawn(spec).then(() => undefined, (error: unknown) => error);

      // Alone, a session in the folder holding the repository writes its git config (only its
      // own git folders are read-only); the repository's next session is refused for it.
      const a = (await d.client.spawn({ prompt: "PLANT-NEIGHBOUR", cwd: parent })).sessionId;
      await idle(a);
      expect(await readFile(config, "utf8")).toContain("plant");
      await d.client.stop(a);
      expect(await refusal({ prompt: "session B", cwd: repo })).toMatchObject({
        status: 400,
        code: "invalid_input",
      });
      execFileSync("git", ["config", "--remove-section", "filter.plant"], { cwd: repo });

      // Both at once: the second is refused, whichever it is.
      const b = (await d.client.spawn({ prompt: "session B", cwd: repo })).sessionId;
      await idle(b);
      const nested = await refusal({ prompt: "PLANT-NEIGHBOUR", cwd: parent });
      expect(nested).toBeInstanceOf(CodexdApiError);
      expect(nested).toMatchObject({ status: 400, code: "invalid_input" });
      expect(String((nested as Error).message)).toContain(
        `and the cwd of live session ${b} (${repo}) nest in different repositories`,
      );

      // Changed under the live session all the same (by anything but its commands): the move
      // to the new child checks again and ends the session instead.
      execFileSync("git", ["config", "filter.plant.process", `touch ${marker}`], { cwd: repo });
      await d.client.restartCodex();
      const ended = await eventually("B ended", async () => {
        const events = await d.client.storedEvents(b, { after: 0, limit: 1_000 });
        return events.find((e) => e.type === "error");
      }, { limitMs: 30_000 });
      expect(ended).toMatchObject({ type: "error", code: "unsafe_repository" });
      expect(JSON.stringify(ended)).toContain(
        `Cannot move session: the repository at ${repo} configures programs git runs or files ` +
          `it reads config from (filter.plant.process = touch ${marker})`,
      );
      expect((await d.client.get(b)).status).toBe("failed");
      await eventually("the child replaced", async () => {
        const children = (await d.client.health()).codex.children!;
        return children.length === 1 && children[0]!.state === "ready" || undefined;
      }, { limitMs: 30_000 });
      // Resuming it is refused the same way while the config names the program.
      const resumed = await d.client.resume(b, { prompt: "again", cwd: repo }).catch((e) => e);
      expect(resumed).toBeInstanceOf(CodexdApiError);
      expect(resumed).toMatchObject({ status: 400, code: "invalid_input" });
      expect(existsSync(marker)).toBe(false);
      // The plant was real: the test's own git status runs it.
      expect(plainGitStatusRuns(repo, marker)).toBe(true);
    },
    90_000,
  );
});

describe("a repository whose git config includes a file of the worktree", () => {
  async function includingRepo(name: string): Promise<string> {
    const repo = await makeRepository(path.join(outside, name));
    execFileSync("git", ["config", "include.path", "../team.gitconfig"], { cwd: repo });
    await writeFile(path.join(repo, "team.gitconfig"), "[core]\n\tautocrlf = false\n");
    return repo;
  }

  test(
    "positive control: on a bare codex the session writes it; the next thread runs it",
    async () => {
      const repo = await includingRepo("bare-include");
      const marker = path.join(outside, "include-ran");
      await bareCodexTurn({
        model,
        modelArgs: NO_RETRIES,
        cwd: repo,
        prompt: "PLANT-INCLUDE",
      });
      expect(await readFile(path.join(repo, "team.gitconfig"), "utf8")).toContain("plant");
      expect(existsSync(marker)).toBe(false);
      await bareCodexTurn({
        model,
        modelArgs: NO_RETRIES,
        cwd: repo,
        prompt: "next",
      });
      expect(existsSync(marker)).toBe(true);
    },
    60_000,
  );

  test("codexd refuses the session before codex sees it", async () => {
    const repo = await includingRepo("codexd-include");
    await using d = await startDaemonInProcess({ model });
    const refused = await d.client.spawn({ prompt: "PLANT-INCLUDE", cwd: repo }).catch((e) => e);
    expect(refused).toBeInstanceOf(CodexdApiError);
    expect(refused).toMatchObject({ status: 400, code: "invalid_input" });
    expect(String(refused.message)).toContain("(include.path = ../team.gitconfig)");
    expect(await readFile(path.join(repo, "team.gitconfig"), "utf8")).not.toContain("plant");
  }, 60_000);
});
