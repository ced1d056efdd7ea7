/**
 * The assembled daemon in this process (`startDaemon`), against the scripted model and with the
 * fake command analyzer, reached over real HTTP. Tests and the bench's in-process mode share it;
 * `daemon-process.ts` runs the same daemon as a subprocess.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { CodexdClient } from "../../src/client.ts";
import { loadConfig, type ResolvedConfig } from "../../src/daemon/config.ts";
import { type Daemon, type DaemonDeps, startDaemon } from "../../src/daemon/daemon.ts";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { REPO_ROOT } from "./codex-harness.ts";
import { makeStateDir } from "./daemon-process.ts";

export interface InProcessDaemon extends AsyncDisposable {
  daemon: Daemon;
  client: CodexdClient;
  stateDir: string;
  token: string;
}

export async function startDaemonInProcess(options: {
  model: ModelEndpoint;
  stateDir?: string;
  /** Default: the repo's policies/. */
  policiesDir?: string;
  /** An explicit codex binary (default: node_modules). */
  bin?: string;
  deps?: DaemonDeps;
  /** Changes the loaded config before the daemon starts (codex.pool, limits, ...). */
  configure?: (config: ResolvedConfig) => void;
}): Promise<InProcessDaemon> {
  const stateDir = options.stateDir ?? makeStateDir();
  const config = loadConfig({
    args: ["--port", "0", "--state-dir", stateDir],
    cwd: REPO_ROOT,
    env: {},
  });
  config.codex.args = options.model.codexArgs({ requestMaxRetries: 0 });
  if (options.bin) config.codex.bin = options.bin;
  config.policies.dir = options.policiesDir ?? path.join(REPO_ROOT, "policies");
  options.configure?.(config);
  const daemon = await startDaemon(config, { analyzer: fakeAnalyzer, ...options.deps });
  const token = readFileSync(path.join(stateDir, "token"), "utf8").trim();
  const client = new CodexdClient({ baseUrl: daemon.url, token });
  return { daemon, client, stateDir, token, [Symbol.asyncDispose]: () => daemon.stop() };
}
