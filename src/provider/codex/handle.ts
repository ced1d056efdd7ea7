/**
 * One session: a codex thread multiplexed over the provider's connection.
 *
 * Turns are serialized (one running turn per thread; `send` queues). Every turn ends with exactly
 * one terminal event (`result` or `error`), whichever of completion, interrupt, stop, timeout or
 * a crash comes first; the later ones find the turn already finished and do nothing. The event
 * stream closes once, after the last terminal event.
 */
import { z } from "zod";
import {
  ConnectionClosed,
  errorMessage,
  NoActiveTurn,
  RpcError,
  WrongState,
} from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { type EventBody, SECURITY_SUBTYPES, type SessionEvent, type Usage } from "../events.ts";
import { EventStream } from "../event-stream.ts";
import type { Spec } from "../spec.ts";
import type {
  ApprovalVerdict,
  Approver,
  Handle,
  InjectReceipt,
  SendReceipt,
  StopCode,
  StopDetail,
} from "../types.ts";
import {
  mapNotification,
  type McpToolCallInfo,
  terminalEvent,
  unhandledNotifications,
  usageDelta,
} from "./event-map.ts";
import type { FileChangeItem } from "./notifications.ts";
import { planTurn, textInput } from "./plan.ts";
import { planServerRequest } from "./server-requests.ts";
import type { CallSandbox } from "./escalation.ts";
import type { RolloutCalls } from "./rollout-calls.ts";
import { DROPPED_MESSAGE } from "./messages.ts";
import type { Rpc } from "./rpc.ts";

const DroppedMessage = z.object({ message: z.string() });
/** Of a command approval, what finds its tool call. */
const CommandApprovalCall = z.looseObject({
  itemId: z.string(),
  kind: z.string().nullish(),
  approvalId: z.string().nullish(),
});

/** Tool calls whose sandbox request is kept for an approval still to come. */
const TOOL_CALLS_KEPT = 256;

/** What the handle needs from the connection: requests scoped to its thread. */
export type ThreadRpc = Pick<Rpc, "request">;

export interface HandleOptions {
  sessionId: string;
  threadId: string;
  spec: Spec;
  rpc: ThreadRpc;
  approver: Approver;
  /** Called once when the handle closes, so the provider can unsubscribe it. */
  onClose?: (handle: CodexHandle) => void;
  /** Called when a turn ended and no queued turn follows: the session is idle (pool moves). */
  onIdle?: (handle: CodexHandle) => void;
  now?: () => Date;
  /** Schedules turn deadlines; injectable so tests need not wait on the wall clock. */
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
  /** Bound on the best-effort `turn/interrupt` / `thread/unsubscribe` sent while stopping. */
  stopRequestTimeoutMs?: number;
  /** The session's logger (its context names the session). */
  logger?: Logger;
  /**
   * The thread's tool calls as codex's rollout records them: what a resumed thread's approvals
   * are judged on (it shows no raw items), and a started one's should it show none.
   */
  rollout?: RolloutCalls;
}

interface ActiveTurn {
  /** Known once `turn/start` answered or `turn/started` arrived. */
  id?: string;
  started: Promise<string>;
  resolveStarted: (turnId: string) => void;
  lastMessage: string;
  usageAtStart?: Usage;
  deadline?: { cancel(): void };
  finished: boolean;
}

let requestCounter = 0;

export class CodexHandle implements Handle {
  readonly sessionId: string;
  #threadId: string;
  readonly #spec: Spec;
  #rpc: ThreadRpc;
  #onClose: ((handle: CodexHandle) => void) | undefined;
  #onIdle: ((handle: CodexHandle) => void) | undefined;
  /** Set while the pool moves the thread to another child: turns wait in the queue. */
  #moving = false;
  readonly #approver: Approver;
  readonly #options: HandleOptions;
  readonly #stream = new EventStream<SessionEvent>();
  readonly #fileChanges = new Map<string, FileChangeItem>();
  /** MCP tool calls started and not yet completed, by item id (see server-requests.ts). */
  readonly #mcpToolCalls = new Map<string, McpToolCallInfo>();
  /** Tool calls' sandbox requests, by call id (escalation.ts); the newest TOOL_CALLS_KEPT. */
  readonly #toolCalls = new Map<string, CallSandbox>();
  /** Whether codex shows this thread's raw items (a thread started here, not resumed). */
  #rawItems = false;
  /** Where the tool calls are read when codex shows no raw items (rollout-calls.ts). */
  #rollout: RolloutCalls | undefined;
  readonly #queue: string[] = [];
  #active: ActiveTurn | undefined;
  #totalUsage: Usage | undefined;
  #closing = false;
  #stopping: Promise<void> | undefined;
  /** Turn ids that already got their terminal event (a late turn/completed is ignored). */
  readonly #finishedTurns = new Set<string>();
  /** Turns codex started on its own (#refuseTurn): their approvals are declined unasked. */
  readonly #refusedTurns = new Set<string>();
  /** Counts for metrics and tests. */
  readonly stats = { unknownNotifications: 0, invalidNotifications: 0 };

