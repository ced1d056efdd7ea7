/**
 * An in-memory Provider: the daemon's second implementation of the provider contract, with no
 * codex behind it. Each turn plays a script (events the test chose); a turn whose script ends
 * without `result` or `error` runs until the test ends it (`finish`, `fail`), so a test decides
 * exactly when a session is busy, idle, stopped or crashed.
 *
 * It lives in test/support, not src/: nothing in the product runs sessions without codex, and
 * the shipped binary should not carry a provider that only tests use.
 */
import { NoActiveTurn, ProviderUnavailable, WrongState } from "../../src/errors.ts";
import { EventStream } from "../../src/provider/event-stream.ts";
import {
  type ErrorCode,
  type EventBody,
  isTerminal,
  type SessionEvent,
  type Usage,
} from "../../src/provider/events.ts";
import type { Spec } from "../../src/provider/spec.ts";
import type {
  Capabilities,
  Handle,
  IgnoredField,
  InjectReceipt,
  PlanOptions,
  Provider,
  ProviderStatus,
  ResumeOptions,
  SendReceipt,
  SessionPlan,
  SpawnOptions,
  StopCode,
  StopDetail,
} from "../../src/provider/types.ts";

/** The events of a turn after `turn.started`; ending with a terminal event ends the turn. */
export type TurnScript = (
  prompt: string,
  turn: { sessionId: string; turnId: string },
) => EventBody[];

export const MEMORY_CAPABILITIES: Capabilities = Object.freeze({
  supportsMessageInjection: true,
  supportsSessionResume: true,
  supportsToolPlugins: false,
  needsBaseInstructions: false,
  needsPermissionConfig: false,
  supportsCodeIntelligenceEnforcement: false,
  emitsSubagentEvents: false,
  supportsReasoningEffort: false,
  toolPermissionFormat: "codex",
});

export interface MemoryProviderOptions {
  /** Each turn's events; by default a turn runs until the test ends it. */
  script?: TurnScript;
  /** Planning refuses a spec with the error this returns (the way codex's plan refuses one). */
  refuse?: (spec: Spec) => Error | undefined;
  /** The fields a plan reports as ignored (default: none). */
  ignoredFields?: (spec: Spec, fieldsSet: readonly string[] | undefined) => IgnoredField[];
  now?: () => Date;
}

export class MemoryProvider implements Provider {
  readonly name = "memory";
  /** Live sessions by id. */
  readonly handles = new Map<string, MemoryHandle>();
  /** Every spec planned, in order: what the daemon asked this provider for. */
  readonly planned: Spec[] = [];
  /** While set, starting a planned session rejects with it. */
  startFailure: Error | undefined;
  readonly #options: MemoryProviderOptions;
  #state: ProviderStatus["state"] = "ready";
  #lastError: string | undefined;
  #restarts = 0;
  #threads = 0;

  constructor(options: MemoryProviderOptions = {}) {
    this.#options = options;
  }

  capabilities(): Capabilities {
    return MEMORY_CAPABILITIES;
  }

