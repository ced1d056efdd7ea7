/** An in-memory SessionService: sessions, journals with live readers, approvals, policies. */
import { NoActiveTurn, WrongState } from "../../src/errors.ts";
import { UnknownPolicy } from "../../src/approval/policy-errors.ts";
import type { Capabilities } from "../../src/provider/types.ts";
import type { Spec } from "../../src/provider/spec.ts";
import type * as Api from "../../src/api/schemas.ts";
import {
  ApprovalAlreadyDecided,
  ApprovalNotFound,
  type EventsOptions,
  ServiceUnavailable,
  SessionNotFound,
  type SessionService,
  type StoredEventsOptions,
} from "../../src/daemon/service.ts";
import { checkCwdExists } from "../../src/daemon/cwd-check.ts";

interface FakeSession {
  info: Api.SessionInfo;
  spec: Spec;
  events: Api.StoredEvent[];
  wake: Set<() => void>;
  turnRunning: boolean;
  approvals: Api.ApprovalsView;
}

const TS = "2026-01-01T00:00:00.000Z";

export class FakeService implements SessionService {
  readonly sessions = new Map<string, FakeSession>();
  /** While true every session call throws ServiceUnavailable (codex down). */
  down = false;
  shutdownCalls = 0;
  /** Live readers per session, to prove that leaving clients are cleaned up. */
  readonly readers = new Map<string, number>();
  /** A reader further behind than this is dropped (the service's bounded buffer). */
  maxLag = Infinity;
  policies: Api.PolicySummary[] = [
    { name: "default", version: "v1", mode: "enforce", default: "ask", allowBypass: false },
  ];
  /** What `GET /v1/fleets` lists. */
  fleetList: Api.FleetInfo[] = [];
  /** While set, spawn throws it (a spent token budget: BudgetExceeded). */
  spawnRefusal: Error | undefined;
  #next = 1;

