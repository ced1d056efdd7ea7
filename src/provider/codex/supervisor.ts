/**
 * Keeps one codex provider running. When the child dies, the provider's sessions end with
 * `app_server_crashed` (the provider does that) and the supervisor starts a new child with
 * backoff: 0.5 s doubling to 30 s, reset after 60 s healthy. A binary that dies at once does
 * not spin: the backoff holds and `status()` says `degraded` with the last error.
 */
import { errorMessage } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { ProviderState, ProviderStatus } from "../types.ts";
import type { CodexProvider } from "./provider.ts";

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** A child that stayed up this long resets the backoff. */
  resetAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 500,
  maxMs: 30_000,
  resetAfterMs: 60_000,
};

export interface SupervisorOptions {
  /** Starts a child and wraps it in a provider; rejects when codex cannot start. */
  startProvider: () => Promise<CodexProvider>;
  backoff?: BackoffPolicy;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
  logger?: Logger;
  /** The last stderr lines of a child that failed to start (it never became a provider). */
  startStderr?: () => string[];
  /** Called with each new provider (to re-push configuration, update metrics, ...). */
  onReady?: (provider: CodexProvider) => void;
}

export class CodexSupervisor {
  readonly #options: SupervisorOptions;
  readonly #backoff: BackoffPolicy;
  #state: ProviderState = "starting";
  #provider: CodexProvider | undefined;
  #failures = 0;
  #restarts = 0;
  #startedAt = 0;
  #lastError: string | undefined;
  /** The last attempt failed before a provider existed: its stderr is `startStderr`'s. */
  #startFailed = false;
  #timer: { cancel(): void } | undefined;
  #nextAttemptAt: number | undefined;
  #firstReady: Promise<void>;
  #resolveFirstReady!: () => void;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#firstReady = new Promise((resolve) => (this.#resolveFirstReady = resolve));
  }

  /** Starts the first child; resolves once an attempt finished (ready or degraded). */
  async start(): Promise<void> {
    await this.#attempt();
  }

  /** Resolves when a provider is ready for the first time. */
  whenReady(): Promise<void> {
    return this.#firstReady;
  }

  /** The running provider, or undefined while codex is down. */
  get provider(): CodexProvider | undefined {
    return this.#state === "ready" ? this.#provider : undefined;
  }

  /** The last stderr lines of the current (or last) codex child. */
  stderrTail(lines = 20): string[] {
    if (this.#startFailed) return this.#options.startStderr?.().slice(-lines) ?? [];
    return this.#provider?.stderrTail(lines) ?? [];
  }

  status(): ProviderStatus {
    const provider = this.#provider;
    return {
      state: this.#state,
      ...(this.#state === "ready" && provider?.pid !== undefined && { pid: provider.pid }),
      ...(provider?.version !== undefined && { version: provider.version }),
      restarts: this.#restarts,
      ...(this.#lastError !== undefined && { lastError: this.#lastError }),
      ...(this.#nextAttemptAt !== undefined &&
        { nextAttemptInMs: Math.max(0, this.#nextAttemptAt - this.#now()) }),
    };
  }

  /** Stops the provider (its sessions end with `daemon_shutdown`) and any pending restart. */
  async stop(): Promise<void> {
    if (this.#state === "stopped" || this.#state === "stopping") return;
    this.#state = "stopping";
    this.#timer?.cancel();
    await this.#provider?.shutdown("daemon_shutdown");
    this.#state = "stopped";
  }

  async #attempt(): Promise<void> {
    this.#nextAttemptAt = undefined;
    if (this.#isStopping()) return;
    try {
      const provider = await this.#options.startProvider();
      if (this.#isStopping()) {
        await provider.shutdown();
        return;
      }
      this.#provider = provider;
      this.#startFailed = false;
      this.#state = "ready";
      this.#startedAt = this.#now();
      this.#lastError = undefined;
      this.#watchProvider(provider);
      this.#options.onReady?.(provider);
      this.#resolveFirstReady();
    } catch (error) {
      this.#lastError = errorMessage(error);
      this.#startFailed = true;
      this.#options.logger?.error("codex app-server failed to start", { error: this.#lastError });
      this.#scheduleRestart();
    }
  }

  #watchProvider(provider: CodexProvider): void {
    provider.onCrashed(() => this.onProviderCrashed(provider));
  }

  /** The provider's child died: schedule a new one. */
  onProviderCrashed(provider: CodexProvider): void {
    if (this.#provider !== provider || this.#state !== "ready") return;
    const upFor = this.#now() - this.#startedAt;
    if (upFor >= this.#backoff.resetAfterMs) this.#failures = 0;
    this.#lastError = "codex app-server exited";
    this.#options.logger?.warn("codex app-server exited; restarting", { upForMs: upFor });
    this.#scheduleRestart();
  }

  #isStopping(): boolean {
    return this.#state === "stopping" || this.#state === "stopped";
  }

  #scheduleRestart(): void {
    if (this.#isStopping()) return;
    this.#state = "degraded";
    const delay = Math.min(this.#backoff.maxMs, this.#backoff.initialMs * 2 ** this.#failures);
    this.#failures++;
    this.#nextAttemptAt = this.#now() + delay;
    const setTimer = this.#options.setTimer ?? defaultTimer;
    this.#timer = setTimer(() => {
      this.#restarts++;
      void this.#attempt();
    }, delay);
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

function defaultTimer(fn: () => void, ms: number): { cancel(): void } {
  const timer = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(timer) };
}
