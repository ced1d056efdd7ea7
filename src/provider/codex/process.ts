/**
 * CodexProcess: one `codex app-server` child, from spawn through the initialize handshake to a
 * reaped exit.
 *
 * - Runs in its own process group, so stop() can signal codex together with everything it
 *   started (MCP servers, commands); none of them may outlive it.
 * - If the daemon dies, even by SIGKILL, the kernel closes the write end of codex's stdin;
 *   app-server exits on stdin EOF (verified on 0.169.0, see test/provider/codex/process.test.ts).
 * - stderr is redacted (`redact`), kept in a bounded ring (quoted in failure messages) and logged
 *   rate-limited (stderr-log.ts), never mixed into the protocol stream.
 * - With `user` (codex.user) it runs as that account: uid, primary gid, no supplementary groups,
 *   HOME/USER/LOGNAME of the account, a CODEX_HOME the account owns (see agent-user.ts).
 * - It gets the umask the daemon was started with, not codexd's own 077 (file-modes.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { ConnectionClosed, errorMessage, ProviderUnavailable } from "../../errors.ts";
import { withInheritedUmask } from "../../file-modes.ts";
import type { Level, Logger } from "../../log.ts";
import { type AgentUser, agentUserEnv, prepareAgentCodexHome } from "./agent-user.ts";
import { type BinarySource, resolveCodexBinary, type ResolvedBinary } from "./binary.ts";
import { buildChildEnv } from "./child-env.ts";
import { makeRolloutDirs } from "./codex-home.ts";
import { limitedLaunch } from "./process-limit.ts";
import { webReadable } from "./node-readable.ts";
import { webWritable } from "./node-writable.ts";
import type { InitializeResult } from "./results.ts";
import { CodexRouter } from "./router.ts";
import type { Rpc } from "./rpc.ts";
import { StderrLog } from "./stderr-log.ts";
import { StderrRing } from "./stderr-ring.ts";

/**
 * Overrides every codex child gets, after the configured arguments so that none of them undoes
 * them. `features.plugins=false`: at each start codex 0.169 otherwise syncs OpenAI's curated
 * plugin marketplace on its own (`git ls-remote` of github.com/openai/plugins, then the GitHub
 * API, then chatgpt.com), unsandboxed, and caches what it fetched in its home: traffic the
 * operator did not ask for and third-party code codexd neither uses nor governs.
 */
export const CHILD_OVERRIDES: readonly string[] = Object.freeze(["-c", "features.plugins=false"]);

/**
 * What codexd declares at `initialize`. experimentalApi: thread/start's experimentalRawEvents, the
 * only way codex shows whether a tool call asks to leave the sandbox (escalation.ts). The summary
 * notification per response carries nothing codexd reads.
 */
export const CODEXD_CAPABILITIES = Object.freeze({
  experimentalApi: true,
  optOutNotificationMethods: ["rawResponse/completed"],
});

