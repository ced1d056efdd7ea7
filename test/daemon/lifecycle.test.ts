/**
 * The daemon owns what it opens: its signal handlers live from start to stop, a second stop is a
 * no-op, and a start that fails half-way closes what it had opened (codex children, database,
 * pid ledger). In-process, against the real codex and the scripted model.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import process from "node:process";
import { loadConfig } from "../../src/daemon/config.ts";
import { DAEMON_SIGNALS, startDaemon } from "../../src/daemon/daemon.ts";
import { type ScriptedModel, startScriptedModel, step } from "../../src/devtools/scripted-model.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { REPO_ROOT } from "../support/codex-harness.ts";
import { makeStateDir } from "../support/daemon-process.ts";
import { startDaemonInProcess } from "../support/daemon-in-process.ts";
import { memoryLogger } from "../support/memory-logger.ts";

let model: ScriptedModel;

beforeAll(async () => {
  model = await startScriptedModel({
    rules: [{ marker: "GREET", rounds: [[step.message("hello")]] }],
  });
});
afterAll(() => model?.close());

function signalListeners(): Record<string, number> {
  return Object.fromEntries(DAEMON_SIGNALS.map((s) => [s, process.listenerCount(s)]));
}

/**
 * Processes of this user whose environment names `codexHome` as CODEX_HOME, as "pid ppid
 * command". codex's own short-lived helpers inherit it too (at start-up it runs `lsb_release -a`
 * and `git ls-remote` for its plugin sync), so the children are those whose parent is this
 * process: the daemon runs in it.
 */
function processesWithHome(codexHome: string): { pid: number; ppid: number; command: string }[] {
  const found: { pid: number; ppid: number; command: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (!env.includes(`CODEX_HOME=${codexHome}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      found.push({ pid: Number(entry), ppid, command });
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

test("start installs the signal handlers, stop removes them; a second stop is a no-op", async () => {
  const before = signalListeners();
  const started = await startDaemonInProcess({ model });
  expect(signalListeners()).toEqual(
    Object.fromEntries(DAEMON_SIGNALS.map((s) => [s, before[s]! + 1])),
  );
  const { daemon, stateDir } = started;
  await started[Symbol.asyncDispose]();
  expect(await daemon.stopped).toBe(0);
  expect(signalListeners()).toEqual(before);
  expect(existsSync(path.join(stateDir, "daemon.pid"))).toBe(false);
  // Disposed again (await using after an explicit stop): the same finished stop, nothing more.
  const again = daemon[Symbol.asyncDispose]();
  expect(again).toBe(daemon.stop());
  await again;
  expect(signalListeners()).toEqual(before);
  // SIGHUP after the stop reaches no daemon handler (it reloaded policies before).
  expect(process.listenerCount("SIGHUP")).toBe(before.SIGHUP);
});

test("a start that fails at listening closes the codex children and the ledger it had opened", async () => {
  const busy: Server = createServer();
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  const port = (busy.address() as { port: number }).port;
  const stateDir = makeStateDir();
  const config = loadConfig({
    args: ["--port", String(port), "--state-dir", stateDir],
    cwd: REPO_ROOT,
    env: {},
  });
  config.codex.args = model.codexArgs({ requestMaxRetries: 0 });
  config.policies.dir = path.join(REPO_ROOT, "policies");
  const before = signalListeners();
  const { logger } = memoryLogger();
  try {
    const failed = await startDaemon(config, { analyzer: fakeAnalyzer, logger }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(signalListeners()).toEqual(before);
    expect(existsSync(path.join(stateDir, "daemon.pid"))).toBe(false);
    // Not one process of that codex home is left: children, nor anything they started.
    expect(processesWithHome(config.codex.home)).toEqual([]);
    // Nothing of the failed start is in the way: the same state dir starts on a free port.
    config.server.port = 0;
    await using again = await startDaemon(config, { analyzer: fakeAnalyzer, logger });
    const children = processesWithHome(config.codex.home).filter((p) => p.ppid === process.pid);
    expect(children).toHaveLength(config.codex.pool);
    expect(again.url).toStartWith("http://127.0.0.1:");
  } finally {
    busy.close();
  }
});

test("POST /v1/shutdown answers 202, then the daemon stops as it would on SIGTERM", async () => {
  const before = signalListeners();
  await using started = await startDaemonInProcess({ model });
  await started.client.shutdown();
  expect(await started.daemon.stopped).toBe(0);
  expect(signalListeners()).toEqual(before);
  expect(existsSync(path.join(started.stateDir, "daemon.pid"))).toBe(false);
});
