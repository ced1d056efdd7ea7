/**
 * Runs codexd as a real subprocess (`bun src/main.ts serve`, or the compiled binary) against the
 * scripted model, and talks to it over HTTP only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { CodexdClient } from "../../src/client.ts";
import { loadConfig } from "../../src/daemon/config.ts";
import type { ModelEndpoint } from "../../src/devtools/scripted-model.ts";
import { REPO_ROOT } from "./codex-harness.ts";

/** The one line `codexd serve` prints on stdout when ready. */
const ListeningLine = z.strictObject({
  event: z.literal("listening"),
  url: z.url(),
  pid: z.number().int().positive(),
});

export interface DaemonProcess extends AsyncDisposable {
  url: string;
  pid: number;
  stateDir: string;
  client: CodexdClient;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** SIGTERM and wait; returns the exit code. */
  stop(): Promise<number | null>;
}

/** State dirs made by this process; the test preload removes them after the run. */
const madeStateDirs = new Set<string>();

/**
 * A state dir under the repo's .codexd/. When the checkout itself is in the temp folder, the
 * daemon keeps codex's home in the user's cache instead (see config.ts): that one is removed
 * after the run too (test/support/preload.ts), or every run would leave a few MiB there.
 */
export function makeStateDir(): string {
  const root = path.join(REPO_ROOT, ".codexd", "test-daemons");
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(path.join(root, "state-"));
  madeStateDirs.add(dir);
  return dir;
}

/** Removes every state dir made so far, its config file and its codex home. */
export function removeStateDirs(): void {
  for (const dir of madeStateDirs) {
    const home = loadConfig({ args: ["--state-dir", dir], cwd: REPO_ROOT, env: process.env })
      .codex.home;
    for (const target of [dir, `${dir}.jsonc`, home]) {
      try {
        rmSync(target, { recursive: true, force: true });
      } catch {
        // best effort: a daemon of a failed test may still hold it
      }
    }
  }
  madeStateDirs.clear();
}

export async function startDaemonProcess(options: {
  model: ModelEndpoint;
  stateDir?: string;
  /** Default: bun src/main.ts. */
  command?: string[];
  cwd?: string;
  extraArgs?: string[];
  config?: Record<string, unknown>;
  /** Added to the daemon's environment (which keeps the tests' CODEX_BIN: the codex under test). */
  env?: Record<string, string>;
}): Promise<DaemonProcess> {
  const stateDir = options.stateDir ?? makeStateDir();
  const configFile = path.join(stateDir, "..", `${path.basename(stateDir)}.jsonc`);
  writeFileSync(
    configFile,
    `// written by the test\n${
      JSON.stringify(
        {
          codex: { args: options.model.codexArgs({ requestMaxRetries: 0 }) },
          policies: { dir: path.join(REPO_ROOT, "policies") },
          ...options.config,
        },
        null,
        2,
      )
    }\n`,
  );
  const command = options.command ?? [process.execPath, path.join(REPO_ROOT, "src/main.ts")];
  const child = spawn(
    command[0]!,
    [
      ...command.slice(1),
      "serve",
      "--port",
      "0",
      "--state-dir",
      stateDir,
      "--config",
      configFile,
      ...options.extraArgs ?? [],
    ],
    {
      cwd: options.cwd ?? REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.env },
    },
  );
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 1_000_000) stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  );
  const firstLine = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    void exited.then(({ code }) =>
      reject(new Error(`codexd exited (${code}) before listening:\n${stderr}`))
    );
  });
  const listening = ListeningLine.parse(JSON.parse(firstLine));
  const token = readFileSync(path.join(stateDir, "token"), "utf8").trim();
  const client = new CodexdClient({ baseUrl: listening.url, token });
  let stopping: Promise<number | null> | undefined;
  const stop = () =>
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return (await exited).code;
    })();
  return {
    url: listening.url,
    pid: listening.pid,
    stateDir,
    client,
    child,
    exited,
    stderr: () => stderr,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };
}
