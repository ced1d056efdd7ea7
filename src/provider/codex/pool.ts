/**
 * A pool of codex app-server children (`codex.pool`), each kept running by a CodexSupervisor of
 * its own, all on one CODEX_HOME.
 *
 * Sharing the home is safe (checked against codex 0.169 in test/provider/codex/shared-home.test.ts):
 * codex's sqlite files are WAL, each thread has its own rollout file, and a thread has one writer
 * at a time, enforced across processes (`<home>/thread-writer-locks`): a child holding a thread
 * loaded (for 30 minutes after its last unsubscribe) makes `thread/resume` elsewhere fail with
 * "already has an active writer". The lock goes with the child's exit, a kill -9 included, or
 * with `thread/archive`, which unloads the thread; another child then `thread/unarchive`s and
 * resumes it with its whole history. So:
 *
 * - A session is placed on the least-loaded child and stays there; its resume goes back to the
 *   child that last held its thread when that child still runs, anywhere otherwise.
 * - A child that dies ends only its own sessions (`app_server_crashed`, by its provider); their
 *   threads are unlocked with it, so each can be resumed at once on another child while the
 *   supervisor restarts this one with backoff.
 * - Replacing a child (recycling, rolling restart) starts the new child first, then moves each
 *   of the old child's sessions when it is idle between turns (archive on the old child, resume
 *   on the new; turns sent meanwhile wait in the session's queue), and stops the old child once
 *   it has none left. A running turn is never cut short.
 */
import { errorMessage, InvalidInput, ProviderUnavailable } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { CodexHandle } from "./handle.ts";
import type { SpawnPlan } from "./plan.ts";
import { CODEX_CAPABILITIES, type CodexProvider } from "./provider.ts";
import type { Spec } from "../spec.ts";
import type {
  Capabilities,
  Handle,
  PlanOptions,
  Provider,
  ProviderState,
  ProviderStatus,
  ResumeOptions,
  SessionPlan,
} from "../types.ts";
import { type BackoffPolicy, CodexSupervisor } from "./supervisor.ts";
import { readRss } from "./rss.ts";
import { type LiveCwd, realOf, refuseNestedSessions } from "./nested-sessions.ts";

export interface RecycleLimits {
  /** A child whose resident memory passes this is replaced (bytes). */
  maxRssBytes?: number;
  /** A child holding more threads loaded than it has live sessions is replaced. */
  maxStoppedThreads?: number;
  /** How often the limits are checked (default 30 s; 0: only when `checkRecycle` is called). */
  intervalMs?: number;
}

export interface PoolOptions {
  /** Children kept running. */
  size: number;
  /** Starts a child with the current codex configuration (asked again for each new child). */
  startProvider: () => Promise<CodexProvider>;
  backoff?: BackoffPolicy;
  recycle?: RecycleLimits;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
  /** A child's resident memory in bytes (default: VmRSS of /proc/<pid>/status). */
  readRss?: (pid: number) => number | undefined;
  startStderr?: () => string[];
  logger?: Logger;
}

export type ChildState = ProviderState | "draining";

export interface ChildInfo {
  /** Stable per child for the daemon's lifetime (a replacement gets a new one). */
  id: number;
  pid: number | null;
  state: ChildState;
  sessions: number;
  rssBytes: number | null;
  version: string | null;
  restarts: number;
}

export interface PoolStatus extends ProviderStatus {
  children: ChildInfo[];
}

export interface RestartReport {
  replaced: number;
  failed: Array<{ child: number; error: string }>;
}

interface Slot {
  id: number;
  supervisor: CodexSupervisor;
  draining: boolean;
  /** Providers whose idle/crash hooks this slot already registered. */
  watched: WeakSet<CodexProvider>;
}

