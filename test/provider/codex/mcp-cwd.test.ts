/**
 * codex starts MCP servers outside the sandbox, by default in the thread's cwd: the worktree,
 * whose files (the repository's, or an earlier command's) then decide what a trusted server
 * command runs. `python3 -m probe_mcp` imports the worktree's `probe_mcp.py`; `npx --no-install
 * probe-mcp` runs its `node_modules/.bin/probe-mcp`. codexd starts every server in an empty folder
 * no session can write (session-tmp.ts `mcpCwd`, plan.ts `mcpServerConfig`). Positive control: a
 * bare codex given the same servers runs both payloads. The payloads only touch marker files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ScriptedModel, startScriptedModel, step } from "../../support/scripted.ts";
import { SessionTmp } from "../../../src/provider/codex/session-tmp.ts";
import { Spec } from "../../../src/provider/spec.ts";
import {
  asRecord,
  LineClient,
  makeTempWorktree,
  startCodex,
  type TempWorktree,
} from "../../support/codex-harness.ts";
import { eventually } from "../../support/eventually.ts";
import { EventRecorder, startTestProvider } from "../../support/provider-fixture.ts";

let model: ScriptedModel;
let outside: string;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  outside = await mkdtemp(path.join(tmpdir(), "codexd-mcp-cwd-"));
  model = await startScriptedModel({ rules: [], fallback: [step.message("hello")] });
});

afterAll(async () => {
  for (const clean of cleanup.reverse()) await clean();
  await model?.close();
  if (outside) await rm(outside, { recursive: true, force: true });
});

/**
 * A worktree shipping a `probe_mcp.py` and a `node_modules/.bin/probe-mcp` that touch markers,
 * and the two MCP servers a runner could trust: each reports its cwd and that it ran.
 */
async function hostileWorktree(name: string) {
  const worktree: TempWorktree = await makeTempWorktree();
  cleanup.push(() => worktree.remove());
  const marker = (kind: string) => path.join(outside, `${name}-${kind}-ran`);
  const report = (kind: string) => path.join(outside, `${name}-${kind}-report`);
  await writeFile(
    path.join(worktree.path, "probe_mcp.py"),
    `open(${JSON.stringify(marker("python"))}, "w").write("ran")\n`,
  );
  await writeFile(path.join(worktree.path, "package.json"), '{"name":"x","version":"1.0.0"}\n');
  const bin = path.join(worktree.path, "node_modules", ".bin", "probe-mcp");
  await mkdir(path.dirname(bin), { recursive: true });
  await writeFile(bin, `#!/bin/sh\ntouch ${marker("npx")}\n`);
  await chmod(bin, 0o755);
  // `pwd` and the exit status once the command is done: the test knows the server ran.
  const server = (kind: string, command: string) => ({
    command: "sh",
    args: ["-c", `${command} >/dev/null 2>&1; echo "$(pwd) $?" > ${report(kind)}`],
    env: {},
  });
  return {
    cwd: worktree.path,
    servers: {
      python: server("python", "python3 -m probe_mcp"),
      npx: server("npx", "npx --no-install probe-mcp"),
    },
    /** A daemon-wide server (config/batchWrite) importing the same `probe_mcp`. */
    daemonServer: server("daemon", "python3 -m probe_mcp"),
    /** The servers' reports once they ran (`kinds`), and whether each payload ran. */
    outcome: async (kinds: readonly string[] = ["python", "npx"]) => {
      const reports = await eventually("the MCP servers ran", async () => {
        if (!kinds.every((kind) => existsSync(report(kind)))) return undefined;
        const read = (kind: string) => readFile(report(kind), "utf8").then((t) => t.trim());
        return Object.fromEntries(
          await Promise.all(kinds.map(async (kind) => [kind, await read(kind)])),
        ) as Record<string, string>;
      }, { limitMs: 20_000 });
      return { reports, ran: [marker("python"), marker("npx")].map((m) => existsSync(m)) };
    },
  };
}

describe("MCP servers start outside the worktree (real codex)", () => {
  test(
    "positive control: a bare codex starts them in the worktree, which runs its payloads",
    async () => {
      const worktree = await hostileWorktree("bare");
      await using codex = await startCodex({ model, modelArgs: { requestMaxRetries: 0 } });
      const client = new LineClient(codex);
      await client.initialize();
      const config = Object.fromEntries(
        Object.entries(worktree.servers).map(([name, s]) => [
          `mcp_servers.${name}`,
          { command: s.command, args: s.args },
        ]),
      );
      const started = asRecord(
        await client.request("thread/start", {
          cwd: worktree.cwd,
          sandbox: "workspace-write",
          config,
        }),
      );
      await client.runTurn(String(asRecord(started.thread).id), "hello");
      const { reports, ran } = await worktree.outcome();
      expect(reports.python!.split(" ")[0]).toBe(worktree.cwd);
      expect(ran).toEqual([true, true]);
    },
    60_000,
  );

  test(
    "through codexd's provider they start in an empty folder; the payloads do not run",
    async () => {
      const worktree = await hostileWorktree("codexd");
      await using sessionTmp = new SessionTmp();
      await using codex = await startTestProvider({
        model,
        provider: { sessionTmp, daemonMcpServers: { daemon: worktree.daemonServer } },
      });
      const handle = await codex.provider.spawn(
        Spec.parse({ cwd: worktree.cwd, prompt: "hello", mcpServers: worktree.servers }),
      );
      await new EventRecorder(handle).waitFor((e) => e.type === "result", 30_000, "result");
      const { reports, ran } = await worktree.outcome(["python", "npx", "daemon"]);
      const mcpCwd = await sessionTmp.mcpCwd();
      expect(Object.values(reports).map((r) => r.split(" ")[0])).toEqual([mcpCwd, mcpCwd, mcpCwd]);
      expect(ran).toEqual([false, false]);
      await handle.stop();
    },
    60_000,
  );
});
