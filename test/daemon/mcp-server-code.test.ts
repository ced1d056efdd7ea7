/**
 * A spec's MCP server may not run code from the session's worktree (src/approval/mcp-server-code.ts),
 * against the real codex. codex starts MCP servers outside the sandbox: positive control, the
 * provider below the spec guard starts `python3 <worktree>/srv.py` and the script, which the
 * repository shipped (or a command could have rewritten), writes a marker in a folder no sandboxed
 * command can write. Through the daemon the same spec is refused before codex sees it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../support/scripted.ts";
import { makeTempWorktree, REPO_ROOT, type TempWorktree } from "../support/codex-harness.ts";
import { type InProcessDaemon, startDaemonInProcess } from "../support/daemon-in-process.ts";
import { EventRecorder, startTestProvider } from "../support/provider-fixture.ts";
import { eventually } from "../support/eventually.ts";
import { outsideSandboxDir } from "../support/outside-dir.ts";
import { apiError } from "../support/session-events.ts";
import { Spec } from "../../src/provider/spec.ts";

const OUTSIDE = outsideSandboxDir("mcp-server-code-");
const policies = mkdtempSync(path.join(tmpdir(), "codexd-mcp-code-policies-"));
let model: ScriptedModel;
let worktree: TempWorktree;
let daemon: InProcessDaemon;

/** The repository's own MCP server: it only leaves a marker saying it ran, and where. */
const marker = (name: string) => path.join(OUTSIDE, name);
function repoServer(name: string) {
  const script = path.join(worktree.path, `${name}.py`);
  writeFileSync(script, `open(${JSON.stringify(marker(name))}, "w").write("ran")\n`);
  return { command: "python3", args: [script] };
}

beforeAll(async () => {
  // A fleet whose policy lets specs bring MCP servers (default.yaml does not).
  cpSync(path.join(REPO_ROOT, "policies"), policies, { recursive: true });
  const text = readFileSync(path.join(policies, "default.yaml"), "utf8");
  writeFileSync(
    path.join(policies, "servers.yaml"),
    text.replace("name: default", "name: servers").replace(
      "  mcpServers: deny",
      "  mcpServers: allow",
    ),
  );
  model = await startScriptedModel({ rules: [], fallback: [step.message("hello")] });
  worktree = await makeTempWorktree();
  daemon = await startDaemonInProcess({ model, policiesDir: policies });
});

afterAll(async () => {
  await daemon?.daemon.stop();
  await worktree?.remove();
  await model?.close();
  rmSync(OUTSIDE, { recursive: true, force: true });
  rmSync(policies, { recursive: true, force: true });
});

test("positive control: below the spec guard, codex runs the worktree's server unsandboxed", async () => {
  await using codex = await startTestProvider({ model });
  const handle = await codex.provider.spawn(
    Spec.parse({
      cwd: worktree.path,
      prompt: "hello",
      mcpServers: { repo: repoServer("control") },
    }),
  );
  await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
  await eventually("the server's marker", () => existsSync(marker("control")) || undefined);
  await handle.stop();
});

test("through the daemon the spec is refused, naming the argument, and nothing runs", async () => {
  const error = await apiError(daemon.client.spawn({
    prompt: "hello",
    cwd: worktree.path,
    policy: "servers",
    mcpServers: { repo: repoServer("daemon") },
  }));
  expect(error.status).toBe(400);
  expect(error.details).toEqual([
    expect.objectContaining({ path: "mcpServers.repo.args.0", rule: "mcpServers.writable-code" }),
  ]);
  expect(await daemon.client.list()).toEqual([]);
  expect(existsSync(marker("daemon"))).toBe(false);
});

test("control: a server installed outside the worktree is accepted under the same policy", async () => {
  const { sessionId } = await daemon.client.spawn({
    prompt: "hello",
    cwd: worktree.path,
    policy: "servers",
    mcpServers: { docs: { command: "python3", args: ["-c", "pass"] } },
  });
  expect(sessionId).toMatch(/^ses_/);
  await daemon.client.stop(sessionId);
});