/** The codex provider as the daemon sees it: every child of the pool, as one Provider. */
export class CodexPool implements Provider {
  readonly name = "codex";
  readonly #o: PoolOptions;
  #slots: Slot[] = [];
  /** Spawns and resumes under way per child (see #startOn). */
  readonly #starting = new Map<CodexProvider, number>();
  #nextId = 0;
  #stopped = false;
  #restarting: Promise<RestartReport> | undefined;
  readonly #recycling = new Set<number>();
  /** Each live session's real cwd, resolved once (nested-sessions.ts). */
  readonly #realCwds = new WeakMap<CodexHandle, Promise<string>>();
  /** The cwds of sessions starting or resuming now. */
  readonly #startingCwds = new Set<LiveCwd>();
  #timer: { cancel(): void } | undefined;

  constructor(options: PoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new Error(`codex.pool must be a positive integer (got ${options.size})`);
    }
    this.#o = options;
  }

  /** Starts every child; resolves once each attempt finished (ready or degraded). */
  async start(): Promise<void> {
    const slots = Array.from({ length: this.#o.size }, () => this.#newSlot());
    this.#slots = slots;
    await Promise.all(slots.map((slot) => slot.supervisor.start()));
    this.#scheduleCheck();
  }

  /** Resolves when some child is ready for the first time. */
  whenReady(): Promise<void> {
    return Promise.race(this.#slots.map((slot) => slot.supervisor.whenReady()));
  }

  /** The children's providers that run (draining ones included). */
  get providers(): CodexProvider[] {
    return this.#slots.flatMap((slot) => slot.supervisor.provider ?? []);
  }

  capabilities(): Capabilities {
    return CODEX_CAPABILITIES;
  }

  /**
   * Runs `start` with `cwd` counted among the live sessions' cwds, after checking it against them
   * again: the check at planning time cannot see a session planned at the same moment, so of two
   * nesting starts that overlap the second is refused here (nested-sessions.ts).
   */
  async #startingIn<T>(
    sessionId: string | undefined,
    cwd: string,
    start: () => Promise<T>,
  ): Promise<T> {
    const others = [...this.#liveCwds()];
    const entry: LiveCwd = { sessionId: sessionId ?? "(starting)", cwd, real: realOf(cwd) };
    this.#startingCwds.add(entry);
    try {
      await refuseNestedSessions(cwd, others);
      return await start();
    } finally {
      this.#startingCwds.delete(entry);
    }
  }

  /** Every live session's cwd, on every child (draining ones, moving and starting included). */
  *#liveCwds(): Iterable<LiveCwd> {
    yield* this.#startingCwds;
    for (const provider of this.providers) {
      for (const handle of provider.liveHandles()) {
        let real = this.#realCwds.get(handle);
        if (!real) this.#realCwds.set(handle, real = realOf(handle.spec.cwd));
        yield { sessionId: handle.sessionId, cwd: handle.spec.cwd, real };
      }
    }
  }

  /** @throws ProviderUnavailable while no child can take a session (the message says when). */
  assertAvailable(action: string): void {
    if (this.#placeable().length > 0) return;
    const status = this.status();
    throw new ProviderUnavailable(
      `Cannot ${action}: codex app-server is ${status.state}` +
        (status.lastError ? ` (${status.lastError})` : "") +
        (status.nextAttemptInMs !== undefined
          ? `; next start in ${status.nextAttemptInMs} ms`
          : ""),
    );
  }

  /**
   * Plans on a ready child (every child has the same configuration); the plan's spawn goes to
   * the least-loaded child when it runs, its resume back to the thread's last child.
   */
  async plan(spec: Spec, options: PlanOptions = {}): Promise<SessionPlan> {
    await refuseNestedSessions(spec.cwd, this.#liveCwds());
    const planned = await this.#leastLoaded().plan(spec, options);
    return {
      ignoredFields: planned.ignoredFields,
      spawn: (spawnOptions) =>
        this.#startingIn(spawnOptions?.sessionId, spec.cwd, () =>
          this.#startOn(
            this.#leastLoaded(),
            (child) => child.spawnPlanned(spec, planned.codex, spawnOptions),
          )),
      resume: (sessionId, resumeOptions) =>
        this.#startingIn(
          sessionId,
          spec.cwd,
          () => this.#resume(sessionId, spec, planned.codex, resumeOptions),
        ),
    };
  }

  /** With one child, exactly its supervisor's status; with more, the pool's in the same terms. */
  status(): PoolStatus {
    const children = this.children();
    const statuses = this.#slots.map((slot) => slot.supervisor.status());
    const serving = this.#slots.filter((slot) => !slot.draining);
    if (serving.length === 1) return { ...serving[0].supervisor.status(), children };
    const ready = statuses.find((s) => s.state === "ready");
    const notReady = statuses.find((s) => s.state !== "ready");
    const state: ProviderState = this.#stopped
      ? "stopped"
      : !notReady
      ? "ready"
      : ready
      ? "degraded"
      : notReady.state;
    const lastError = statuses.find((s) => s.lastError !== undefined)?.lastError;
    const next = statuses.flatMap((s) => s.nextAttemptInMs ?? []);
    return {
      state,
      ...(ready?.pid !== undefined && { pid: ready.pid }),
      ...((ready ?? statuses[0])?.version !== undefined &&
        { version: (ready ?? statuses[0]).version }),
      restarts: statuses.reduce((sum, s) => sum + s.restarts, 0),
      ...(lastError !== undefined && { lastError }),
      ...(next.length > 0 && { nextAttemptInMs: Math.min(...next) }),
      children,
    };
  }

  children(): ChildInfo[] {
    return this.#slots.map((slot) => {
      const status = slot.supervisor.status();
      const provider = slot.supervisor.provider;
      const pid = provider?.pid;
      return {
        id: slot.id,
        pid: pid ?? null,
        state: slot.draining && status.state === "ready" ? "draining" : status.state,
        sessions: provider?.sessions ?? 0,
        rssBytes: pid === undefined ? null : this.#rss(pid) ?? null,
        version: status.version ?? null,
        restarts: status.restarts,
      };
    });
  }

  /** The last stderr lines of a child that is not ready (else of the first child). */
  stderrTail(lines = 20): string[] {
    const slot = this.#slots.find((s) => s.supervisor.status().state !== "ready") ??
      this.#slots[0];
    return slot?.supervisor.stderrTail(lines) ?? [];
  }

  /** Stops every child (their sessions end with `daemon_shutdown`). Idempotent. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await Promise.all(this.#slots.map((slot) => slot.supervisor.stop()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  /**
   * Replaces every child, one at a time, the recycling way: new child first, sessions moved
   * between turns, old child stopped when empty. The new children start with whatever
   * `startProvider` starts now (a reloaded `codex.bin`). One restart at a time: a second call
   * while one runs gets the running one's report.
   */
  restart(): Promise<RestartReport> {
    this.#restarting ??= (async () => {
      const report: RestartReport = { replaced: 0, failed: [] };
      try {
        for (const slot of [...this.#slots]) {
          if (this.#stopped) break;
          if (!this.#slots.includes(slot) || slot.draining) continue;
          const error = await this.#replace(slot, "rolling restart");
          if (error === undefined) report.replaced++;
          else report.failed.push({ child: slot.id, error });
        }
        return report;
      } finally {
        this.#restarting = undefined;
      }
    })();
    return this.#restarting;
  }

  /**
   * Compares each child with the recycle limits and starts replacing those over them (not
   * awaited: a drain lasts until the child's turns end). Returns the ids of children recycled.
   */
  async checkRecycle(): Promise<number[]> {
    const limits = this.#o.recycle ?? {};
    if (this.#stopped || this.#restarting) return [];
    const recycled: number[] = [];
    for (const slot of [...this.#slots]) {
      const provider = slot.supervisor.provider;
      if (!provider || slot.draining || this.#recycling.has(slot.id)) continue;
      let reason: string | undefined;
      const rss = provider.pid === undefined ? undefined : this.#rss(provider.pid);
      if (limits.maxRssBytes !== undefined && rss !== undefined && rss > limits.maxRssBytes) {
        reason = `RSS ${rss} bytes over ${limits.maxRssBytes}`;
      } else if (limits.maxStoppedThreads !== undefined) {
        const live = new Set([...provider.handles.values()].map((h) => h.threadId));
        const loaded = await provider.loadedThreads().catch(() => []);
        const stopped = loaded.filter((id) => !live.has(id)).length;
        if (stopped > limits.maxStoppedThreads) {
          reason = `${stopped} stopped threads loaded, over ${limits.maxStoppedThreads}`;
        }
      }
      if (reason === undefined) continue;
      recycled.push(slot.id);
      this.#recycling.add(slot.id);
      void this.#replace(slot, `recycle: ${reason}`).finally(() => this.#recycling.delete(slot.id));
    }
    return recycled;
  }

  // -------------------------------------------------------------------------------------------

  #newSlot(): Slot {
    const slot: Slot = {
      id: this.#nextId++,
      draining: false,
      watched: new WeakSet(),
      supervisor: undefined as unknown as CodexSupervisor,
    };
    slot.supervisor = new CodexSupervisor({
      startProvider: this.#o.startProvider,
      ...(this.#o.backoff && { backoff: this.#o.backoff }),
      ...(this.#o.now && { now: this.#o.now }),
      ...(this.#o.setTimer && { setTimer: this.#o.setTimer }),
      ...(this.#o.startStderr && { startStderr: this.#o.startStderr }),
      ...(this.#o.logger && { logger: this.#o.logger.child({ child: slot.id }) }),
      onReady: (provider) => this.#watch(slot, provider),
    });
    return slot;
  }

  #watch(slot: Slot, provider: CodexProvider): void {
    if (slot.watched.has(provider)) return;
    slot.watched.add(provider);
    // A draining child whose child died is not restarted: its replacement already runs.
    provider.onCrashed(() => {
      if (slot.draining) void slot.supervisor.stop();
    });
  }

  /** Ready children that take new sessions, least loaded first. */
  #placeable(): Slot[] {
    return this.#slots
      .filter((slot) => !slot.draining && slot.supervisor.provider !== undefined)
      .sort((a, b) => this.#load(a.supervisor.provider!) - this.#load(b.supervisor.provider!));
  }

  /** A child's live sessions and those still starting on it. */
  #load(child: CodexProvider): number {
    return child.sessions + (this.#starting.get(child) ?? 0);
  }

  /**
   * Runs a spawn or resume placed on `child`, counted as its load until it is done: a session
   * counts in `sessions` only once codex started its thread, so spawns arriving together would
   * otherwise all see the same least-loaded child (a burst of 12 spawns all went to one of 4).
   */
  async #startOn<T>(child: CodexProvider, start: (child: CodexProvider) => Promise<T>): Promise<T> {
    this.#starting.set(child, (this.#starting.get(child) ?? 0) + 1);
    try {
      return await start(child);
    } finally {
      const left = this.#starting.get(child)! - 1;
      if (left > 0) this.#starting.set(child, left);
      else this.#starting.delete(child);
    }
  }

  #leastLoaded(): CodexProvider {
    const slot = this.#placeable()[0];
    if (!slot) throw new ProviderUnavailable("No codex app-server is ready");
    return slot.supervisor.provider!;
  }

  /**
   * Back to the child that last held the thread while it runs (it may still hold it loaded, and
   * locked); from a draining child the thread is released first; anywhere otherwise.
   */
  async #resume(
    sessionId: string,
    spec: Spec,
    plan: SpawnPlan,
    options: ResumeOptions,
  ): Promise<Handle> {
    const owner = this.#slots.find((slot) =>
      slot.supervisor.provider?.opened(options.threadId) ?? false
    );
    const ownerProvider = owner?.supervisor.provider;
    if (owner && ownerProvider && !owner.draining) {
      return await ownerProvider.resumePlanned(sessionId, spec, plan, options);
    }
    if (ownerProvider) {
      const live = ownerProvider.handles.get(sessionId);
      if (live) await live.stop();
      await ownerProvider.releaseThread(options.threadId).catch((error) =>
        this.#o.logger?.warn("could not release a thread on a draining child", {
          child: owner!.id,
          error: errorMessage(error),
        })
      );
    }
    return await this.#startOn(
      this.#leastLoaded(),
      (child) => child.resumePlanned(sessionId, spec, plan, options),
    );
  }

  /**
   * Replaces one child: start the new one, move the old one's sessions as they become idle,
   * stop it once empty. Returns an error message when nothing was replaced.
   */
  async #replace(old: Slot, why: string): Promise<string | undefined> {
    const fresh = this.#newSlot();
    this.#o.logger?.info("replacing codex app-server", { child: old.id, by: fresh.id, why });
    await fresh.supervisor.start();
    const target = fresh.supervisor.provider;
    if (!target || this.#stopped) {
      const error = fresh.supervisor.status().lastError ?? "the new child did not start";
      await fresh.supervisor.stop();
      this.#o.logger?.error("codex app-server not replaced", { child: old.id, error });
      return error;
    }
    // The new child takes the old one's place; the old one only finishes what it runs.
    old.draining = true;
    const index = this.#slots.indexOf(old);
    this.#slots = index < 0 ? [...this.#slots, fresh] : [
      ...this.#slots.slice(0, index),
      fresh,
      old,
      ...this.#slots.slice(index + 1),
    ];
    const source = old.supervisor.provider;
    if (source) {
      source.onSessionIdle((handle) => void this.#move(handle, source));
      for (const handle of [...source.handles.values()]) {
        if (handle.idle) void this.#move(handle, source);
      }
      await source.whenEmpty();
    }
    await old.supervisor.stop();
    this.#slots = this.#slots.filter((slot) => slot !== old);
    this.#o.logger?.info("codex app-server replaced", { child: old.id, by: fresh.id });
    return undefined;
  }

  /** Moves an idle session from a draining child to the least-loaded serving one. */
  async #move(handle: CodexHandle, from: CodexProvider): Promise<void> {
    if (this.#stopped || this.#placeable().length === 0) return; // it stays until one is back
    let to: CodexProvider | undefined;
    try {
      const moved = await handle.moveTo(async () => {
        await from.release(handle);
        try {
          to = this.#leastLoaded();
          return await to.adopt(handle);
        } catch (error) {
          if (error instanceof InvalidInput) {
            // Its repository now configures a program codex's git would run on any child.
            handle.unsafeRepository(error.message);
            throw error;
          }
          this.#o.logger?.warn("could not move a session; it stays on its child", {
            sessionId: handle.sessionId,
            error: errorMessage(error),
          });
          if (from.state === "ready") return await from.adopt(handle);
          handle.crashed(`its codex app-server exited while the session moved`);
          throw error;
        }
      });
      if (moved && handle.closed) {
        // Stopped while it moved: the child it landed on lets go of the thread.
        const landed = to?.handles.get(handle.sessionId) === handle ? to : from;
        await landed.release(handle).catch(() => {});
        landed.settled(handle);
      } else if (moved && to && to.handles.get(handle.sessionId) === handle) {
        // It landed on a child that started draining meanwhile: on it goes.
        const slot = this.#slots.find((s) => s.supervisor.provider === to);
        if (slot?.draining && handle.idle) void this.#move(handle, to);
      }
    } catch (error) {
      this.#o.logger?.warn("moving a session failed", {
        sessionId: handle.sessionId,
        error: errorMessage(error),
      });
    } finally {
      from.settled(handle);
    }
  }

  #scheduleCheck(): void {
    const interval = this.#o.recycle?.intervalMs ?? 30_000;
    const limits = this.#o.recycle;
    if (this.#stopped || interval <= 0) return;
    if (limits?.maxRssBytes === undefined && limits?.maxStoppedThreads === undefined) return;
    const setTimer = this.#o.setTimer ?? unrefTimer;
    this.#timer = setTimer(() => {
      void this.checkRecycle().finally(() => this.#scheduleCheck());
    }, interval);
  }

  #rss(pid: number): number | undefined {
    return (this.#o.readRss ?? readRss)(pid);
  }
}

function unrefTimer(fn: () => void, ms: number): { cancel(): void } {
  const timer = setTimeout(fn, ms);
  (timer as { unref?: () => void }).unref?.();
  return { cancel: () => clearTimeout(timer) };
}
