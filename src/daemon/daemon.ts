/**
 * The daemon, assembled: `startDaemon` opens, in this order,
 *
 *   config ─► state dir (pid ledger, token, sqlite store, journal)
 *          ─► policies (PolicyStore) ─► approval bridge
 *          ─► codex pool ─► codex provider ─► codex app-server children
 *          ─► session manager (SessionService) ─► Hono app ─► HTTP listener ─► signal handlers
 *
 * and the `Daemon` it returns closes them in reverse order. `codexd serve` (serve.ts) runs one.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { ShellAnalyzer } from "../approval/analyzer.ts";
import { ApprovalBridge } from "../approval/bridge.ts";
import { PolicyStore } from "../approval/policy-store.ts";
import { defaultShellAnalyzer } from "../approval/shell-analyzer.ts";
import { embeddedAssets } from "../assets.ts";
import { errorMessage } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";
import { makePrivateDir, restrictUmask, tightenStateDir } from "../file-modes.ts";
import { type AgentUser, resolveAgentUser } from "../provider/codex/agent-user.ts";
import type { RetryPolicy } from "../provider/codex/retry.ts";
import { checkProtocolDrift, generateSchema } from "../provider/codex/drift.ts";
import { resolveCodexBinary } from "../provider/codex/binary.ts";
import { createCodexPool } from "../provider/codex/create-pool.ts";
import { unhandledNotifications } from "../provider/codex/event-map.ts";
import { serve } from "../runtime.ts";
import { createApp } from "./app.ts";
import { loadOrCreateToken, type ResolvedConfig } from "./config.ts";
import { Journal } from "./journal.ts";
import { createDaemonMetrics } from "./metrics.ts";
import { PidLedger } from "./pid-ledger.ts";
import { envSecrets, scrubberFor } from "./redact.ts";
import { SessionManager } from "./sessions.ts";
import { Store } from "./store.ts";
import { CodexPool, type RestartReport } from "../provider/codex/pool.ts";
import { SessionTmp } from "../provider/codex/session-tmp.ts";
import type { BackoffPolicy } from "../provider/codex/supervisor.ts";

/** How long a graceful stop may take; then `stopped` resolves with 1 and main.ts exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * The running daemon. It owns what it opened (the pid ledger, the database, the codex children,
 * the listener, its signal handlers) and closes them in reverse order on `stop()` or
 * `await using`: a second stop is the first one's promise. (The protocol drift check, a
 * one-off `codex app-server generate-json-schema` at start, is not waited for.)
 */
export interface Daemon extends AsyncDisposable {
  url: string;
  /** Resolves with the exit code once the daemon stopped (1: the stop failed or overran). */
  stopped: Promise<number>;
  /** Stops gracefully within SHUTDOWN_DEADLINE_MS; idempotent. */
  stop(): Promise<void>;
  /** The event journal (subscriber counts and overflows, for tests and fault reports). */
  journal: Journal;
  /** The codex children (placement, recycling, rolling restarts). */
  pool: CodexPool;
  /** What `POST /v1/codex/restart` and SIGUSR2 do: reload codex settings, replace every child. */
  restartCodex(): Promise<RestartReport>;
}

export interface DaemonDeps {
  /** The command analyzer; the tree-sitter one by default (tests may pass their own). */
  analyzer?: ShellAnalyzer;
  /** Restart backoff of the codex child (default 0.5 s doubling to 30 s). */
  backoff?: BackoffPolicy;
  /** Live events buffered per SSE reader before it falls back to the database (default 1024). */
  journalBufferLimit?: number;
  /** Retries of requests codex refused as transient (default 1 s, 2 s, 4 s; see retry.ts). */
  rpcRetry?: RetryPolicy;
  /** The sessions' clock (token budget windows, timestamps); tests move it by hand. */
  now?: () => Date;
  /** Reads the config again for a rolling restart (its codex bin, args and env are taken). */
  reloadConfig?: () => ResolvedConfig;
  /** A child's resident memory in bytes (tests; default /proc/<pid>/status). */
  readRss?: (pid: number) => number | undefined;
  /** The daemon's log; JSON lines on stderr by default (debug lines with $CODEXD_DEBUG). */
  logger?: Logger;
}

