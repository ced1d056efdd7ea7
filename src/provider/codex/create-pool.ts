/**
 * The codex provider as the daemon assembles it: a CodexPool whose children start with the
 * settings of the moment (a rolling restart may change the binary, its arguments and its
 * environment), each child wrapped in a CodexProvider that asks the approver, pushes the
 * daemon's MCP servers and denies sandboxed commands reads of credentials and codexd's files.
 */
import process from "node:process";
import type { Logger } from "../../log.ts";
import type { McpServer } from "../spec.ts";
import type { Approver } from "../types.ts";
import type { AgentUser } from "./agent-user.ts";
import { startCodexChild } from "./child.ts";
import { CodexPool, type RecycleLimits } from "./pool.ts";
import { CodexProvider } from "./provider.ts";
import { readDeniedPaths } from "./read-denied.ts";
import type { SessionTmp } from "./session-tmp.ts";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import type { RetryInfo, RetryPolicy } from "./retry.ts";
import type { BackoffPolicy } from "./supervisor.ts";

/** What a codex child starts with (the config's `codex` section). */
export interface CodexChildSettings {
  home: string;
  bin?: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** `codex.maxProcesses`: RLIMIT_NPROC for codex and its commands; null for none. */
  maxProcesses?: number | null;
}

export interface CreateCodexPoolOptions {
  /** Children kept running (`codex.pool`). */
  size: number;
  /** Read at each child's start: a rolling restart starts its children with what it says then. */
  settings: () => CodexChildSettings;
  /** The account codex runs as (`codex.user`); the daemon's own when absent. */
  user?: AgentUser;
  approver: Approver;
  daemonMcpServers?: Record<string, McpServer>;
  /** codexd's own files and folders (state dir, token): no sandboxed command may read them. */
  daemonPaths: readonly string[];
  /** The config's `worktreeRoots`: a session's commands read none of them but its own cwd. */
  worktreeRoots?: readonly string[];
  recycle?: RecycleLimits;
  backoff?: BackoffPolicy;
  readRss?: (pid: number) => number | undefined;
  retry?: RetryPolicy;
  onRetry?: (info: RetryInfo) => void;
  /** Each child once it runs; `restart`: it is not one of the pool's first `size` children. */
  onChildStarted?: (child: { pid: number | undefined; restart: boolean }) => void;
  /** Each session's own temp folder (session-tmp.ts), shared by every child of the pool. */
  sessionTmp?: SessionTmp;
  /** Masks secrets in codex's stderr lines, which may quote its environment. */
  stderrRedactor?: (settings: CodexChildSettings) => ((line: string) => string) | undefined;
  logger: Logger;
}

/** stderr lines kept from a codex child that failed to start, for health. */
const FAILED_START_STDERR_LINES = 20;

export function createCodexPool(options: CreateCodexPoolOptions): CodexPool {
  const { logger } = options;
  // Starts beyond the pool's first children are restarts (after a crash, a recycle, an upgrade).
  let initialStarts = options.size;
  // A child that dies during start never becomes a provider to ask for its stderr: keep it here.
  let startStderr: string[] = [];
  return new CodexPool({
    size: options.size,
    ...(options.backoff && { backoff: options.backoff }),
    ...(options.recycle && { recycle: options.recycle }),
    ...(options.readRss && { readRss: options.readRss }),
    startStderr: () => startStderr,
    startProvider: async () => {
      startStderr = [];
      const settings = options.settings();
      const redact = options.stderrRedactor?.(settings);
      const child = await startCodexChild({
        codexHome: settings.home,
        ...(settings.bin !== undefined && { binary: settings.bin }),
        extraArgs: settings.args,
        extraEnv: settings.env,
        ...(options.user && { user: options.user }),
        ...(typeof settings.maxProcesses === "number" && { maxProcesses: settings.maxProcesses }),
        searchFrom: [process.cwd()],
        ...(options.retry && { retry: options.retry }),
        ...(options.onRetry && { onRetry: options.onRetry }),
        log: logger.log,
        ...(redact && { redact }),
        onStderr: (line) => {
          startStderr.push(line);
          if (startStderr.length > FAILED_START_STDERR_LINES) startStderr.shift();
        },
      });
      const restart = initialStarts === 0;
      if (!restart) initialStarts--;
      options.onChildStarted?.({ pid: child.pid, restart });
      return new CodexProvider({
        child,
        approver: options.approver,
        ...(options.daemonMcpServers && { daemonMcpServers: options.daemonMcpServers }),
        // Read at each thread start: only paths that exist then are denied (read-denied.ts).
        readDenied: () =>
          readDeniedPaths({
            home: options.user ? options.user.home : settings.env.HOME ?? process.env.HOME,
            codexHome: settings.home,
            daemonPaths: [...options.daemonPaths],
            exists: existsSync,
            realpath: (p) => realpathSync(p),
            list: (dir) => readdirSync(dir),
          }),
        ...(options.sessionTmp && { sessionTmp: options.sessionTmp }),
        ...(options.worktreeRoots && { worktreeRoots: options.worktreeRoots }),
        logger: logger.child({ codexPid: child.pid }),
      });
    },
    logger,
  });
}