  #session(id: string): FakeSession {
    if (this.down) throw new ServiceUnavailable("Cannot reach codex: the app-server is restarting");
    const session = this.sessions.get(id);
    if (!session) throw new SessionNotFound(id);
    return session;
  }

  /** Appends an event to a session's journal and wakes its readers. */
  emit(id: string, body: { type: string; [key: string]: unknown }): Api.StoredEvent {
    const session = this.#session(id);
    const event: Api.StoredEvent = {
      ...body,
      seq: session.events.length + 1,
      type: body.type,
      sessionId: id,
      ts: TS,
    };
    session.events.push(event);
    session.info.lastEventAt = TS;
    this.#wake(session);
    return event;
  }

  #wake(session: FakeSession): void {
    for (const wake of session.wake) wake();
    session.wake.clear();
  }

  health(): Promise<Api.Health> {
    return Promise.resolve(
      this.down
        ? {
          status: "degraded",
          version: "0.1.0",
          codex: { version: "0.169.0", pid: null, state: "restarting" },
          problems: ["codex exited with code 1"],
          stderr: ["panic: boom"],
        }
        : {
          status: "ok",
          version: "0.1.0",
          codex: { version: "0.169.0", pid: 4242, state: "running" },
        },
    );
  }

  capabilities(): Capabilities {
    return {
      supportsMessageInjection: true,
      supportsSessionResume: true,
      supportsToolPlugins: true,
      needsBaseInstructions: false,
      needsPermissionConfig: false,
      supportsCodeIntelligenceEnforcement: false,
      emitsSubagentEvents: false,
      supportsReasoningEffort: true,
      toolPermissionFormat: "codex",
    };
  }

  spawn(spec: Spec): Promise<Api.SpawnResult> {
    // Like the SessionManager: the wire schema leaves a cwd's existence to the service.
    checkCwdExists("spawn session", spec.cwd);
    if (this.down) throw new ServiceUnavailable("Cannot spawn session: codex is restarting");
    if (this.spawnRefusal) throw this.spawnRefusal;
    if (!this.policies.some((p) => p.name === spec.policy)) {
      throw new UnknownPolicy(spec.policy, this.policies.map((p) => p.name));
    }
    const n = this.#next++;
    const id = `s-${n}`;
    const session: FakeSession = {
      spec,
      events: [],
      wake: new Set(),
      turnRunning: true,
      approvals: { decisions: [], pending: [] },
      info: {
        sessionId: id,
        threadId: `t-${n}`,
        status: "running",
        policy: spec.policy,
        permissionMode: spec.permissionMode,
        cwd: spec.cwd,
        model: spec.model ?? null,
        createdAt: TS,
        lastEventAt: null,
        currentTurn: { turnId: "turn-1", startedAt: TS },
        queuedTurns: 0,
        usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0 },
        envKeys: Object.keys(spec.env ?? {}),
        metadata: spec.metadata,
      },
    };
    this.sessions.set(id, session);
    this.emit(id, { type: "session.started", threadId: `t-${n}`, cwd: spec.cwd });
    this.emit(id, { type: "turn.started", turnId: "turn-1" });
    return Promise.resolve({ sessionId: id, threadId: `t-${n}`, ignoredFields: [] });
  }

  /** Ends the running turn with a result. */
  finishTurn(id: string, text = "done"): void {
    const session = this.#session(id);
    session.turnRunning = false;
    session.info.status = "idle";
    session.info.currentTurn = null;
    this.emit(id, { type: "result", text, turnStatus: "completed" });
  }

  list(): Promise<Api.SessionInfo[]> {
    return Promise.resolve([...this.sessions.values()].map((s) => s.info));
  }

  get(id: string): Promise<Api.SessionInfo> {
    return Promise.resolve(this.#session(id).info);
  }

  send(id: string, prompt: string): Promise<Api.SendResult> {
    const session = this.#session(id);
    if (session.info.status === "stopped") {
      throw new WrongState(`Cannot send to session ${id}: it is stopped`);
    }
    if (session.turnRunning) {
      session.info.queuedTurns++;
      return Promise.resolve({ queued: true });
    }
    session.turnRunning = true;
    session.info.status = "running";
    const turnId = `turn-${session.events.length + 1}`;
    session.info.currentTurn = { turnId, startedAt: TS };
    this.emit(id, { type: "turn.started", turnId, prompt });
    return Promise.resolve({ turnId, queued: false });
  }

  resume(id: string, spec: Spec): Promise<Api.SpawnResult> {
    checkCwdExists("resume session", spec.cwd);
    const session = this.#session(id);
    session.spec = spec;
    session.info.status = "running";
    session.turnRunning = true;
    this.emit(id, { type: "session.started", threadId: session.info.threadId, cwd: spec.cwd });
    return Promise.resolve({ sessionId: id, threadId: session.info.threadId, ignoredFields: [] });
  }

  inject(id: string, _text: string): Promise<Api.InjectResult> {
    const session = this.#session(id);
    if (!session.turnRunning) throw new NoActiveTurn(id);
    return Promise.resolve({
      deliveredAs: "steer",
      turnId: session.info.currentTurn?.turnId ?? undefined,
    });
  }

  interrupt(id: string): Promise<void> {
    const session = this.#session(id);
    if (session.turnRunning) {
      session.turnRunning = false;
      session.info.status = "interrupted";
      this.emit(id, { type: "error", code: "interrupted", message: "Turn interrupted" });
    }
    return Promise.resolve();
  }

  stop(id: string): Promise<void> {
    const session = this.#session(id);
    if (session.info.status !== "stopped") {
      session.info.status = "stopped";
      session.turnRunning = false;
      session.info.currentTurn = null;
      this.emit(id, { type: "system", subtype: "stopped" });
    }
    return Promise.resolve();
  }

  async *events(id: string, options: EventsOptions): AsyncIterable<Api.StoredEvent> {
    const session = this.#session(id);
    this.readers.set(id, (this.readers.get(id) ?? 0) + 1);
    try {
      let cursor = session.events.findIndex((e) => e.seq > options.after);
      if (cursor < 0) cursor = session.events.length;
      const subscribedAt = session.events.length;
      while (!options.signal.aborted) {
        // Only live events fill the bounded buffer; a replay reads the journal.
        const buffered = Math.min(
          session.events.length - cursor,
          session.events.length - subscribedAt,
        );
        if (buffered > this.maxLag) return;
        if (cursor < session.events.length) {
          yield session.events[cursor++];
          continue;
        }
        if (session.info.status === "stopped") return;
        await new Promise<void>((resolve) => {
          session.wake.add(resolve);
          options.signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    } finally {
      this.readers.set(id, (this.readers.get(id) ?? 1) - 1);
    }
  }

  storedEvents(id: string, options: StoredEventsOptions): Promise<Api.StoredEvent[]> {
    const session = this.#session(id);
    return Promise.resolve(
      session.events.filter((e) => e.seq > options.after).slice(0, options.limit),
    );
  }

  /** Holds an `ask` for a person. */
  addPending(id: string, requestId: string, command = "git push"): void {
    this.#session(id).approvals.pending.push({
      requestId,
      sessionId: id,
      policy: "default",
      request: { kind: "command", command },
      reason: "policy asks a person",
      since: TS,
      deadline: TS,
    });
  }

  approvals(id: string): Promise<Api.ApprovalsView> {
    return Promise.resolve(this.#session(id).approvals);
  }

  answerApproval(id: string, requestId: string, decision: "allow" | "deny"): Promise<void> {
    const { approvals } = this.#session(id);
    const decided = approvals.decisions.find((d) => d.requestId === requestId);
    if (decided) throw new ApprovalAlreadyDecided(requestId, decided.decision);
    const index = approvals.pending.findIndex((p) => p.requestId === requestId);
    if (index < 0) throw new ApprovalNotFound(id, requestId);
    const [pending] = approvals.pending.splice(index, 1);
    approvals.decisions.push({
      requestId,
      kind: pending.request.kind,
      command: pending.request.command,
      decision,
      source: "person",
      reason: "answered through the API",
      ts: TS,
    });
    return Promise.resolve();
  }

  listPolicies(): Promise<Api.PolicySummary[]> {
    return Promise.resolve(this.policies);
  }

  reloadPolicies(): Promise<Api.ReloadReport> {
    return Promise.resolve({
      ok: false,
      issues: [{
        file: "strict.yaml",
        line: 3,
        col: 5,
        key: "commands.deny[0].regex",
        message: "bad",
      }],
      changed: ["default"],
      policies: this.policies,
    });
  }

  evaluatePolicy(request: Api.EvaluateRequest): Promise<Api.EvaluateResult> {
    const policy = this.policies.find((p) => p.name === request.policy);
    if (!policy) throw new UnknownPolicy(request.policy, this.policies.map((p) => p.name));
    const deny = request.command?.includes("rm -rf") ?? false;
    return Promise.resolve({
      decision: deny ? "deny" : "allow",
      ruleId: deny ? "builtin.rm-root" : undefined,
      source: deny ? "builtin" : "policy:default",
      reason: deny ? "deletes recursively" : "allowed",
      policyVersion: policy.version,
    });
  }

  fleets(): Promise<Api.FleetInfo[]> {
    return Promise.resolve(this.fleetList);
  }

  shutdown(): void {
    this.shutdownCalls++;
  }
}