  constructor(options: HandleOptions) {
    this.sessionId = options.sessionId;
    this.#threadId = options.threadId;
    this.#spec = options.spec;
    this.#rpc = options.rpc;
    this.#onClose = options.onClose;
    this.#onIdle = options.onIdle;
    this.#approver = options.approver;
    this.#rollout = options.rollout;
    this.#options = options;
  }

  get threadId(): string {
    return this.#threadId;
  }

  get events(): AsyncIterable<SessionEvent> {
    return this.#stream;
  }

  get closed(): boolean {
    return this.#stream.closed;
  }

  /** The session's spec (what a resume on another child re-applies). */
  get spec(): Spec {
    return this.#spec;
  }

  /** No turn runs or waits, no move is under way, and the session is not stopping. */
  get idle(): boolean {
    return !this.#active && this.#queue.length === 0 && !this.#closing && !this.#moving;
  }

  /**
   * Moves the session to another codex child between turns (pool recycling, rolling restarts).
   * Only while idle: turns sent meanwhile wait in the queue and start on whichever child the
   * session ends up on. `move` releases the thread on the old child and resumes it on the new
   * one, returning the new binding; when it throws, the session stays where it was (the caller
   * made sure the thread is usable there again) unless it closed. Returns whether it moved.
   */
  async moveTo(
    move: () => Promise<{
      rpc: ThreadRpc;
      threadId: string;
      onClose: (handle: CodexHandle) => void;
      onIdle?: (handle: CodexHandle) => void;
      /** The thread's tool calls as the new child records them (it shows no raw items). */
      rollout: RolloutCalls;
    }>,
  ): Promise<boolean> {
    if (!this.idle) return false;
    this.#moving = true;
    let moved = false;
    try {
      const binding = await move();
      this.#rpc = binding.rpc;
      this.#threadId = binding.threadId;
      // A thread resumed on another child shows no raw items there (escalation.ts): its calls
      // are read from the rollout that child writes from now on.
      this.#rawItems = false;
      this.#toolCalls.clear();
      this.#rollout = binding.rollout;
      this.#onClose = binding.onClose;
      if (binding.onIdle) this.#onIdle = binding.onIdle;
      moved = true;
    } finally {
      this.#moving = false;
      const next = this.#queue.shift();
      if (next !== undefined && !this.#closing) {
        this.startTurn(next).catch((error) =>
          this.#options.logger?.warn("queued turn failed to start", { error: errorMessage(error) })
        );
      }
    }
    return moved;
  }

  /** The running turn's id, if one runs and codex told us its id. */
  get currentTurnId(): string | undefined {
    return this.#active?.id;
  }

  get queuedTurns(): number {
    return this.#queue.length;
  }

  /** A turn is running (its terminal event not yet emitted). */
  get busy(): boolean {
    return this.#active !== undefined && !this.#active.finished;
  }

