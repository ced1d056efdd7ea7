/**
 * The same sources run under Deno: test/fixtures/deno-smoke.ts, run by `deno run`, starts the
 * pinned codex through the provider stack (binary resolution, CodexProcess, JsonRpcConnection,
 * CodexProvider) against a scripted model served from this (Bun) process, and runs one turn.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type ScriptedModel, startScriptedModel, step } from "../src/devtools/scripted-model.ts";
import {
  codexUnderTest,
  makeCodexHome,
  makeTempWorktree,
  REPO_ROOT,
  type TempWorktree,
} from "./support/codex-harness.ts";

const SmokeOutput = z.object({
  runtime: z.string(),
  pid: z.number().int().positive(),
  version: z.string(),
  threadId: z.string(),
  terminal: z.looseObject({ type: z.string(), text: z.string().optional() }),
  eventTypes: z.array(z.string()),
  afterKill: z.looseObject({ type: z.string(), code: z.string().optional() }).optional(),
});

let model: ScriptedModel;
let worktree: TempWorktree;
let codexHome: string;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "DENO-SMOKE", rounds: [[step.message("hello from deno", { deltas: 2 })]] }],
  });
  worktree = await makeTempWorktree();
  codexHome = await makeCodexHome();
});

afterAll(async () => {
  await model?.close();
  await worktree?.remove();
  if (codexHome) await rm(codexHome, { recursive: true, force: true, maxRetries: 3 });
});

/** Runs the fixture under `deno run -A`; its last stdout line is its JSON report. */
async function runUnderDeno(input: { prompt: string; kill?: boolean }) {
  const userHome = path.join(codexHome, "user-home");
  await mkdir(userHome, { recursive: true });
  const env = {
    ...process.env,
    CODEXD_SMOKE: JSON.stringify({
      codexHome,
      userHome,
      cwd: worktree.path,
      repoRoot: REPO_ROOT,
      codexArgs: model.codexArgs({ requestMaxRetries: 0 }),
      ...input,
    }),
  };
  const { code, stdout, stderr } = await new Promise<
    { code: number | null; stdout: string; stderr: string }
  >((resolve, reject) => {
    const child = spawn("node", [
      path.join("scripts", "deno.mjs"),
      "run",
      "-A",
      "test/fixtures/deno-smoke.ts",
    ], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.once("error", reject);
    child.once("close", (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
  });
  // stderr rides along so that a failure shows deno's own message.
  expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  const output = SmokeOutput.parse(JSON.parse(stdout.trim().split("\n").at(-1) ?? ""));
  expect(output.runtime).toStartWith("deno ");
  // codex really asked this process's model, on that thread.
  expect(model.requests.some((r) => r.conversation === output.threadId)).toBe(true);
  // The child was reaped before deno exited: no codex left behind.
  expect(() => process.kill(output.pid, 0)).toThrow();
  return output;
}

test("under deno run, the provider stack does the codex handshake and one turn", async () => {
  const output = await runUnderDeno({ prompt: "DENO-SMOKE say hello" });
  expect(output.version).toBe((await codexUnderTest()).version);
  expect(output.threadId).toMatch(/^[0-9a-f-]{36}$/);
  expect(output.terminal).toMatchObject({ type: "result", text: "hello from deno" });
  expect(output.eventTypes).toEqual(expect.arrayContaining(["session.started", "turn.started"]));
  expect(output.eventTypes.filter((t) => t === "text.delta")).toHaveLength(2);
  expect(output.eventTypes.at(-1)).toBe("result");
});

test("under deno run, a codex killed with SIGKILL ends the session with app_server_crashed", async () => {
  const output = await runUnderDeno({ prompt: "DENO-SMOKE then die", kill: true });
  expect(output.terminal).toMatchObject({ type: "result", text: "hello from deno" });
  expect(output.afterKill).toMatchObject({ type: "error", code: "app_server_crashed" });
});