export interface ExitInfo {
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CodexProcessOptions {
  /**
   * Builds the connection over codex's stdout (readable) and stdin (writable). Default: a
   * CodexRouter with default options; pass one to set its logger, timeouts or retries.
   */
  connect?: (stdout: ReadableStream<Uint8Array>, stdin: WritableStream<Uint8Array>) => Rpc;
  /** codexd's own CODEX_HOME for this child; created (mode 0700) if missing. */
  codexHome: string;
  /** Explicit codex binary; otherwise $CODEX_BIN, node_modules, PATH (see binary.ts). */
  binary?: string;
  /** Arguments after `app-server` (e.g. `-c key=value` overrides). */
  extraArgs?: readonly string[];
  /** The environment to filter through the allow-list (default `process.env`). */
  inheritedEnv?: Readonly<Record<string, string | undefined>>;
  /** Variables the configuration adds explicitly. */
  extraEnv?: Readonly<Record<string, string>>;
  /** Working folder of the app-server process (default: the daemon's; with `user` the codex home). */
  cwd?: string;
  /** Run codex as this account (the daemon must be root); CODEX_HOME is handed to it. */
  user?: AgentUser;
  /** RLIMIT_NPROC for codex and everything it starts (process-limit.ts); none when undefined. */
  maxProcesses?: number;
  /** Folders searched for node_modules/@openai/codex (default: the cwd). */
  searchFrom?: readonly string[];
  clientInfo?: { title?: string; version?: string };
  /** How long initialize may take (default 30 s). */
  handshakeTimeoutMs?: number;
  /** After stdin is closed, how long codex gets to exit on its own (default 2 s). */
  stdinGraceMs?: number;
  /** After SIGTERM to the group, how long before SIGKILL (default 5 s). */
  killGraceMs?: number;
  /**
   * codexd's notes about the child (SIGTERM/SIGKILL escalation, an unexpected exit) and codex's
   * stderr lines, at most `stderrLogLines` a minute.
   */
  log?: Logger["log"];
  /** Default 50 (see stderr-log.ts). */
  stderrLogLines?: number;
  /** Removes secrets from codex's stderr lines before they are kept, logged or handed out. */
  redact?: (line: string) => string;
  /** Each stderr line (ANSI stripped, redacted), e.g. to keep those of a child that fails to start. */
  onStderr?: (line: string) => void;
  /** Aborting during start kills the child and rejects with ProviderUnavailable. */
  signal?: AbortSignal;
}

const CODEXD_VERSION = "0.1.0";
const STDERR_LINES_IN_ERRORS = 20;

export class CodexProcess implements AsyncDisposable {
  readonly pid: number;
  readonly binary: ResolvedBinary;
  readonly rpc: Rpc;
  /** Resolves once the process has exited and been reaped. Never rejects. */
  readonly exited: Promise<ExitInfo>;
  #initialize: InitializeResult | undefined;
  readonly #child: ChildProcess;
  readonly #stderr: StderrRing;
  readonly #stderrEnded: Promise<void>;
  readonly #options: CodexProcessOptions;
  readonly #exitListeners = new Set<(reason: string, exit: ExitInfo) => void>();
  #exit: ExitInfo | undefined;
  /** The process exited before stop() was called. */
  #exitedOnItsOwn = false;
  #stopping: Promise<ExitInfo> | undefined;
  /** Set once an unexpected exit was announced. */
  #crash: { reason: string; exit: ExitInfo } | undefined;