  /** Emits an event stamped with the session id and time. */
  emit(body: EventBody): void {
    const now = (this.#options.now ?? (() => new Date()))();
    this.#stream.push(
      { ...body, sessionId: this.sessionId, ts: now.toISOString() },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Turns

  /**
   * Starts a turn now (the provider calls this for the first turn). `signal` cancels the wait for
   * `turn/start`'s answer: a codex that never answers must not hold an aborted spawn forever.
   */
  startTurn(prompt: string, options: { signal?: AbortSignal } = {}): Promise<SendReceipt> {
    if (this.#closing) {
      return Promise.reject(
        new WrongState(`Cannot start a turn: session ${this.sessionId} stopped`),
      );
    }
    if (this.#active || this.#moving) {
      this.#queue.push(prompt);
      return Promise.resolve({ queued: true });
    }
    let resolveStarted!: (id: string) => void;
    const started = new Promise<string>((resolve) => (resolveStarted = resolve));
    const turn: ActiveTurn = {
      started,
      resolveStarted,
      lastMessage: "",
      ...(this.#totalUsage && { usageAtStart: this.#totalUsage }),
      finished: false,
    };
    this.#active = turn;
    if (this.#spec.timeoutMs !== undefined) {
      const setTimer = this.#options.setTimer ?? defaultTimer;
      turn.deadline = setTimer(() => this.#onDeadline(turn), this.#spec.timeoutMs);
    }
    return this.#rpc
      .request(
        "turn/start",
        { threadId: this.#threadId, ...planTurn(this.#spec, prompt) },
        options.signal ? { signal: options.signal } : {},
      )
      .then((result) => {
        const turnId = result.turn.id;
        if (turn.finished) {
          // It ended (deadline, stop) before codex named it: drop whatever codex still says
          // about it, and stop it if codex is still running it.
          this.#markFinished(turnId);
          if (!this.#closing) {
            this.#bestEffort("turn/interrupt", { threadId: this.#threadId, turnId });
          }
          return { turnId, queued: false };
        }
        if (turn.id !== undefined && turn.id !== turnId) {
          // Another turn's turn/started was taken for this one (an ended turn of ours is in
          // #finishedTurns and is not taken): codex's answer to this turn's own request is
          // authoritative, and the other turn is one codex started by itself.
          this.#refuseTurn(turn.id);
          turn.id = undefined;
        }
        this.#turnIdKnown(turn, turnId);
        return { turnId, queued: false };
      })
      .catch((error: unknown) => {
        if (error instanceof ConnectionClosed && !this.#closing) {
          // codex went away while the turn started: its child died (the provider's crashed()
          // follows once the exit is seen). The turn ends as every other turn of that child does.
          this.crashed(errorMessage(error));
          throw error;
        }
        this.#finish(turn, {
          type: "error",
          code: "start_failed",
          message: `Cannot start turn: ${errorMessage(error)}`,
        });
        throw error;
      });
  }

  send(prompt: string): Promise<SendReceipt> {
    if (this.#active && this.#spec.onBusy === "interrupt") {
      this.#queue.push(prompt);
      return this.#interruptActive().then(() => ({ queued: true }));
    }
    return this.startTurn(prompt);
  }

  async inject(text: string): Promise<InjectReceipt> {
    if (this.#closing) throw new WrongState(`Cannot steer: session ${this.sessionId} stopped`);
    const turn = this.#active;
    if (!turn) {
      if (this.#queue.length === 0) throw new NoActiveTurn(this.sessionId);
      this.#queue.push(text);
      return { deliveredAs: "nextTurn" };
    }
    // Sent before turn/started arrived: steering needs the turn's real id.
    const turnId = turn.id ?? await turn.started;
    if (turn.finished) return this.#injectAsNextTurn(text);
    try {
      await this.#rpc.request("turn/steer", {
        threadId: this.#threadId,
        input: textInput(text),
        expectedTurnId: turnId,
      });
      return { deliveredAs: "steer", turnId };
    } catch (error) {
      // Not steerable, or it completed meanwhile: the text becomes the next turn instead.
      if (error instanceof RpcError) return this.#injectAsNextTurn(text);
      throw error;
    }
  }

  #injectAsNextTurn(text: string): Promise<InjectReceipt> {
    return this.startTurn(text).then((receipt) => ({
      deliveredAs: "nextTurn" as const,
      ...(receipt.turnId && { turnId: receipt.turnId }),
    }));
  }

  /** Interrupts the running turn; queued turns are dropped (the runner asked the agent to stop). */
  async interrupt(): Promise<void> {
    const dropped = this.#queue.splice(0).length;
    if (dropped > 0) this.emit({ type: "system", subtype: "queue_cleared", dropped });
    await this.#interruptActive();
  }

  async #interruptActive(): Promise<void> {
    const turn = this.#active;
    if (!turn || turn.finished) return;
    const turnId = turn.id ?? await turn.started;
    try {
      await this.#rpc.request("turn/interrupt", { threadId: this.#threadId, turnId });
    } catch (error) {
      // The turn ended inside codex while the request was on its way: its turn/completed is
      // already coming, so there is nothing left to interrupt.
      if (isNoActiveTurn(error)) return;
      throw error;
    }
    // The terminal event comes with turn/completed (status interrupted).
  }

  /**
   * codex sent this thread a message too long to read (see router.ts). Whatever it was, the
   * running turn can no longer be followed faithfully (its end may be the very message lost):
   * end it now with a clear error rather than let it hang, and stop it inside codex.
   */
  #onDroppedMessage(params: unknown): void {
    const turn = this.#active;
    if (!turn) return;
    const message = DroppedMessage.safeParse(params).data?.message ??
      "codex sent a message too long to read";
    this.#finish(turn, { type: "error", code: "turn_failed", message });
    if (turn.id) this.#bestEffort("turn/interrupt", { threadId: this.#threadId, turnId: turn.id });
  }