/** JSON lines on stderr; debug lines only with $CODEXD_DEBUG. */
export function daemonLogger(): Logger {
  return createLogger({ level: process.env.CODEXD_DEBUG ? "debug" : "info" });
}

/** The signals a daemon handles, from its start to its stop. */
export const DAEMON_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP", "SIGUSR2"] as const;

/**
 * Starts the daemon. When a step fails, whatever the steps before it opened is closed again
 * (children stopped, database closed, ledger released) before the error is thrown.
 */
export async function startDaemon(config: ResolvedConfig, deps: DaemonDeps = {}): Promise<Daemon> {
  const logger = deps.logger ?? daemonLogger();
  const resources = new AsyncDisposableStack();
  try {
    return await assemble(config, deps, logger, resources);
  } catch (error) {
    await resources.disposeAsync().catch((cleanup: unknown) =>
      logger.error("could not close what a failed start opened", { error: cleanup })
    );
    throw error;
  }
}

/** Opens each part in order, each one's closing deferred on `resources`. */
async function assemble(
  config: ResolvedConfig,
  deps: DaemonDeps,
  logger: Logger,
  resources: AsyncDisposableStack,
): Promise<Daemon> {
  restrictUmask();
  makePrivateDir(config.stateDir);
  const tightened = tightenStateDir(config.stateDir);
  if (tightened.length > 0) logger.info("made the state dir private (0700/0600)", { tightened });
  for (const note of config.notes) logger.info(note);
  const agentUser = agentIdentity(config, logger);
  const ledger = new PidLedger(config.stateDir);
  ledger.claim();
  resources.defer(() => ledger.release());
  const orphan = await ledger.reapOrphan();
  if (orphan) logger.warn("ended a codex child left by an earlier daemon", { pid: orphan });

  const token = loadOrCreateToken(config.stateDir, config.server.tokenFile);
  if (token.created) logger.info("generated an API token", { path: token.path });
  if (agentUser && statSync(token.path).uid === agentUser.uid) {
    throw new Error(
      `token file ${token.path} belongs to codex.user ${agentUser.name}, who must not read it`,
    );
  }

  const store = Store.open(join(config.stateDir, "codexd.db"), {
    // The events of that commit were never handed to a client; say loudly that they are gone.
    onCommitError: (error) => logger.error("could not write events to the database", { error }),
  });
  resources.defer(() => store.close());
  const interrupted = store.markRunningAsInterrupted();
  if (interrupted.length > 0) logger.info("sessions interrupted by the last stop", { interrupted });
  const journal = new Journal(store, {
    ...(config.events.retention !== undefined && { retention: config.events.retention }),
    ...(deps.journalBufferLimit !== undefined && { bufferLimit: deps.journalBufferLimit }),
  });

  const analyzer = deps.analyzer ?? await defaultShellAnalyzer();
  const policies = await PolicyStore.open(policiesDir(config, logger), {
    analyzer,
    requireAll: true,
  });
  const bridge = new ApprovalBridge(policies);
  const metrics = createDaemonMetrics({
    unhandledNotifications: () => unhandledNotifications.entries(),
  });

  const problems: string[] = [];
  // What new children start with; a rolling restart may reload it (bin, args, env).
  let codex = config.codex;
  const recycle = config.codex.recycle;
  // Each session's own writable temp folder (/tmp is read-only to sandboxed commands).
  const sessionTmp = new SessionTmp(
    agentUser ? { owner: { uid: agentUser.uid, gid: agentUser.gid } } : {},
  );
  resources.defer(() => sessionTmp.close());
  const supervisor = createCodexPool({
    sessionTmp,
    size: config.codex.pool,
    settings: () => codex,
    ...(agentUser && { user: agentUser }),
    approver: bridge,
    daemonMcpServers: config.mcpServers,
    // The config file may hold keys (`codex.env`) and the TLS key serves the API.
    daemonPaths: [
      config.stateDir,
      token.path,
      ...(config.configFile !== undefined ? [config.configFile] : []),
      ...(config.server.tls ? [config.server.tls.key] : []),
    ],
    worktreeRoots: config.worktreeRoots,
    recycle: {
      maxRssBytes: recycle.maxRssMiB * 1024 * 1024,
      maxStoppedThreads: recycle.maxStoppedThreads,
      intervalMs: recycle.checkIntervalSeconds * 1000,
    },
    ...(deps.backoff && { backoff: deps.backoff }),
    ...(deps.readRss && { readRss: deps.readRss }),
    ...(deps.rpcRetry && { retry: deps.rpcRetry }),
    onRetry: ({ method }) => metrics.rpcRetries.inc({ method }),
    onChildStarted: ({ pid, restart }) => {
      if (pid !== undefined) ledger.recordChild(pid);
      if (restart) metrics.codexRestarts.inc();
    },
    // What codex prints may quote its environment or a session's (a command line, an MCP
    // server's failure): its credentials and every session's spec secrets stay out of the log.
    stderrRedactor: (settings) => {
      const scrubber = scrubberFor(envSecrets(process.env, settings.env));
      return (line) => journal.scrubAll(scrubber ? scrubber.text(line) : line);
    },
    logger,
  });
  resources.defer(() => supervisor.shutdown());
  await supervisor.start();
  void checkDrift(config, logger).then((found) => problems.push(...found));

  const restartCodex = (): Promise<RestartReport> => {
    if (deps.reloadConfig) {
      // Throws a ConfigError on a broken file: nothing is replaced then.
      const reloaded = deps.reloadConfig().codex;
      if (reloaded.home !== codex.home || reloaded.user !== codex.user) {
        logger.warn("codex.home and codex.user take effect at the next daemon start only");
      }
      codex = {
        ...reloaded,
        home: codex.home,
        ...(codex.user !== undefined && { user: codex.user }),
      };
    }
    logger.info("rolling restart of the codex children", { bin: codex.bin ?? "(default)" });
    return supervisor.restart().then((report) => {
      logger.log(report.failed.length > 0 ? "error" : "info", "rolling restart done", report);
      return report;
    });
  };

  const onRestartSignal = () => {
    try {
      void restartCodex().catch((error) => logger.error("rolling restart failed", { error }));
    } catch (error) {
      logger.error("rolling restart refused: the config cannot be read", { error });
    }
  };

  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  /** Closes everything `resources` holds, last opened first, within SHUTDOWN_DEADLINE_MS. */
  const stop = (): Promise<void> =>
    stopping ??= (async () => {
      logger.info("stopping");
      let deadline: ReturnType<typeof setTimeout> | undefined;
      const overran = new Promise<number>((resolve) => {
        deadline = setTimeout(() => {
          logger.error("graceful stop took too long; giving up on it");
          resolve(1);
        }, SHUTDOWN_DEADLINE_MS);
      });
      const closed = resources.disposeAsync().then(() => 0, (error: unknown) => {
        logger.error("stopping failed", { error });
        return 1;
      });
      const code = await Promise.race([closed, overran]);
      clearTimeout(deadline);
      resolveStopped(code);
    })();

  const sessions = new SessionManager({
    store,
    journal,
    provider: supervisor,
    policies,
    bridge,
    workspace: {
      stateDir: config.stateDir,
      codexHome: config.codex.home,
      policiesDir: config.policies.dir,
      daemonFiles: [config.configFile, config.server.tokenFile]
        .filter((f): f is string => f !== undefined),
      worktreeRoots: config.worktreeRoots,
      ...(agentUser && { agentHome: agentUser.home }),
    },
    metrics,
    version: embeddedAssets.version ?? "0.1.0",
    problems: () => problems,
    // The 202 is written before the stop gets to closing the listener: stopping the sessions
    // first takes their children's exit.
    onShutdownRequested: () => void stop(),
    ...(deps.now && { now: deps.now }),
    logger,
  });
  const app = createApp({
    service: sessions,
    token: token.token,
    metrics,
    logger,
    version: embeddedAssets.version ?? "0.1.0",
    listen: () => ({
      hostname: config.server.host,
      // Asked per request, so after listening: the bound port when the config said 0.
      port: server.port,
      tls: config.server.tls !== undefined,
      extraHosts: config.server.allowedHosts,
    }),
    limits: config.limits,
    codex: {
      children: () => supervisor.children(),
      restart: () => {
        const running = restartCodex();
        running.catch(() => {});
        return running;
      },
    },
  });
  const server = serve({
    hostname: config.server.host,
    port: config.server.port,
    fetch: app.fetch,
    ...(config.server.tls && {
      tls: {
        cert: readFileSync(config.server.tls.cert, "utf8"),
        key: readFileSync(config.server.tls.key, "utf8"),
      },
    }),
  });
  resources.defer(() => server.stop());
  // Sessions stop while the listener still serves, so readers see their last events.
  resources.defer(() =>
    sessions.shutdownAll().catch((error: unknown) =>
      logger.error("stopping sessions failed", { error })
    )
  );

  const handlers: Record<(typeof DAEMON_SIGNALS)[number], () => void> = {
    SIGTERM: () => void stop(),
    SIGINT: () => void stop(),
    SIGHUP: () => {
      const result = policies.reload();
      logger.log(result.issues.length ? "warn" : "info", "policies reloaded", result);
    },
    SIGUSR2: onRestartSignal,
  };
  for (const signal of DAEMON_SIGNALS) process.on(signal, handlers[signal]);
  resources.defer(() => {
    for (const signal of DAEMON_SIGNALS) process.off(signal, handlers[signal]);
  });
  return {
    url: server.url,
    stopped,
    stop,
    [Symbol.asyncDispose]: stop,
    journal,
    pool: supervisor,
    restartCodex,
  };
}