  status(): ProviderStatus {
    return {
      state: this.#state,
      ...(this.#state === "ready" && { pid: 4242 }),
      version: "memory",
      restarts: this.#restarts,
      ...(this.#lastError !== undefined && { lastError: this.#lastError }),
    };
  }

  stderrTail(): string[] {
    return this.#state === "ready" ? [] : [`memory provider: ${this.#lastError}`];
  }

  assertAvailable(action: string): void {
    if (this.#state === "ready") return;
    throw new ProviderUnavailable(
      `Cannot ${action}: the memory provider is ${this.#state}` +
        (this.#lastError ? ` (${this.#lastError})` : ""),
    );
  }

  plan(spec: Spec, options: PlanOptions = {}): Promise<SessionPlan> {
    const refusal = this.#options.refuse?.(spec);
    if (refusal) return Promise.reject(refusal);
    this.planned.push(spec);
    return Promise.resolve({
      ignoredFields: this.#options.ignoredFields?.(spec, options.fieldsSet) ?? [],
      spawn: (spawnOptions: SpawnOptions = {}) => {
        const handle = this.#open(spawnOptions.sessionId ?? `ses_mem${this.#threads}`, spec);
        if (!(handle instanceof MemoryHandle)) return handle;
        handle.emit({ type: "session.started", threadId: handle.threadId, cwd: spec.cwd });
        return handle.firstTurn(spec.prompt);
      },
      resume: (sessionId: string, resumeOptions: ResumeOptions) => {
        const handle = this.#open(sessionId, spec, resumeOptions.threadId);
        if (!(handle instanceof MemoryHandle)) return handle;
        handle.emit({ type: "system", subtype: "session_resumed", threadId: handle.threadId });
        return handle.firstTurn(spec.prompt);
      },
    });
  }

  /** The backend dies: every live session ends with `app_server_crashed`. */
  crash(reason = "killed by the test"): void {
    this.#state = "degraded";
    this.#lastError = `memory backend exited: ${reason}`;
    for (const handle of [...this.handles.values()]) handle.crash(reason);
  }

  /** The backend is back after a crash. */
  recover(): void {
    this.#state = "ready";
    this.#lastError = undefined;
    this.#restarts++;
  }

  async shutdown(): Promise<void> {
    if (this.#state === "stopped") return;
    this.#state = "stopped";
    await Promise.all([...this.handles.values()].map((h) => h.stop("daemon_shutdown")));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  #open(sessionId: string, spec: Spec, threadId?: string): MemoryHandle | Promise<never> {
    try {
      this.assertAvailable("start session");
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.startFailure) return Promise.reject(this.startFailure);
    const handle = new MemoryHandle({
      sessionId,
      threadId: threadId ?? `thr_mem${++this.#threads}`,
      spec,
      ...(this.#options.script && { script: this.#options.script }),
      ...(this.#options.now && { now: this.#options.now }),
      onClose: (h) => {
        if (this.handles.get(h.sessionId) === h) this.handles.delete(h.sessionId);
      },
    });
    this.handles.set(sessionId, handle);
    return handle;
  }
}

interface MemoryHandleOptions {
  sessionId: string;
  threadId: string;
  spec: Spec;
  script?: TurnScript;
  now?: () => Date;
  onClose: (handle: MemoryHandle) => void;
}

export class MemoryHandle implements Handle {
  readonly sessionId: string;
  readonly threadId: string;
  /** Every turn's prompt, in the order the turns started. */
  readonly prompts: string[] = [];
  /** Texts steered into a running turn. */
  readonly steered: string[] = [];
  readonly #options: MemoryHandleOptions;
  readonly #stream = new EventStream<SessionEvent>();
  readonly #queue: string[] = [];
  #turn: string | undefined;
  #turns = 0;
  #closing = false;

  constructor(options: MemoryHandleOptions) {
    this.sessionId = options.sessionId;
    this.threadId = options.threadId;
    this.#options = options;
  }

  get events(): AsyncIterable<SessionEvent> {
    return this.#stream;
  }

  get busy(): boolean {
    return this.#turn !== undefined;
  }

  get queuedTurns(): number {
    return this.#queue.length;
  }

  get closed(): boolean {
    return this.#stream.closed;
  }

  /** The running turn's id. */
  get turnId(): string | undefined {
    return this.#turn;
  }

  /** Emits an event stamped with the session id and time. */
  emit(body: EventBody): void {
    const ts = (this.#options.now?.() ?? new Date()).toISOString();
    this.#stream.push({ ...body, sessionId: this.sessionId, ts });
  }

  /** @internal The provider starts the first turn; resolves with the started handle. */
  firstTurn(prompt: string): Promise<Handle> {
    this.#start(prompt);
    return Promise.resolve(this);
  }

  send(prompt: string): Promise<SendReceipt> {
    if (this.#closing) {
      return Promise.reject(
        new WrongState(`Cannot start a turn: session ${this.sessionId} stopped`),
      );
    }
    if (this.busy) {
      this.#queue.push(prompt);
      return Promise.resolve({ queued: true });
    }
    return Promise.resolve({ turnId: this.#start(prompt), queued: false });
  }

  inject(text: string): Promise<InjectReceipt> {
    if (this.#closing) return Promise.reject(new WrongState(`Cannot steer: session stopped`));
    if (this.#turn !== undefined) {
      this.steered.push(text);
      return Promise.resolve({ deliveredAs: "steer", turnId: this.#turn });
    }
    if (this.#queue.length === 0) return Promise.reject(new NoActiveTurn(this.sessionId));
    this.#queue.push(text);
    return Promise.resolve({ deliveredAs: "nextTurn" });
  }

  interrupt(): Promise<void> {
    const dropped = this.#queue.splice(0).length;
    if (dropped > 0) this.emit({ type: "system", subtype: "queue_cleared", dropped });
    if (this.#turn !== undefined) this.fail("interrupted", "The turn was interrupted");
    return Promise.resolve();
  }

  /** Ends the running turn with `result`. */
  finish(text = "", usage?: Usage): void {
    this.#end({
      type: "result",
      text,
      turnStatus: "completed",
      ...(usage && { usage }),
    });
  }

  /** Ends the running turn with `error{code}`. */
  fail(code: ErrorCode, message: string): void {
    this.#end({ type: "error", code, message });
  }

  stop(code: StopCode = "context_cancelled", detail?: StopDetail): Promise<void> {
    if (this.#closing) return Promise.resolve();
    this.#closing = true;
    this.#queue.length = 0;
    if (this.#turn !== undefined) {
      this.#end({
        type: "error",
        code,
        message: detail?.message ?? `The session was stopped: ${code}`,
        ...(detail?.budget && { budget: detail.budget }),
      });
    }
    this.emit({ type: "system", subtype: "session_stopped", reason: code });
    this.#close();
    return Promise.resolve();
  }

  /** The backend died under the session. */
  crash(reason: string): void {
    if (this.#stream.closed) return;
    this.#closing = true;
    this.#queue.length = 0;
    const message = `memory backend exited: ${reason}`;
    if (this.#turn !== undefined) this.#end({ type: "error", code: "app_server_crashed", message });
    else this.emit({ type: "error", code: "app_server_crashed", message });
    this.#close();
  }

  #start(prompt: string): string {
    const turnId = `turn_${++this.#turns}`;
    this.#turn = turnId;
    this.prompts.push(prompt);
    this.emit({ type: "turn.started", turnId });
    const script = this.#options.script?.(prompt, { sessionId: this.sessionId, turnId }) ?? [];
    for (const event of script) {
      if (this.#turn !== turnId) break;
      if (isTerminal(event)) this.#end(event);
      else this.emit({ ...event, turnId });
    }
    return turnId;
  }

  #end(terminal: EventBody): void {
    const turnId = this.#turn;
    if (turnId === undefined) return;
    this.#turn = undefined;
    this.emit({ ...terminal, turnId });
    const next = this.#queue.shift();
    if (next !== undefined && !this.#closing) this.#start(next);
  }

  #close(): void {
    if (this.#stream.close()) this.#options.onClose(this);
  }
}