  #markFinished(turnId: string): void {
    // Late notifications only concern recent turns: keep the set small on long sessions.
    addRecent(this.#finishedTurns, turnId);
  }

  /**
   * A turn codex started without codexd asking (a goal's automatic continuation in codex 0.169;
   * plan.ts pins `goals` off, this holds for whatever else starts one): the runner did not ask
   * for it, its budget and its queue know nothing of it, and it would run after the session went
   * idle. It is interrupted, what it says is dropped, and its approvals are declined unasked.
   */
  #refuseTurn(turnId: string): void {
    this.#markFinished(turnId);
    addRecent(this.#refusedTurns, turnId);
    this.emit({
      type: "system",
      subtype: "turn_refused",
      turnId,
      message: `codex started turn ${turnId} on its own; codexd runs only the turns its runner ` +
        "asks for, so it is interrupted",
    });
    if (!this.#closing) {
      void this.#bestEffort("turn/interrupt", { threadId: this.#threadId, turnId });
    }
  }

  /** Whether `turnId` is this session's running turn or one of its recent ones. */
  hadTurn(turnId: string): boolean {
    return this.#active?.id === turnId || this.#finishedTurns.has(turnId);
  }

  /**
   * A sub-agent's turn that descends from this session's turn `rootTurnId` was interrupted (it
   * may start after that turn ended: the model spawns it and answers at once).
   */
  foreignTurnRefused(turn: { threadId: string; turnId: string }, rootTurnId: string): void {
    if (this.#closing) return;
    this.emit({
      type: "system",
      subtype: "turn_refused",
      turnId: rootTurnId,
      threadId: turn.threadId,
      message: `codex started turn ${turn.turnId} of a sub-agent (thread ${turn.threadId}) this ` +
        "turn spawned; a sub-agent is no session (its commands are refused, its tokens reach no " +
        "budget), so it is interrupted",
    });
  }

  #turnIdKnown(turn: ActiveTurn, turnId: string): void {
    if (turn.id !== undefined) return;
    turn.id = turnId;
    turn.resolveStarted(turnId);
  }

