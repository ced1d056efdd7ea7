/**
 * The daemon's sessions: the SessionService the HTTP routes call, over the supervised codex
 * provider, the durable store, the event journal and the fleet policies.
 *
 * Each live session has a pump that moves its handle's events into the journal (durable first,
 * then fanned out to SSE readers) and keeps the session's row up to date: status, current turn,
 * usage totals, last event time. A session outlives its codex thread: after a crash or a daemon
 * restart it is `interrupted`, and `resume` brings it back under the same id.
 */
import { z } from "zod";
import type { ApprovalBridge } from "../approval/bridge.ts";
import { POLICY_DEFAULTS } from "../approval/policy-schema.ts";
import type { PolicyStore } from "../approval/policy-store.ts";
import { guardSpecOrThrow, type SpecGuardContext } from "../approval/spec-guard.ts";
import { errorMessage, ProviderUnavailable, WrongState } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { BudgetReport, EventBody, SessionEvent } from "../provider/events.ts";
import type { Spec } from "../provider/spec.ts";
import type {
  Capabilities,
  Handle,
  Provider,
  SessionPlan,
  TranscriptEntry,
} from "../provider/types.ts";
import type {
  ApprovalsView,
  EvaluateRequest,
  EvaluateResult,
  FleetInfo,
  Health,
  InjectResult,
  PolicySummary,
  ReloadReport,
  SendResult,
  SessionInfo,
  SessionStatus,
  SpawnResult,
  StoredEvent,
} from "../api/schemas.ts";
import {
  BudgetExceeded,
  type BudgetLimits,
  Budgets,
  checkSpecBudget,
  describeExhausted,
  sessionCap,
  type UsageReport,
  WARNING_RATIO,
} from "./budgets.ts";
import { checkCwdExists } from "./cwd-check.ts";
import type { Journal } from "./journal.ts";
import { PolicyRoutes } from "./policy-routes.ts";
import { addUsage, sessionInfo, statusAfterError, ZERO_USAGE } from "./session-info.ts";
import { redactSpec, secretScrubber } from "./redact.ts";
import type { DaemonMetrics } from "./metrics.ts";
import {
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  ServiceUnavailable,
  SessionNotFound,
  type SessionService,
} from "./service.ts";
import type { SessionRow, Store } from "./store.ts";

export interface SessionManagerOptions {
  store: Store;
  journal: Journal;
  /** Where sessions run (daemon.ts passes the codex pool). */
  provider: Provider;
  policies: PolicyStore;
  bridge: ApprovalBridge;
  /** What a spec's cwd must keep away from (state dir, codex home) and stay inside. */
  workspace?: SpecGuardContext;
  metrics?: DaemonMetrics;
  version: string;
  /** Health problems found at start-up (protocol drift, ...). */
  problems?: () => string[];
  /** Called when a client asked for shutdown (`POST /v1/shutdown`). */
  onShutdownRequested?: () => void;
  now?: () => Date;
  logger?: Logger;
}

interface Live {
  handle: Handle;
  pump: Promise<void>;
  /** The fleet (policy) the session runs under, and its spec's own token budget. */
  fleet: string;
  budgetTokens?: number;
  /** A budget stopped it: the session ends `budget_exceeded` (resumable), not `stopped`. */
  budgetStopped?: boolean;
}

export class SessionManager implements SessionService {
  readonly #o: SessionManagerOptions;
  readonly #policyRoutes: PolicyRoutes;
  readonly #live = new Map<string, Live>();
  readonly #startedAt = Date.now();
  /** The newest event time of each session this process pumped (see #pump). */
  readonly #lastEventAt = new Map<string, string>();
  readonly #budgets: Budgets;
  #accepting = true;

