/**
 * The codex provider: owns exactly one `codex app-server` child and multiplexes sessions (codex
 * threads) over its stdio, each handle subscribed to its own thread id.
 */
import { realpath } from "node:fs/promises";
import { repositoryGitDirs } from "./git-dirs.ts";
import { worktreeRootsHiddenFrom } from "./worktree-roots.ts";
import { refuseRepositoryGitPrograms } from "./repo-git-programs.ts";
import { ProviderUnavailable, RpcError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { McpServer, Spec } from "../spec.ts";
import type {
  Approver,
  Capabilities,
  Handle,
  PlanOptions,
  Provider,
  ProviderStatus,
  ResumeOptions,
  SessionPlan,
  SpawnOptions,
  TranscriptEntry,
} from "../types.ts";
import { CodexHandle } from "./handle.ts";
import { isQuiet, unhandledNotifications } from "./event-map.ts";
import {
  type CodexPlanOptions,
  mcpBatchWrite,
  planSpawn,
  planThread,
  type SpawnPlan,
  withPrivateTmp,
} from "./plan.ts";
import type { SessionTmp } from "./session-tmp.ts";
import { type ForeignTurn, foreignTurn } from "./foreign-turns.ts";
import type { CodexChild } from "./child.ts";
import { RolloutCalls, type RolloutCallsOptions } from "./rollout-calls.ts";

export const CODEX_CAPABILITIES: Capabilities = Object.freeze({
  supportsMessageInjection: true,
  supportsSessionResume: true,
  supportsToolPlugins: true,
  needsBaseInstructions: true,
  needsPermissionConfig: true,
  supportsCodeIntelligenceEnforcement: false,
  emitsSubagentEvents: false,
  supportsReasoningEffort: true,
  toolPermissionFormat: "codex",
});

export interface CodexProviderOptions {
  /** A started child with its connection (see `startCodexChild`). */
  child: CodexChild;
  approver: Approver;
  daemonMcpServers?: Record<string, McpServer>;
  /** Absolute paths no sandboxed command may read (read-denied.ts), for every thread. */
  readDenied?: () => readonly string[];
  /**
   * The configured `worktreeRoots`: apart from its own cwd, a session's commands read nothing
   * under them (worktree-roots.ts).
   */
  worktreeRoots?: readonly string[];
  /** How resumed threads' rollouts are read (tests shorten the wait). */
  rollout?: RolloutCallsOptions;
  /**
   * Each session's own temp folder, the only one its workspace-write commands may write
   * (session-tmp.ts). Without it they share `/tmp` with every other session.
   */
  sessionTmp?: SessionTmp;
  logger?: Logger;
  newSessionId?: () => string;
  now?: () => Date;
}

/** The child's life: `crashed` when it exited on its own. */
type ChildLife = "ready" | "crashed" | "stopped";

/** A plan of this provider's: the codex params, and the spec they came from. */
export interface CodexSessionPlan extends SessionPlan {
  readonly spec: Spec;
  readonly codex: SpawnPlan;
}

export class CodexProvider implements Provider {
  readonly name = "codex";
  readonly #options: CodexProviderOptions;
  readonly #child: CodexChild;
  readonly #handles = new Map<string, CodexHandle>();
  #state: ChildLife = "ready";
  #exitReason: string | undefined;
  #mcpPushed: Promise<void> | undefined;
  readonly #crashListeners: Array<(reason: string) => void> = [];
  readonly #idleListeners: Array<(handle: CodexHandle) => void> = [];
  readonly #emptyWaiters: Array<() => void> = [];
  /** Sessions released to another child whose move has not finished (see `settled`). */
  readonly #leaving = new Set<CodexHandle>();
  /** Threads this child opened (codex keeps them loaded, and their writer lock, after a stop). */
  readonly #threads = new Set<string>();

  constructor(options: CodexProviderOptions) {
    this.#options = options;
    this.#child = options.child;
    const rpc = this.#child.rpc;
    rpc.onServerRequest((request) => this.#onServerRequest(request));
    rpc.onNotification((method, params) => {
      const foreign = foreignTurn(method, params);
      if (foreign) return this.#refuseForeignTurn(foreign);
      this.#options.logger?.debug("notification with no session", { method });
      if (!isQuiet(method)) unhandledNotifications.count(method, "no_session");
    });
    this.#child.onExit((reason) => this.#onChildExit(reason));
  }

  get state(): ChildLife {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get version(): string | undefined {
    return this.#child.version;
  }

  /** The last lines codex wrote to stderr. */
  stderrTail(lines?: number): string[] {
    return this.#child.stderrTail(lines);
  }

  /** Live sessions by codexd session id. */
  get handles(): ReadonlyMap<string, CodexHandle> {
    return this.#handles;
  }

  /** Its sessions and those moving away from it (a session may show on two children). */
  *liveHandles(): Iterable<CodexHandle> {
    yield* this.#handles.values();
    yield* this.#leaving;
  }

  /** Called once when the child exits unexpectedly, after every session got its error event. */
  onCrashed(listener: (reason: string) => void): void {
    this.#crashListeners.push(listener);
  }

  /** Called each time one of its sessions becomes idle (a turn ended, none queued). */
  onSessionIdle(listener: (handle: CodexHandle) => void): void {
    this.#idleListeners.push(listener);
  }

  /** Interrupts a turn codex started on a thread no session follows (foreign-turns.ts). */
  #refuseForeignTurn(turn: ForeignTurn): void {
    this.#options.logger?.warn("interrupted a turn codex started on a thread no session follows", {
      threadId: turn.threadId,
      turnId: turn.turnId,
      ...(turn.rootTurnId !== undefined && { rootTurnId: turn.rootTurnId }),
    });
    this.#child.rpc.request(
      "turn/interrupt",
      { threadId: turn.threadId, turnId: turn.turnId },
      { timeoutMs: 2000 },
    ).catch(() => {}); // it may have ended already, or codex with it
    if (turn.rootTurnId === undefined) return;
    for (const handle of this.#handles.values()) {
      if (handle.hadTurn(turn.rootTurnId)) handle.foreignTurnRefused(turn, turn.rootTurnId);
    }
  }

  /** Whether this child opened `threadId` (it may still hold it loaded, and locked). */
  opened(threadId: string): boolean {
    return this.#threads.has(threadId);
  }

  /** Threads codex holds loaded (live sessions and stopped ones it has not let go of yet). */
  async loadedThreads(): Promise<string[]> {
    const listed = await this.#child.rpc.request("thread/loaded/list", {}, {
      timeoutMs: 10_000,
    });
    return listed.data ?? [];
  }

  /**
   * Takes a live session off this child without stopping it (the pool moves it): its thread's
   * notifications no longer reach it, and codex is told to let the thread go (`thread/archive`
   * unloads it and drops its writer lock, so another child may resume it).
   */
  async release(handle: CodexHandle): Promise<void> {
    if (this.#handles.get(handle.sessionId) === handle) {
      this.#handles.delete(handle.sessionId);
      // Until its move is over this child counts it: it may have to take it back.
      this.#leaving.add(handle);
    }
    this.#child.rpc.unsubscribe(handle.threadId);
    try {
      await this.releaseThread(handle.threadId);
    } catch (error) {
      // Still here and still loaded: keep serving it rather than leave it on no child.
      if (this.#state === "ready" && !handle.closed) {
        this.#threads.add(handle.threadId);
        this.#handles.set(handle.sessionId, handle);
        this.#child.rpc.subscribe(
          handle.threadId,
          (method, params) => handle.onNotification(method, params),
        );
        throw error;
      }
    }
  }

  /** The move of a released session is over (it landed elsewhere, or back here). */
  settled(handle: CodexHandle): void {
    if (this.#leaving.delete(handle)) this.#notifyIfEmpty();
  }

  /** Resolves once this child has no live session (or it is no longer running). */
  whenEmpty(): Promise<void> {
    if (this.#isEmpty()) return Promise.resolve();
    return new Promise((resolve) => this.#emptyWaiters.push(resolve));
  }

  #isEmpty(): boolean {
    return (this.#handles.size === 0 && this.#leaving.size === 0) || this.#state !== "ready";
  }

  #notifyIfEmpty(): void {
    if (!this.#isEmpty()) return;
    for (const resolve of this.#emptyWaiters.splice(0)) resolve();
  }

  /** Lets go of a thread this child holds loaded (see `release`); a dead child holds nothing. */
  async releaseThread(threadId: string): Promise<void> {
    this.#threads.delete(threadId);
    if (this.#state !== "ready") return;
    await this.#child.rpc.request("thread/archive", { threadId }, { timeoutMs: 10_000 });
  }

  /**
   * Resumes a live session another child released (see `release`) and routes it here. The
   * returned binding is the handle's new connection (`CodexHandle.moveTo`).
   */
  async adopt(handle: CodexHandle): Promise<{
    rpc: CodexChild["rpc"];
    threadId: string;
    onClose: (handle: CodexHandle) => void;
    onIdle: (handle: CodexHandle) => void;
    rollout: RolloutCalls;
  }> {
    this.#assertReady("move session");
    const spec = handle.spec;
    // codex's thread/resume runs git in the cwd, outside the sandbox, as a start does.
    await refuseRepositoryGitPrograms(spec.cwd, "move session");
    const overrides = await this.#privateTmp(
      handle.sessionId,
      planThread(spec, await this.#sandboxOptions(spec)),
    );
    await this.#pushMcpConfig(handle.sessionId);
    const { id: threadId, path } = await this.#resumeThread(handle.threadId, overrides);
    const rollout = await RolloutCalls.open(path, this.#options.rollout);
    this.#threads.add(threadId);
    this.#handles.set(handle.sessionId, handle);
    this.#child.rpc.subscribe(threadId, (method, params) => handle.onNotification(method, params));
    return {
      rpc: this.#child.rpc,
      threadId,
      onClose: (h) => this.#onHandleClosed(h),
      onIdle: (h) => this.#onHandleIdle(h),
      rollout,
    };
  }

  /** Live sessions on this child. */
  get sessions(): number {
    return this.#handles.size;
  }

  capabilities(): Capabilities {
    return CODEX_CAPABILITIES;
  }

  status(): ProviderStatus {
    return {
      state: this.#state === "ready" ? "ready" : this.#state === "crashed" ? "degraded" : "stopped",
      ...(this.#state === "ready" && this.pid !== undefined && { pid: this.pid }),
      ...(this.version !== undefined && { version: this.version }),
      restarts: 0,
      ...(this.#exitReason !== undefined &&
        { lastError: `codex app-server exited (${this.#exitReason})` }),
    };
  }

  assertAvailable(action: string): void {
    this.#assertReady(action);
  }

  /** Translates a spec for codex (`planSpawn`); the plan's spawn and resume run on this child. */
  async plan(spec: Spec, options: PlanOptions = {}): Promise<CodexSessionPlan> {
    await refuseRepositoryGitPrograms(spec.cwd);
    const codex = planSpawn(spec, {
      ...(this.#options.daemonMcpServers && { daemonMcpServers: this.#options.daemonMcpServers }),
      ...await this.#sandboxOptions(spec),
      ...(options.fieldsSet && { fieldsSet: options.fieldsSet }),
    });
    return {
      spec,
      codex,
      ignoredFields: codex.ignoredFields,
      spawn: (spawnOptions) => this.spawnPlanned(spec, codex, spawnOptions),
      resume: (sessionId, resumeOptions) =>
        this.resumePlanned(sessionId, spec, codex, resumeOptions),
    };
  }

  /** Plans and spawns in one call (tests, and callers with no use for the plan). */
  async spawn(spec: Spec, options: SpawnOptions = {}): Promise<Handle> {
    return await (await this.plan(spec)).spawn(options);
  }

  /** Plans and resumes in one call. */
  async resume(sessionId: string, spec: Spec, options: ResumeOptions): Promise<Handle> {
    return await (await this.plan(spec)).resume(sessionId, options);
  }

  /** Starts a session on this child with a plan made by any child of the same configuration. */
  async spawnPlanned(spec: Spec, plan: SpawnPlan, options: SpawnOptions = {}): Promise<Handle> {
    this.#assertReady("spawn session");
    const sessionId = options.sessionId ?? this.#newSessionId();
    await this.#pushMcpConfig(sessionId);
    const started = await this.#child.rpc.request(
      "thread/start",
      await this.#privateTmp(sessionId, plan.threadStart),
      { ...(options.signal && { signal: options.signal }) },
    );
    const handle = this.#attach(sessionId, started.thread.id, spec, this.#freshRollout(started));
    handle.emit({
      type: "session.started",
      threadId: started.thread.id,
      ...(started.model && { model: started.model }),
      cwd: spec.cwd,
    });
    await this.#firstTurn(handle, spec.prompt, options.signal);
    return handle;
  }

  /** Resumes a session's thread on this child (see `spawnPlanned`). */
  async resumePlanned(
    sessionId: string,
    spec: Spec,
    plan: SpawnPlan,
    options: ResumeOptions,
  ): Promise<Handle> {
    this.#assertReady("resume session");
    const live = this.#handles.get(sessionId);
    if (live) await live.stop();
    const overrides = await this.#privateTmp(sessionId, plan.threadStart);
    await this.#pushMcpConfig(sessionId);
    let threadId = options.threadId;
    let prompt = spec.prompt;
    let reseeded = false;
    let rollout: RolloutCalls | undefined;
    try {
      const resumed = await this.#resumeThread(threadId, overrides, options.signal);
      threadId = resumed.id;
      rollout = await RolloutCalls.open(resumed.path, this.#options.rollout);
    } catch (error) {
      if (!isUnresumable(error)) throw error;
      // codex stores a thread only once its first turn completed: start afresh from our transcript.
      const started = await this.#child.rpc.request(
        "thread/start",
        overrides,
        { ...(options.signal && { signal: options.signal }) },
      );
      threadId = started.thread.id;
      rollout = this.#freshRollout(started);
      prompt = reseedPrompt(options.transcript ?? [], spec.prompt);
      reseeded = true;
    }
    const handle = this.#attach(sessionId, threadId, spec, rollout);
    handle.emit(
      reseeded
        ? {
          type: "system",
          subtype: "session_reseeded",
          threadId,
          previousThreadId: options.threadId,
          message:
            "codex could not resume the thread; started a new one seeded with the transcript",
        }
        : { type: "system", subtype: "session_resumed", threadId },
    );
    await this.#firstTurn(handle, prompt, options.signal);
    return handle;
  }

  /** Stops every session and the child. Idempotent. */
  async shutdown(code: "context_cancelled" | "daemon_shutdown" = "daemon_shutdown"): Promise<void> {
    if (this.#state === "stopped") return;
    const wasReady = this.#state === "ready";
    this.#state = "stopped";
    if (wasReady) await Promise.all([...this.#handles.values()].map((h) => h.stop(code)));
    this.#notifyIfEmpty();
    await this.#child.stop();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  // -------------------------------------------------------------------------------------------

  /**
   * `thread/resume`; a thread another child archived to hand it over (and a daemon stopped
   * before the next child took it) is unarchived first.
   */
  async #resumeThread(
    threadId: string,
    overrides: ReturnType<typeof planThread>,
    signal?: AbortSignal,
  ): Promise<{ id: string; path?: string | null }> {
    // thread/resume takes no experimentalRawEvents: a resumed thread shows no raw items, and its
    // tool calls are read from its rollout at `path` (rollout-calls.ts).
    const { experimentalRawEvents: _, ...resumeOverrides } = overrides;
    const resume = async () =>
      (await this.#child.rpc.request(
        "thread/resume",
        { threadId, ...resumeOverrides },
        { ...(signal && { signal }) },
      )).thread;
    try {
      return await resume();
    } catch (error) {
      if (!isArchived(error)) throw error;
      await this.#child.rpc.request("thread/unarchive", { threadId }, {
        ...(signal && { signal }),
      });
      return await resume();
    }
  }

  /**
   * A started thread's rollout, read only should codex show none of its raw items after all (a
   * codex that drops the experimental flag): its approvals are then judged on the rollout.
   */
  #freshRollout(started: { thread: { path?: string | null } }): RolloutCalls | undefined {
    const path = started.thread.path;
    return path ? RolloutCalls.fresh(path, this.#options.rollout) : undefined;
  }

  #onHandleIdle(h: CodexHandle): void {
    for (const listener of this.#idleListeners) listener(h);
  }

  #onHandleClosed(h: CodexHandle): void {
    this.#child.rpc.unsubscribe(h.threadId);
    if (this.#handles.get(h.sessionId) === h) this.#handles.delete(h.sessionId);
    // A stopped session's temp files go with it (a resume makes the folder again, empty).
    this.#options.sessionTmp?.remove(h.sessionId).catch((error: unknown) =>
      this.#options.logger?.warn("could not remove a session's temp folder", {
        sessionId: h.sessionId,
        error,
      })
    );
    this.#notifyIfEmpty();
  }

  /**
   * What a thread's sandbox needs from the file system, read at each start or move: the cwd's
   * other spellings, its git folders (read-only), the paths no command may read (credentials,
   * codexd's files, the worktree roots around the cwd), the folder MCP servers start in.
   */
  async #sandboxOptions(
    spec: Spec,
  ): Promise<Pick<CodexPlanOptions, "cwdAliases" | "readOnly" | "readDenied" | "mcpCwd">> {
    const hidden = await worktreeRootsHiddenFrom(spec.cwd, this.#options.worktreeRoots ?? []);
    const hasServers = Object.keys(spec.mcpServers ?? {}).length > 0;
    const mcpCwd = hasServers ? await this.#options.sessionTmp?.mcpCwd() : undefined;
    return {
      cwdAliases: await cwdAliases(spec.cwd),
      readOnly: await repositoryGitDirs(spec.cwd),
      readDenied: [...this.#options.readDenied?.() ?? [], ...hidden],
      ...(mcpCwd !== undefined && { mcpCwd }),
    };
  }

  /** `params` with the session's own temp folder, when this provider gives sessions one. */
  async #privateTmp<T extends { config?: { [key: string]: unknown } | null }>(
    sessionId: string,
    params: T,
  ): Promise<T> {
    const tmp = this.#options.sessionTmp;
    return tmp ? withPrivateTmp(params, await tmp.ensure(sessionId)) : params;
  }

  #attach(sessionId: string, threadId: string, spec: Spec, rollout?: RolloutCalls): CodexHandle {
    const handle = new CodexHandle({
      sessionId,
      threadId,
      spec,
      ...(rollout && { rollout }),
      rpc: this.#child.rpc,
      approver: this.#options.approver,
      onClose: (h) => this.#onHandleClosed(h),
      onIdle: (h) => this.#onHandleIdle(h),
      ...(this.#options.now && { now: this.#options.now }),
      ...(this.#options.logger && {
        logger: this.#options.logger.child({ sessionId, threadId }),
      }),
    });
    this.#handles.set(sessionId, handle);
    this.#threads.add(threadId);
    this.#child.rpc.subscribe(threadId, (method, params) => handle.onNotification(method, params));
    return handle;
  }

  async #firstTurn(handle: CodexHandle, prompt: string, signal?: AbortSignal): Promise<void> {
    const onAbort = () => void handle.stop();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await handle.startTurn(prompt, signal ? { signal } : {});
    } catch (error) {
      await handle.stop();
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Daemon-wide MCP servers, once per provider lifetime; -32601 is a soft failure. */
  #pushMcpConfig(sessionId: string): Promise<void> {
    const servers = this.#options.daemonMcpServers;
    if (!servers || Object.keys(servers).length === 0) return Promise.resolve();
    this.#mcpPushed ??= this.#writeMcpConfig(servers).catch((error: unknown) => {
      if (error instanceof RpcError && error.code === -32601) {
        this.#options.logger?.warn("codex does not support config/batchWrite", { sessionId });
        return;
      }
      this.#mcpPushed = undefined; // try again with the next session
      throw error;
    });
    return this.#mcpPushed;
  }

  async #writeMcpConfig(servers: Record<string, McpServer>): Promise<void> {
    const edit = mcpBatchWrite(servers, await this.#options.sessionTmp?.mcpCwd());
    await this.#child.rpc.request("config/batchWrite", edit);
  }

  async #onServerRequest(
    request: { method: string; params?: unknown },
  ): Promise<unknown> {
    const threadId = threadIdOf(request.params);
    const handle = threadId === undefined ? undefined : this.#byThread(threadId);
    if (!handle) {
      throw new RpcError(request.method, -32602, `No codexd session for thread ${threadId}`);
    }
    return await handle.onServerRequest(request.method, request.params);
  }

  #byThread(threadId: string): CodexHandle | undefined {
    for (const handle of this.#handles.values()) if (handle.threadId === threadId) return handle;
    return undefined;
  }

  #onChildExit(reason: string): void {
    if (this.#state !== "ready") return;
    this.#state = "crashed";
    this.#exitReason = reason;
    this.#options.logger?.error("codex app-server exited", {
      reason,
      sessions: this.#handles.size,
    });
    for (const handle of [...this.#handles.values()]) handle.crashed(reason);
    for (const listener of this.#crashListeners) listener(reason);
    this.#notifyIfEmpty();
  }

  #assertReady(action: string): void {
    if (this.#state === "ready") return;
    throw new ProviderUnavailable(
      this.#state === "crashed"
        ? `Cannot ${action}: codex app-server exited (${this.#exitReason})`
        : `Cannot ${action}: the provider is shut down`,
    );
  }

  #newSessionId(): string {
    return this.#options.newSessionId?.() ?? `ses_${crypto.randomUUID().replaceAll("-", "")}`;
  }
}