  #onDeadline(turn: ActiveTurn): void {
    if (turn.finished) return;
    const limit = this.#spec.timeoutMs;
    this.#finish(turn, {
      type: "error",
      code: "timeout",
      message: `Turn exceeded its deadline of ${limit} ms`,
    });
    if (turn.id) this.#bestEffort("turn/interrupt", { threadId: this.#threadId, turnId: turn.id });
  }

  /** Emits the turn's one terminal event, then starts the next queued turn. */
  #finish(turn: ActiveTurn, terminal: EventBody): void {
    if (turn.finished) return;
    turn.finished = true;
    turn.deadline?.cancel();
    if (turn.id) this.#markFinished(turn.id);
    for (const [id, call] of this.#mcpToolCalls) {
      if (call.turnId === turn.id) this.#mcpToolCalls.delete(id);
    }
    // Unblock anyone waiting on the id (inject/interrupt) even if it never came.
    turn.resolveStarted(turn.id ?? "");
    this.emit(
      turn.id && !("turnId" in terminal && terminal.turnId)
        ? { ...terminal, turnId: turn.id }
        : terminal,
    );
    if (this.#active === turn) this.#active = undefined;
    const next = this.#queue.shift();
    if (next !== undefined && !this.#closing) {
      this.startTurn(next).catch((error) =>
        this.#options.logger?.warn("queued turn failed to start", { error: errorMessage(error) })
      );
    } else if (!this.#closing) this.#onIdle?.(this);
  }

  // -------------------------------------------------------------------------------------------
  // Input from codex (routed here by threadId)

  onNotification(method: string, params: unknown): void {
    if (this.#closing) return; // stopping or crashed: the session's last word is already said
    if (method === DROPPED_MESSAGE) return this.#onDroppedMessage(params);
    const mapped = mapNotification(method, params);
    if (mapped.unknown) {
      this.stats.unknownNotifications++;
      unhandledNotifications.count(method, "unknown");
    }
    if (mapped.invalid) {
      this.stats.invalidNotifications++;
      unhandledNotifications.count(method, "invalid");
      this.#options.logger?.warn("invalid notification", { detail: mapped.invalid });
    }
    if (mapped.fileChange) this.#rememberFileChange(mapped.fileChange);
    if (mapped.mcpToolCallStarted) {
      this.#mcpToolCalls.set(mapped.mcpToolCallStarted.id, mapped.mcpToolCallStarted);
    }
    if (mapped.mcpToolCallEnded) this.#mcpToolCalls.delete(mapped.mcpToolCallEnded);
    if (mapped.rawItem) this.#rawItems = true;
    if (mapped.toolCall) this.#rememberToolCall(mapped.toolCall);
    // codex repeats its last usage report when only its rate limits changed: the same total, no
    // new tokens. Journaled once, so a reader summing `usage` events counts each response once.
    const repeatedUsage = mapped.totalUsage !== undefined && this.#totalUsage !== undefined &&
      sameUsage(mapped.totalUsage, this.#totalUsage);
    if (mapped.totalUsage) this.#totalUsage = mapped.totalUsage;
    const turn = this.#active;
    for (const event of mapped.events) {
      if (
        event.type === "turn.started" && event.turnId && !this.#finishedTurns.has(event.turnId)
      ) {
        // Ours: the turn codexd asked for, whose id codex has not named yet (or named the same).
        if (turn && (turn.id === undefined || turn.id === event.turnId)) {
          this.#turnIdKnown(turn, event.turnId);
        } else {
          this.#refuseTurn(event.turnId);
          continue;
        }
      }
      // A turn that already got its terminal event (a deadline, or an interrupt racing its
      // completion), or one codex started on its own, says nothing more: codex's late deltas and
      // items for it are dropped. What codex did meanwhile (typed input, a reviewer's verdict) is
      // still recorded, and so are the tokens it spent (the budgets count them).
      if (
        event.turnId && this.#finishedTurns.has(event.turnId) && event.type !== "usage" &&
        !(event.type === "system" && SECURITY_SUBTYPES.has(event.subtype))
      ) continue;
      if (event.type === "message" && turn) turn.lastMessage = event.text;
      if (event.type === "usage" && repeatedUsage) continue;
      this.emit(event);
    }
    if (mapped.turnCompleted) {
      const done = mapped.turnCompleted;
      if (this.#finishedTurns.has(done.id)) return; // timed out or stopped earlier
      if (!turn) {
        this.#options.logger?.warn("turn/completed for no active turn", { turnId: done.id });
        return;
      }
      this.#turnIdKnown(turn, done.id);
      const usage = this.#totalUsage ? usageDelta(this.#totalUsage, turn.usageAtStart) : undefined;
      this.#finish(turn, terminalEvent(done, turn.lastMessage, usage));
    }
  }

  /**
   * A file-change item's paths for the approval to come. A patch update adds its changes to the
   * ones already known: the request is judged on every path the item ever named.
   */
  #rememberFileChange(item: FileChangeItem): void {
    const known = this.#fileChanges.get(item.id);
    if (!known) {
      this.#fileChanges.set(item.id, item);
      return;
    }
    const key = (c: FileChangeItem["changes"][number]) =>
      JSON.stringify([c.path, c.kind.type, c.kind.move_path ?? null]);
    const seen = new Set(known.changes.map(key));
    this.#fileChanges.set(item.id, {
      ...known,
      changes: [...known.changes, ...item.changes.filter((c) => !seen.has(key(c)))],
    });
  }

  #rememberToolCall(call: CallSandbox): void {
    // The model names its calls: a reused id keeps any escalation one of its calls asked for,
    // so a plain call cannot hide an escalated one whose approval is still to come.
    if (this.#toolCalls.get(call.callId)?.escalation !== undefined) return;
    this.#toolCalls.set(call.callId, call);
    if (this.#toolCalls.size > TOOL_CALLS_KEPT) {
      this.#toolCalls.delete(this.#toolCalls.keys().next().value!);
    }
  }

  /**
   * A command approval of a thread that shows no raw items (a resumed one): its call as the
   * rollout records it; undefined for other requests.
   */
  async #rolloutCall(
    rollout: RolloutCalls,
    method: string,
    params: unknown,
  ): Promise<ReadonlyMap<string, CallSandbox> | undefined> {
    if (method !== "item/commandExecution/requestApproval") return undefined;
    const call = CommandApprovalCall.safeParse(params);
    // Typing into a running process starts no tool call; params codexd cannot read are refused
    // by the plan.
    if (!call.success || call.data.kind === "writeStdin") return undefined;
    const judged = await rollout.judge(call.data.itemId, {
      callback: call.data.approvalId !== undefined && call.data.approvalId !== null,
    });
    return new Map([[judged.callId, judged]]);
  }

  async onServerRequest(method: string, params: unknown): Promise<unknown> {
    // A thread started here is judged on its raw items, at once; a resumed one on its rollout.
    // Neither (no rollout named, a test's fake codex): judged without them, as before.
    const toolCalls = this.#rawItems
      ? this.#toolCalls
      : this.#rollout
      ? await this.#rolloutCall(this.#rollout, method, params)
      : undefined;
    const plan = planServerRequest(method, params, {
      worktree: this.#spec.cwd,
      fileChanges: this.#fileChanges,
      mcpToolCalls: this.#mcpToolCalls,
      ...(toolCalls && { toolCalls }),
    });
    if (plan.kind === "refuse") {
      this.emit({
        type: "system",
        subtype: "unhandled_server_request",
        method,
        reason: plan.reason,
      });
      return plan.result;
    }
    if (plan.kind === "error") {
      this.emit({
        type: "system",
        subtype: "unhandled_server_request",
        method,
        reason: plan.message,
      });
      throw new RpcError(method, plan.code, plan.message);
    }
    const requestId = `apr_${Date.now().toString(36)}_${(++requestCounter).toString(36)}`;
    const started = performance.now();
    // A request codexd cannot judge (an MCP tool it cannot name), or one of a turn codex started
    // on its own, is declined without asking.
    const verdict: ApprovalVerdict = plan.decided ??
      refusedTurnVerdict(plan.turnId, this.#refusedTurns) ??
      await this.#approver.decide(plan.request, {
        requestId,
        sessionId: this.sessionId,
        threadId: this.#threadId,
        ...(plan.turnId && { turnId: plan.turnId }),
        ...(plan.itemId && { itemId: plan.itemId }),
        worktree: this.#spec.cwd,
        policy: this.#spec.policy,
        permissionMode: this.#spec.permissionMode,
        ...(this.#spec.permissionConfig && { permissionConfig: this.#spec.permissionConfig }),
      }).catch((error: unknown): ApprovalVerdict => ({
        decision: "deny",
        source: "error",
        reason: `approval bridge failed: ${errorMessage(error)}`,
      }));
    const request = plan.request;
    this.emit({
      type: "approval",
      ...(plan.turnId && { turnId: plan.turnId }),
      requestId,
      kind: request.kind,
      ...("command" in request && { command: request.command }),
      ...("paths" in request && { paths: request.paths }),
      ...(request.kind === "mcpTool" && { tool: { server: request.server, name: request.tool } }),
      decision: verdict.decision,
      ...(verdict.ruleId && { ruleId: verdict.ruleId }),
      source: verdict.source,
      reason: verdict.reason,
      ...(verdict.policyVersion && { policyVersion: verdict.policyVersion }),
      elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
    });
    for (const extra of verdict.extraEvents ?? []) {
      this.emit({ ...extra, ...(plan.turnId && { turnId: plan.turnId }) });
    }
    if (verdict.decision === "deny") {
      this.emit({
        type: "system",
        subtype: "approval_denied",
        ...(plan.turnId && { turnId: plan.turnId }),
        requestId,
        message: verdict.reason,
      });
    }
    return plan.reply(verdict.decision);
  }

  // -------------------------------------------------------------------------------------------
  // Ending

  /**
   * Stops the session: interrupt, unsubscribe, `error{context_cancelled}` (or `code`, with
   * `detail`'s message and budget), close. Idempotent.
   */
  stop(code: StopCode = "context_cancelled", detail?: StopDetail): Promise<void> {
    this.#stopping ??= this.#stop(code, detail);
    return this.#stopping;
  }

  async #stop(code: StopCode, detail?: StopDetail): Promise<void> {
    this.#closing = true;
    this.#queue.length = 0;
    const turn = this.#active;
    if (turn && !turn.finished) {
      this.#finish(turn, {
        type: "error",
        code,
        message: detail?.message ?? stopMessage(code),
        ...(detail?.budget && { budget: detail.budget }),
      });
      if (turn.id) {
        await this.#bestEffort("turn/interrupt", { threadId: this.#threadId, turnId: turn.id });
      }
    }
    await this.#bestEffort("thread/unsubscribe", { threadId: this.#threadId });
    // The child died while those requests were out: crashed() closed the stream already, and an
    // event now would be dropped (and counted as a protocol error).
    if (this.#stream.closed) return;
    // Idle sessions get no terminal event: this tells readers why the stream ends.
    this.emit({ type: "system", subtype: "session_stopped", reason: code });
    this.#close();
  }

  /** The child died: the running turn (or the idle session) gets `app_server_crashed`. */
  crashed(reason: string): void {
    this.#end("app_server_crashed", `codex app-server exited: ${reason}`);
  }

  /**
   * The session cannot go on where codex would run git in a repository whose config changed
   * under it (repo-git-programs.ts): it ends with `unsafe_repository` instead of moving.
   */
  unsafeRepository(message: string): void {
    this.#end("unsafe_repository", message);
  }

  /** Ends the session from outside codex: the running turn (or the idle session) gets `code`. */
  #end(code: "app_server_crashed" | "unsafe_repository", message: string): void {
    if (this.#closing) {
      this.#close(); // a stop was under way; its requests can no longer be answered
      return;
    }
    this.#closing = true;
    this.#queue.length = 0;
    const turn = this.#active;
    if (turn && !turn.finished) {
      this.#finish(turn, { type: "error", code, message });
    } else this.emit({ type: "error", code, message });
    this.#close();
  }

  #close(): void {
    if (this.#stream.close()) this.#onClose?.(this);
  }

  async #bestEffort(method: string, params: unknown): Promise<void> {
    try {
      await this.#rpc.request(method, params, {
        timeoutMs: this.#options.stopRequestTimeoutMs ?? 2000,
      });
    } catch (error) {
      this.#options.logger?.warn(`${method} failed while stopping`, { error: errorMessage(error) });
    }
  }
}