  constructor(options: SessionManagerOptions) {
    this.#o = options;
    this.#policyRoutes = new PolicyRoutes(options.policies);
    this.#budgets = new Budgets({
      store: options.store,
      now: () => (options.now?.() ?? new Date()).getTime(),
    });
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle

  async spawn(requested: Spec, fieldsSet?: readonly string[]): Promise<SpawnResult> {
    checkCwdExists("spawn session", requested.cwd);
    this.#assertAvailable("spawn session");
    const policy = this.#checkPolicy(requested);
    const spec = this.#guard("spawn session", requested, policy);
    // Planning starts nothing: a spec the provider refuses fails here, before anything is recorded.
    const plan = await this.#o.provider.plan(spec, { ...(fieldsSet && { fieldsSet }) });
    checkSpecBudget("spawn session", spec, policy.merged.budgets);
    this.#admit("spawn session", spec.policy, undefined, spec.budget?.tokens);
    const sessionId = `ses_${crypto.randomUUID().replaceAll("-", "")}`;
    this.#o.store.createSession({
      id: sessionId,
      threadId: "",
      spec: redactSpec(spec),
      policy: spec.policy,
      policyVersion: policy.version,
      status: "running",
      createdAt: this.#now(),
    });
    return await this.#open(sessionId, spec, plan, {
      start: () => plan.spawn({ sessionId }),
      closeOnFailure: true,
    });
  }

  async resume(
    sessionId: string,
    requested: Spec,
    fieldsSet?: readonly string[],
  ): Promise<SpawnResult> {
    checkCwdExists("resume session", requested.cwd);
    const row = this.#row(sessionId);
    // A session a budget is stopping is as good as stopped: wait for it to unload.
    const stopping = this.#live.get(sessionId);
    if (stopping?.budgetStopped) await stopping.pump;
    if (this.#live.has(sessionId)) {
      throw new WrongState(`Cannot resume session ${sessionId}: it is live; send a turn instead`);
    }
    this.#assertAvailable("resume session");
    const policy = this.#checkPolicy(requested);
    const spec = this.#guard("resume session", requested, policy);
    const plan = await this.#o.provider.plan(spec, { ...(fieldsSet && { fieldsSet }) });
    checkSpecBudget("resume session", spec, policy.merged.budgets);
    this.#admit("resume session", spec.policy, sessionId, spec.budget?.tokens);
    this.#o.store.updateSession(sessionId, {
      status: "running",
      spec: redactSpec(spec),
      policy: spec.policy,
      policyVersion: policy.version,
      failure: null,
    });
    this.#o.journal.reopen(sessionId);
    return await this.#open(sessionId, spec, plan, {
      start: () =>
        plan.resume(sessionId, {
          threadId: row.threadId,
          transcript: this.#transcript(sessionId),
        }),
      closeOnFailure: false,
    });
  }

  async send(sessionId: string, prompt: string): Promise<SendResult> {
    const live = this.#liveSession(sessionId, "send a turn");
    try {
      this.#admit("send a turn", live.fleet, sessionId, live.budgetTokens);
    } catch (error) {
      // Its own cap is spent (its policy's was lowered): only a resume with room can go on, so
      // the session is unloaded for it, as a turn that spent the budget would have been.
      if (error instanceof BudgetExceeded && error.report.scope === "session") {
        this.#stopForBudget(sessionId, live, error.report);
      }
      throw error;
    }
    this.#record(sessionId, { type: "system", subtype: "user_prompt", text: prompt });
    const receipt = await live.handle.send(prompt);
    return { ...(receipt.turnId && { turnId: receipt.turnId }), queued: receipt.queued };
  }

  async inject(sessionId: string, text: string): Promise<InjectResult> {
    const live = this.#liveSession(sessionId, "steer");
    this.#record(sessionId, { type: "system", subtype: "user_prompt", text, steer: true });
    return await live.handle.inject(text);
  }

  async interrupt(sessionId: string): Promise<void> {
    await this.#liveSession(sessionId, "interrupt").handle.interrupt();
  }

  async stop(sessionId: string): Promise<void> {
    const row = this.#row(sessionId);
    const live = this.#live.get(sessionId);
    if (live) {
      await live.handle.stop();
      await live.pump;
    }
    if (row.status !== "stopped") {
      this.#o.store.updateSession(sessionId, { status: "stopped", currentTurnId: null });
    }
    this.#o.journal.close(sessionId);
  }

  /** Ends every live session with `daemon_shutdown` (via the provider), then waits for pumps. */
  async shutdownAll(): Promise<void> {
    this.#accepting = false;
    await this.#o.provider.shutdown();
    await Promise.all([...this.#live.values()].map((l) => l.pump));
  }

  shutdown(): void {
    this.#accepting = false;
    this.#o.onShutdownRequested?.();
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  health(): Promise<Health> {
    const status = this.#o.provider.status();
    const problems = [...(this.#o.problems?.() ?? [])];
    if (status.lastError) problems.push(status.lastError);
    const degraded = status.state !== "ready" || problems.length > 0;
    const pending = this.#o.bridge.pending();
    return Promise.resolve({
      status: !this.#accepting
        ? "stopping"
        : status.state === "starting"
        ? "starting"
        : degraded
        ? "degraded"
        : "ok",
      version: this.#o.version,
      codex: {
        version: status.version ?? null,
        pid: status.pid ?? null,
        state: status.state,
        restarts: status.restarts,
      },
      problems,
      // codex's stderr can carry what an MCP server or a command printed: no secret of any session.
      stderr: degraded ? this.#o.journal.scrubAll(this.#o.provider.stderrTail()) : [],
      uptimeSeconds: (Date.now() - this.#startedAt) / 1000,
      sessions: {
        live: this.#live.size,
        pendingApprovals: pending.length,
        oldestPendingApprovalSince: pending.map((p) => p.since).sort()[0] ?? null,
      },
    } as Health);
  }

  capabilities(): Capabilities {
    return this.#o.provider.capabilities();
  }

  list(): Promise<SessionInfo[]> {
    return Promise.resolve(this.#o.store.listSessions().map((row) => this.#info(row)));
  }

  get(sessionId: string): Promise<SessionInfo> {
    return Promise.resolve(this.#info(this.#row(sessionId)));
  }

  events(
    sessionId: string,
    options: { after: number; signal: AbortSignal },
  ): AsyncIterable<StoredEvent> {
    const row = this.#o.store.getSession(sessionId);
    if (!row) {
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.reject(new SessionNotFound(sessionId)),
        }),
      };
    }
    return this.#o.journal.subscribe(sessionId, options) as AsyncIterable<StoredEvent>;
  }

  storedEvents(
    sessionId: string,
    options: { after: number; limit: number },
  ): Promise<StoredEvent[]> {
    this.#row(sessionId);
    return Promise.resolve(
      this.#o.store.eventsAfter(sessionId, options.after, options.limit) as StoredEvent[],
    );
  }

  approvals(sessionId: string): Promise<ApprovalsView> {
    this.#row(sessionId);
    const decisions = this.#o.store.eventsOfType(sessionId, "approval").map((event) => {
      const { sessionId: _s, seq: _q, type: _t, ...record } = event as StoredEvent;
      return record as ApprovalsView["decisions"][number];
    });
    // Pending asks come from memory, not the journal: scrubbed here like every event.
    const pending = this.#o.journal.scrub(sessionId, this.#o.bridge.pending(sessionId));
    return Promise.resolve({ decisions, pending });
  }

  answerApproval(sessionId: string, requestId: string, decision: "allow" | "deny"): Promise<void> {
    this.#row(sessionId);
    const pending = this.#o.bridge.pending(sessionId).some((p) => p.requestId === requestId);
    if (!pending) {
      const decided = this.#o.store.eventsOfType(sessionId, "approval")
        .find((e) => (e as { requestId?: string }).requestId === requestId);
      if (decided) {
        throw new ApprovalAlreadyDecided(
          requestId,
          String((decided as { decision?: unknown }).decision),
        );
      }
      throw new ApprovalNotFound(sessionId, requestId);
    }
    this.#o.bridge.answer(requestId, decision, { by: "api" });
    return Promise.resolve();
  }

  listPolicies(): Promise<PolicySummary[]> {
    return Promise.resolve(this.#policyRoutes.list());
  }

  reloadPolicies(): Promise<ReloadReport> {
    return Promise.resolve(this.#policyRoutes.reload());
  }

  evaluatePolicy(body: EvaluateRequest): Promise<EvaluateResult> {
    return Promise.resolve(this.#policyRoutes.evaluate(body));
  }

  /** Every fleet (enforced policy, or one with live sessions or spend): sessions, caps, spend. */
  fleets(): Promise<FleetInfo[]> {
    const policies = this.#o.policies.list().filter((p) => p.mode === "enforce");
    const live = new Map<string, number>();
    for (const l of this.#live.values()) live.set(l.fleet, (live.get(l.fleet) ?? 0) + 1);
    const names = new Set([
      ...policies.map((p) => p.name),
      ...live.keys(),
      ...this.#budgets.fleetsWithSpend(),
    ]);
    return Promise.resolve(
      [...names].sort().map((name) => {
        const policy = policies.find((p) => p.name === name);
        const limits = policy ? this.#limits(name) : undefined;
        return {
          name,
          policyVersion: policy?.version ?? null,
          liveSessions: live.get(name) ?? 0,
          budgets: limits ?? null,
          usage: this.#budgets.usage(name, limits),
        };
      }),
    );
  }

  // -------------------------------------------------------------------------------------------

  /**
   * The part spawn and resume share once the row is written: record the prompt, have the
   * provider open the thread, and pump its events; a failure is recorded on the session.
   */
  async #open(
    sessionId: string,
    spec: Spec,
    plan: SessionPlan,
    how: { start: () => Promise<Handle>; closeOnFailure: boolean },
  ): Promise<SpawnResult> {
    this.#o.journal.setScrubber(sessionId, secretScrubber(spec));
    this.#record(sessionId, { type: "system", subtype: "user_prompt", text: spec.prompt });
    let handle: Handle;
    try {
      handle = await how.start();
    } catch (error) {
      this.#o.store.updateSession(sessionId, { status: "failed", failure: errorMessage(error) });
      this.#record(sessionId, {
        type: "error",
        code: "start_failed",
        message: errorMessage(error),
      });
      if (how.closeOnFailure) this.#o.journal.close(sessionId);
      throw error instanceof ProviderUnavailable
        ? new ServiceUnavailable(error.message, { cause: error })
        : error;
    }
    this.#o.store.updateSession(sessionId, { threadId: handle.threadId });
    this.#attach(sessionId, handle, spec);
    return {
      sessionId,
      threadId: handle.threadId,
      ignoredFields: plan.ignoredFields.map((f) => f.field),
    };
  }

  #attach(sessionId: string, handle: Handle, spec: Spec): void {
    const live: Live = {
      handle,
      pump: Promise.resolve(),
      fleet: spec.policy,
      ...(spec.budget && { budgetTokens: spec.budget.tokens }),
    };
    this.#live.set(sessionId, live);
    live.pump = this.#pump(sessionId, handle).finally(() => {
      if (this.#live.get(sessionId) === live) this.#live.delete(sessionId);
    });
  }

  /** Moves a handle's events into the journal and keeps the row in step. Never throws. */
  async #pump(sessionId: string, handle: Handle): Promise<void> {
    let usage = { ...(this.#o.store.getSession(sessionId)?.usage ?? ZERO_USAGE) };
    let finalStatus: SessionStatus | undefined;
    try {
      for await (const event of handle.events) {
        this.#o.journal.append(sessionId, event);
        this.#o.metrics?.events.inc({ type: event.type });
        // The time of the last event is kept in memory and written with the next change of
        // state: writing it for every streamed delta doubled the database work of a stream.
        this.#lastEventAt.set(sessionId, event.ts);
        const patch: Partial<SessionRow> = {};
        switch (event.type) {
          case "turn.started":
            patch.status = "running";
            patch.currentTurnId = event.turnId ?? null;
            patch.currentTurnStartedAt = event.ts;
            break;
          case "result":
            this.#o.metrics?.turns.inc({ kind: "completed" });
            if (event.usage) usage = addUsage(usage, event.usage);
            patch.usage = usage;
            patch.status = handle.queuedTurns > 0 ? "running" : "idle";
            patch.currentTurnId = null;
            break;
          case "error":
            this.#o.metrics?.turns.inc({ kind: event.code });
            patch.currentTurnId = null;
            finalStatus = statusAfterError(event.code);
            patch.status = finalStatus ?? (handle.queuedTurns > 0 ? "running" : "idle");
            break;
          case "approval":
            this.#o.metrics?.approvals.inc({ decision: event.decision, source: event.source });
            break;
          case "usage":
            this.#spend(sessionId, event);
            break;
        }
        if (Object.keys(patch).length > 0) {
          this.#o.store.updateSession(sessionId, { ...patch, lastEventAt: event.ts });
        }
      }
    } catch (error) {
      this.#o.logger?.error("session event pump failed", {
        sessionId,
        error: errorMessage(error),
      });
      finalStatus = "failed";
    }
    const row = this.#o.store.getSession(sessionId);
    if (row && row.status !== "stopped") {
      this.#o.store.updateSession(sessionId, {
        // A stream that ended without a terminal cause was stopped by us: by the runner (stop
        // sets `stopped` itself), or by the daemon going down, which leaves it resumable.
        status: finalStatus ??
          (this.#live.get(sessionId)?.budgetStopped
            ? "budget_exceeded"
            : this.#accepting
            ? "stopped"
            : "interrupted"),
        currentTurnId: null,
        ...(this.#lastEventAt.has(sessionId) && { lastEventAt: this.#lastEventAt.get(sessionId) }),
      });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Budgets (src/daemon/budgets.ts)

  /** The fleet's caps; none for a fleet whose policy is gone (its sessions run on, uncapped). */
  #limits(fleet: string): BudgetLimits {
    try {
      return this.#o.policies.get(fleet).merged.budgets;
    } catch {
      return POLICY_DEFAULTS.budgets;
    }
  }

  /** Refuses (429) what would start a turn while a cap of the fleet or the session is spent. */
  #admit(action: string, fleet: string, sessionId: string | undefined, specTokens?: number) {
    const [binding] = this.#budgets.exhausted(fleet, sessionId, this.#limits(fleet), specTokens);
    if (binding === undefined) return;
    this.#o.metrics?.budgetRefusals.inc({ fleet, scope: binding.scope });
    throw new BudgetExceeded(action, binding, this.#budgets.now(), sessionId);
  }

  /** Counts a model response's tokens; warns at 80 % of a cap and stops turns at 100 %. */
  #spend(sessionId: string, event: UsageReport & { turnId?: string }): void {
    const live = this.#live.get(sessionId);
    if (!live) return;
    const limits = this.#limits(live.fleet);
    const tokens = this.#budgets.newTokens(
      sessionId,
      live.handle.threadId,
      event,
      limits.countCachedInput,
    );
    const outcome = this.#budgets.record(live.fleet, sessionId, tokens, limits, live.budgetTokens);
    for (const report of outcome.warnings) {
      const percent = Math.floor((report.spend / report.budget) * 100);
      this.#record(sessionId, {
        type: "system",
        subtype: "budget_warning",
        ...(event.turnId && { turnId: event.turnId }),
        message: `${percent} % of the ${scopeName(report)} token budget is spent ` +
          `(${report.spend} of ${report.budget})`,
        threshold: WARNING_RATIO,
        ...report,
      });
    }
    for (const report of outcome.crossed) {
      this.#o.metrics?.budgetExceeded.inc({ fleet: report.fleet, scope: report.scope });
    }
    for (const report of outcome.exhausted) {
      if (report.scope === "session") {
        this.#stopForBudget(sessionId, live, report);
        continue;
      }
      // A fleet's window: every turn of the fleet that runs now spends it.
      for (const [id, other] of this.#live) {
        if (other.fleet === report.fleet && other.handle.busy) {
          this.#stopForBudget(id, other, report);
        }
      }
    }
  }

  /** Ends the running turn with `error{budget_exceeded}` and unloads the session (resumable). */
  #stopForBudget(sessionId: string, live: Live, report: BudgetReport): void {
    if (live.budgetStopped) return;
    live.budgetStopped = true;
    this.#o.logger?.info("a token budget stopped a session", { sessionId, ...report });
    live.handle.stop("budget_exceeded", {
      message: `Stopped: ${describeExhausted(report, sessionId)}`,
      budget: report,
    }).catch((error) =>
      this.#o.logger?.warn("stopping a session over budget failed", {
        sessionId,
        error: errorMessage(error),
      })
    );
  }

  /** Prompts and final answers, for re-seeding a thread codex could not resume. */
  #transcript(sessionId: string): TranscriptEntry[] {
    // Only prompts and results: read through the type index, not every streamed delta.
    const store = this.#o.store;
    const events = [
      ...store.eventsOfType(sessionId, "system"),
      ...store.eventsOfType(sessionId, "result"),
    ]
      .sort((a, b) => a.seq - b.seq);
    const entries: TranscriptEntry[] = [];
    for (const event of events) {
      const e = event as SessionEvent;
      if (e.type === "system" && e.subtype === "user_prompt" && typeof e.text === "string") {
        entries.push({ role: "user", text: e.text });
      } else if (e.type === "result" && e.text) {
        entries.push({ role: "assistant", text: e.text });
      }
    }
    return entries.slice(0, -1); // the last prompt is the resume's own
  }

  #record(sessionId: string, body: EventBody): void {
    this.#o.journal.append(sessionId, body);
  }

  /** Refuses (503) while the daemon stops or the provider cannot take a session. */
  #assertAvailable(action: string): void {
    if (!this.#accepting) {
      throw new ServiceUnavailable(`Cannot ${action}: the daemon is shutting down`);
    }
    try {
      this.#o.provider.assertAvailable(action);
    } catch (error) {
      throw error instanceof ProviderUnavailable
        ? new ServiceUnavailable(error.message, { cause: error })
        : error;
    }
  }

  /** @throws UnknownPolicy or ShadowPolicyNotUsable (400, `details` naming `policy`). */
  #checkPolicy(spec: Spec) {
    return this.#o.policies.get(spec.policy);
  }

  /** The fleet policy governs the spec: refusals → 400; the result carries the resolved cwd. */
  #guard(action: string, spec: Spec, policy: ReturnType<PolicyStore["get"]>): Spec {
    return guardSpecOrThrow(action, spec, policy, this.#o.policies.analyzer, this.#o.workspace);
  }

  #row(sessionId: string): SessionRow {
    const row = this.#o.store.getSession(sessionId);
    if (!row) throw new SessionNotFound(sessionId);
    return row;
  }

  #liveSession(sessionId: string, action: string): Live {
    const row = this.#row(sessionId);
    const live = this.#live.get(sessionId);
    if (!live) {
      throw new WrongState(
        `Cannot ${action}: session ${sessionId} is ${row.status}` +
          (row.status === "stopped" ? "" : "; resume it first"),
      );
    }
    return live;
  }

  #info(row: SessionRow): SessionInfo {
    const lastEventAt = this.#lastEventAt.get(row.id);
    const specTokens = StoredBudget.safeParse(row.spec.budget).data?.tokens;
    return {
      ...sessionInfo(row, {
        queuedTurns: this.#live.get(row.id)?.handle.queuedTurns ?? 0,
        ...(lastEventAt !== undefined && { lastEventAt }),
      }),
      budget: {
        tokens: sessionCap(this.#limits(row.policy), specTokens),
        spent: this.#budgets.sessionSpend(row.id),
      },
    };
  }

  #now(): string {
    return (this.#o.now?.() ?? new Date()).toISOString();
  }
}

/** A stored spec's `budget` (the spec was validated when it was stored). */
const StoredBudget = z.object({ tokens: z.number() });

function scopeName(report: BudgetReport): string {
  return report.scope === "session"
    ? "session's"
    : `fleet ${report.fleet}'s ${report.scope === "hour" ? "hourly" : "daily"}`;
}
