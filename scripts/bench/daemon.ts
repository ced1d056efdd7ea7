/**
 * One way to get a running codexd for every scenario. The real thing is the subprocess
 * (`bun src/main.ts serve`, as `npm start` runs it). While the production shell analyzer is not
 * built, `codexd serve` cannot start, so the same startDaemon runs with the test suite's fake
 * analyzer instead: as its own process (serve-fake-analyzer.ts), or inside the bench process
 * (`--daemon in-process`). The report says which one was measured.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { CodexdClient } from "../../src/client.ts";
import { defaultShellAnalyzer } from "../../src/approval/shell-analyzer.ts";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { REPO_ROOT } from "../../test/support/codex-harness.ts";
import { startDaemonInProcess } from "../../test/support/daemon-in-process.ts";
import { makeStateDir, startDaemonProcess } from "../../test/support/daemon-process.ts";
import { codexPidsUnder } from "./machine.ts";

export type DaemonMode = "subprocess" | "subprocess-fake-analyzer" | "in-process";
export const DAEMON_MODES: readonly DaemonMode[] = [
  "subprocess",
  "subprocess-fake-analyzer",
  "in-process",
];

const FAKE_SERVE = path.join(REPO_ROOT, "scripts", "bench", "serve-fake-analyzer.ts");
const MAIN = path.join(REPO_ROOT, "src", "main.ts");

export interface BenchDaemon extends AsyncDisposable {
  mode: DaemonMode;
  url: string;
  client: CodexdClient;
  /** The daemon's pid (the bench's own pid when in-process). */
  pid: number;
  /** The codex app-server child(ren) of the daemon. */
  codexPids(): number[];
  stop(): Promise<void>;
}

/** subprocess when the production analyzer works, else a subprocess with the fake one. */
export async function chooseDaemonMode(): Promise<{ mode: DaemonMode; why: string }> {
  try {
    await defaultShellAnalyzer();
    return { mode: "subprocess", why: "bun src/main.ts serve (production analyzer)" };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      mode: "subprocess-fake-analyzer",
      why: `bun scripts/bench/serve-fake-analyzer.ts serve (startDaemon with the fake analyzer; ` +
        `${reason})`,
    };
  }
}

/** How the bench starts a daemon beyond its mode. */
export interface BenchDaemonOptions {
  /** Runtime flags of the daemon's bun (a subprocess daemon only), e.g. `--cpu-prof-md`. */
  bunFlags?: readonly string[];
  /** Merged into the daemon's config file (a subprocess daemon only), e.g. `{codex: {pool}}`. */
  config?: Record<string, unknown>;
}

export async function startBenchDaemon(
  model: ModelEndpoint,
  mode: DaemonMode,
  options: BenchDaemonOptions = {},
): Promise<BenchDaemon> {
  const stateDir = makeStateDir();
  const script = mode === "subprocess-fake-analyzer" ? FAKE_SERVE : MAIN;
  const started = mode === "in-process"
    ? await startDaemonInProcess({ model, stateDir }).then((d) => ({
      url: d.daemon.url,
      client: d.client,
      pid: process.pid,
      stop: () => d.daemon.stop(),
    }))
    : await startDaemonProcess({
      model,
      stateDir,
      command: [process.execPath, ...options.bunFlags ?? [], script],
      ...(options.config && { config: withModelArgs(model, options.config) }),
    });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      await started.stop();
      await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
      await rm(`${stateDir}.jsonc`, { force: true });
    })();
  return {
    mode,
    url: started.url,
    client: started.client,
    pid: started.pid,
    codexPids: () => codexPidsUnder(started.pid),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** startDaemonProcess's config replaces `codex` whole: keep the scripted model's codex args. */
function withModelArgs(
  model: ModelEndpoint,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const codex = config.codex as Record<string, unknown> | undefined;
  if (!codex) return config;
  return { ...config, codex: { args: model.codexArgs({ requestMaxRetries: 0 }), ...codex } };
}