  private constructor(
    child: ChildProcess,
    binary: ResolvedBinary,
    options: CodexProcessOptions,
  ) {
    this.#child = child;
    this.pid = child.pid!;
    this.binary = binary;
    this.#options = options;
    this.#stderr = new StderrRing(options.redact ? { redact: options.redact } : {});
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        this.#exitedOnItsOwn = this.#stopping === undefined;
        resolve(this.#exit);
      });
    });
    this.#stderrEnded = this.#pumpStderr();
    const connect = options.connect ?? ((stdout, stdin) => new CodexRouter(stdout, stdin));
    this.rpc = connect(
      webReadable(child.stdout!),
      webWritable(child.stdin!),
    );
    void this.exited.then((exit) => this.#onExit(exit));
  }

  /** Spawns codex and runs the handshake; rejects with ProviderUnavailable on any failure. */
  static async start(options: CodexProcessOptions): Promise<CodexProcess> {
    if (options.signal?.aborted) {
      throw new ProviderUnavailable("Cannot start codex: start was aborted", {
        cause: options.signal.reason,
      });
    }
    const binary = await resolveCodexBinary({
      binary: options.binary,
      env: options.inheritedEnv,
      searchFrom: options.searchFrom,
    });
    try {
      if (options.user) prepareAgentCodexHome(options.codexHome, options.user);
      else await mkdir(options.codexHome, { recursive: true, mode: 0o700 });
      await makeRolloutDirs(options.codexHome, options.user);
    } catch (error) {
      throw new ProviderUnavailable(
        `Cannot start codex: cannot create CODEX_HOME ${options.codexHome}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    const user = options.user;
    const inherited = options.inheritedEnv ?? process.env;
    const launch = limitedLaunch(
      binary.path,
      ["app-server", ...(options.extraArgs ?? []), ...CHILD_OVERRIDES],
      options.maxProcesses,
      inherited.PATH,
    );
    const child = withInheritedUmask(() =>
      spawn(launch.file, launch.args, {
        cwd: options.cwd ?? (user ? options.codexHome : undefined),
        env: {
          ...buildChildEnv({
            inherited,
            extra: options.extraEnv,
            codexHome: options.codexHome,
          }),
          ...(user && agentUserEnv(user)),
        },
        stdio: ["pipe", "pipe", "pipe"],
        // Own process group: stop() signals -pid, reaching everything codex started.
        detached: true,
        ...(user && { uid: user.uid, gid: user.gid }),
      })
    );
    await spawned(child, binary);
    let codex: CodexProcess;
    try {
      codex = new CodexProcess(child, binary, options);
    } catch (error) {
      // `connect` threw: nothing owns the child yet, so end it here.
      signalGroup(child.pid!, "SIGKILL");
      throw new ProviderUnavailable(
        `Cannot start codex: cannot connect to ${binary.path}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    try {
      await codex.#handshake();
      return codex;
    } catch (error) {
      // A closed connection usually means codex is exiting: let it, so the message says how.
      if (error instanceof ConnectionClosed) await settledWithin(codex.exited, 1_000);
      await codex.stop();
      throw await codex.#startFailure(error);
    }
  }

  /** The handshake's answer (validated). */
  get initializeResult(): InitializeResult {
    return this.#initialize!;
  }

  /** codex's version, parsed from the userAgent ("codexd/0.169.0 (Debian ...)" → "0.169.0"). */
  get version(): string {
    return parseVersion(this.#initialize!.userAgent);
  }

  /** The exit, once it happened. */
  get exitInfo(): ExitInfo | undefined {
    return this.#exit;
  }

  /** The last stderr lines (ANSI stripped), oldest first. */
  stderrTail(lines?: number): string[] {
    return this.#stderr.lines(lines);
  }

  /**
   * Calls `listener` once if codex exits without stop() having been called (a crash, a kill -9).
   * Returns an unsubscribe function.
   */
  onExit(listener: (reason: string, exit: ExitInfo) => void): () => void {
    this.#exitListeners.add(listener);
    if (this.#crash) {
      // Registered after the crash was announced: it still hears about it, once.
      const crash = this.#crash;
      queueMicrotask(() => {
        if (this.#exitListeners.delete(listener)) this.#notify(listener, crash);
      });
    }
    return () => this.#exitListeners.delete(listener);
  }

  /**
   * Graceful and idempotent: close stdin and give codex `stdinGraceMs` to exit, then SIGTERM the
   * group, SIGKILL it after `killGraceMs`. Always waits for the reap; also signals the group
   * once the leader is gone so no straggler outlives it.
   */
  stop(): Promise<ExitInfo> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #stop(): Promise<ExitInfo> {
    const stdinGraceMs = this.#options.stdinGraceMs ?? 2_000;
    const killGraceMs = this.#options.killGraceMs ?? 5_000;
    // Fails pending requests and ends the writer, i.e. codex's stdin: codex exits on EOF. Not
    // awaited here: the connection finishes only once codex's stdout ends, after the exit.
    const rpcStopped = this.rpc.stop(new ConnectionClosed("codex is stopping"));
    this.#child.stdin?.end();
    if (!(await settledWithin(this.exited, stdinGraceMs))) {
      // A full pipe can keep EOF from arriving; closing the fd cannot be held up.
      this.#child.stdin?.destroy();
      this.#note(
        "warn",
        `codex pid ${this.pid} still running ${stdinGraceMs} ms after stdin closed: SIGTERM`,
      );
      signalGroup(this.pid, "SIGTERM");
      if (!(await settledWithin(this.exited, killGraceMs))) {
        this.#note("warn", `codex pid ${this.pid} ignored SIGTERM for ${killGraceMs} ms: SIGKILL`);
        signalGroup(this.pid, "SIGKILL");
      }
    }
    const exit = await this.exited;
    await this.#reapStragglers(killGraceMs);
    await settledWithin(rpcStopped, 1_000);
    return exit;
  }

  /** The leader is gone; members of its group may remain (they are not our children). */
  async #reapStragglers(killGraceMs: number): Promise<void> {
    if (!signalGroup(this.pid, "SIGTERM")) return;
    const deadline = Date.now() + killGraceMs;
    while (Date.now() < deadline) {
      await delay(25);
      if (!groupHasLiveMembers(this.pid)) return;
    }
    signalGroup(this.pid, "SIGKILL");
  }

  async #handshake(): Promise<void> {
    const timeoutMs = this.#options.handshakeTimeoutMs ?? 30_000;
    // Resolves (never rejects) so a later, ordinary exit is no unhandled rejection.
    const exitedEarly = this.exited.then((exit) => new EarlyExit(exit));
    const answer = await Promise.race([
      this.rpc.request("initialize", {
        clientInfo: {
          name: "codexd",
          title: this.#options.clientInfo?.title ?? "codexd",
          version: this.#options.clientInfo?.version ?? CODEXD_VERSION,
        },
        capabilities: CODEXD_CAPABILITIES,
      }, { timeoutMs, signal: this.#options.signal }),
      exitedEarly,
    ]);
    if (answer instanceof EarlyExit) throw answer;
    this.#initialize = answer;
    await this.rpc.notify("initialized");
  }

  async #startFailure(error: unknown): Promise<ProviderUnavailable> {
    const exit = await this.exited;
    // Exit can be reported before the last stderr bytes were read.
    await settledWithin(this.#stderrEnded, 500);
    const tried = `${this.binary.path} (from ${describeSource(this.binary.source)})`;
    const why = this.#exitedOnItsOwn
      ? `exited ${describeExit(exit)} before answering initialize`
      : this.#options.signal?.aborted
      ? "start was aborted"
      : `failed the initialize handshake: ${errorMessage(error)} (then ${describeExit(exit)})`;
    const stderr = this.#stderr.lines(STDERR_LINES_IN_ERRORS);
    const tail = stderr.length > 0 ? `; last stderr:\n${stderr.join("\n")}` : "; no stderr output";
    return new ProviderUnavailable(`Cannot start codex: ${tried} ${why}${tail}`, {
      cause: this.#exitedOnItsOwn ? undefined : error,
    });
  }

  async #pumpStderr(): Promise<void> {
    const stream = this.#child.stderr!;
    stream.setEncoding("utf8");
    const { log: logTo, onStderr } = this.#options;
    const sink = logTo &&
      new StderrLog({
        log: logTo,
        context: { pid: this.pid },
        ...(this.#options.stderrLogLines !== undefined &&
          { maxLines: this.#options.stderrLogLines }),
      });
    const log = (lines: string[]) => {
      for (const line of lines) {
        onStderr?.(line);
        sink?.line(line);
      }
    };
    stream.on("data", (chunk: string) => log(this.#stderr.write(chunk)));
    await new Promise<void>((resolve) => {
      stream.once("close", resolve);
      stream.once("end", resolve);
      stream.once("error", () => resolve());
    });
    log(this.#stderr.flush());
    sink?.flush();
  }

  #onExit(exit: ExitInfo): void {
    if (this.#stopping) return;
    const reason = `codex app-server (pid ${this.pid}) exited ${describeExit(exit)}`;
    void this.rpc.stop(new ConnectionClosed(reason));
    // The group may still hold codex's children; signal them without waiting.
    void this.#reapStragglers(this.#options.killGraceMs ?? 5_000);
    if (this.#initialize === undefined) return; // start() reports this one
    this.#note("warn", reason, { code: exit.code, signal: exit.signal });
    this.#crash = { reason, exit };
    const listeners = [...this.#exitListeners];
    this.#exitListeners.clear();
    for (const listener of listeners) this.#notify(listener, this.#crash);
  }

  #notify(
    listener: (reason: string, exit: ExitInfo) => void,
    crash: { reason: string; exit: ExitInfo },
  ): void {
    try {
      listener(crash.reason, crash.exit);
    } catch (error) {
      this.#note("error", "an onExit listener threw", { error });
    }
  }

  #note(level: Level, message: string, data?: Record<string, unknown>): void {
    this.#options.log?.(level, message, { pid: this.pid, ...data });
  }
}

class EarlyExit extends Error {
  constructor(readonly exit: ExitInfo) {
    super(`exited ${describeExit(exit)}`);
  }
}

/** "codexd/0.169.0 (Debian 12; x86_64) ..." → "0.169.0" */
export function parseVersion(userAgent: string): string {
  const match = /^[^/\s]+\/(\d+\.\d+\.\d+[^\s]*)/.exec(userAgent);
  return match ? match[1] : "unknown";
}

function spawned(child: ChildProcess, binary: ResolvedBinary): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", (error) => {
      reject(
        new ProviderUnavailable(
          `Cannot start codex: cannot spawn ${binary.path} (from ${
            describeSource(binary.source)
          }): ${errorMessage(error)}`,
          { cause: error },
        ),
      );
    });
  });
}

/** Sends `signal` to the process group; false when the group no longer exists. */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a process group still has a member that is not a zombie. Members whose parent (codex)
 * is gone are reparented to init and stay zombies until init reaps them, which can take long;
 * they still count for kill(-pgid, 0), so on Linux we read /proc instead.
 */
function groupHasLiveMembers(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true; // no /proc (macOS): the signal probe is all we have
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

/** Waits for `promise` (outcome ignored) at most `ms`; true if it settled in time. */
async function settledWithin(promise: Promise<unknown> | unknown, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([Promise.resolve(promise).then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describeExit(exit: ExitInfo): string {
  return exit.signal ? `on signal ${exit.signal}` : `with code ${exit.code}`;
}

function describeSource(source: BinarySource): string {
  return {
    option: "the binary option",
    env: "$CODEX_BIN",
    node_modules: "node_modules",
    path: "PATH",
  }[source];
}