/** The cwd's realpath when it differs (codex looks a project's trust up by both spellings). */
async function cwdAliases(cwd: string): Promise<string[]> {
  const real = await realpath(cwd).catch(() => undefined);
  return real !== undefined && real !== cwd ? [real] : [];
}

function threadIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const threadId = (params as { threadId?: unknown }).threadId;
  return typeof threadId === "string" ? threadId : undefined;
}

/** codex answers thread/resume this way for a thread that was archived (handed over). */
function isArchived(error: unknown): boolean {
  return error instanceof RpcError && /is archived/i.test(error.message);
}

/** codex answers thread/resume this way for a thread it never stored. */
function isUnresumable(error: unknown): boolean {
  return error instanceof RpcError &&
    /no rollout found|not found|no such thread/i.test(error.message);
}

/** The first prompt of a re-seeded thread: the earlier conversation, then the new prompt. */
export function reseedPrompt(transcript: readonly TranscriptEntry[], prompt: string): string {
  if (transcript.length === 0) return prompt;
  const history = transcript
    .map((entry) => `${entry.role === "user" ? "User" : "Assistant"}: ${entry.text}`)
    .join("\n\n");
  return `This session continues an earlier conversation whose thread could not be restored. ` +
    `Here it is:\n\n${history}\n\nNow continue with:\n\n${prompt}`;
}