/**
 * The account codex runs as (`codex.user`), or undefined to run it as the daemon's own. As root
 * without codex.user every agent command runs as root: allowed (a single-user machine, a
 * container) but said loudly. codex.user needs root, unless it is the daemon's own account.
 */
function agentIdentity(config: ResolvedConfig, logger: Logger): AgentUser | undefined {
  const uid = process.getuid?.();
  if (config.codex.user === undefined) {
    if (uid === 0) {
      logger.warn(
        "codexd runs as root and codex.user is not set: codex and every agent command run as " +
          "root and can read the API token and the state database. Set codex.user to an " +
          "unprivileged account (README: Deploying with a separate agent user)",
      );
    }
    return undefined;
  }
  const user = resolveAgentUser(config.codex.user);
  if (uid === user.uid) return undefined;
  if (uid !== 0) {
    throw new Error(
      `codex.user ${config.codex.user} needs the daemon to run as root (it runs as uid ${uid})`,
    );
  }
  logger.info("codex and agent commands run as a separate account", {
    user: user.name,
    uid: user.uid,
    gid: user.gid,
    codexHome: config.codex.home,
  });
  return user;
}

/** The configured policies folder, or the embedded built-in policies when it does not exist. */
function policiesDir(config: ResolvedConfig, logger: Logger): string {
  if (existsSync(config.policies.dir)) return config.policies.dir;
  const builtin = join(config.stateDir, "builtin-policies");
  mkdirSync(builtin, { recursive: true, mode: 0o700 });
  for (const [name, text] of Object.entries(embeddedAssets.policies ?? {})) {
    writeFileSync(join(builtin, `${name}.yaml`), text, { mode: 0o600 });
  }
  logger.warn("policies folder not found; using the built-in policies", {
    dir: config.policies.dir,
  });
  return builtin;
}

/** Compares the protocol codexd uses with what the installed codex documents. */
async function checkDrift(config: ResolvedConfig, logger: Logger): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "codexd-schema-"));
  try {
    const binary = await resolveCodexBinary({
      ...(config.codex.bin !== undefined && { binary: config.codex.bin }),
      searchFrom: [process.cwd()],
    });
    await generateSchema(binary.path, dir);
    const drift = await checkProtocolDrift(dir);
    if (!drift.ok) logger.warn("codex protocol drift", { problems: drift.problems });
    if (drift.notes.length > 0) logger.info("codex protocol notes", { notes: drift.notes });
    return drift.problems.map((p) => `protocol drift: ${p}`);
  } catch (error) {
    // An unchecked codex is not a healthy one: health says degraded and why.
    logger.warn("could not check protocol drift", { error });
    return [`protocol drift: cannot check: ${errorMessage(error)}`];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