/** Turn ids a handle keeps, newest last: late traffic only ever concerns recent turns. */
const RECENT_TURNS = 64;

function addRecent(turns: Set<string>, turnId: string): void {
  turns.add(turnId);
  if (turns.size > RECENT_TURNS) turns.delete(turns.values().next().value!);
}

function refusedTurnVerdict(
  turnId: string | undefined,
  refused: ReadonlySet<string>,
): ApprovalVerdict | undefined {
  if (turnId === undefined || !refused.has(turnId)) return undefined;
  return {
    decision: "deny",
    ruleId: "builtin.unrequested-turn",
    source: "builtin",
    reason: `turn ${turnId} was started by codex on its own, not by the session's runner`,
  };
}

function defaultTimer(fn: () => void, ms: number): { cancel(): void } {
  const timer = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(timer) };
}

function sameUsage(a: Usage, b: Usage): boolean {
  return a.inputTokens === b.inputTokens && a.cachedInputTokens === b.cachedInputTokens &&
    a.outputTokens === b.outputTokens && a.reasoningTokens === b.reasoningTokens;
}

function stopMessage(code: StopCode): string {
  switch (code) {
    case "daemon_shutdown":
      return "The daemon is shutting down";
    case "context_cancelled":
      return "The session was stopped";
    default:
      return `The turn ended: ${code}`;
  }
}

/** codex's answer to interrupting or steering a turn that already ended (-32600). */
function isNoActiveTurn(error: unknown): boolean {
  return error instanceof RpcError && error.code === -32600 &&
    /no active turn/i.test(error.message);
}
