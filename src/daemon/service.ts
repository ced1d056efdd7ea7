/**
 * What the HTTP routes need from the daemon. The integrator implements it over the provider,
 * the store and the policies; tests use an in-memory fake. Methods throw codexd's typed errors
 * (below and in `src/errors.ts`); the app maps them to HTTP statuses.
 */
import { CodexdError } from "../errors.ts";
import type { Capabilities } from "../provider/types.ts";
import type { Spec } from "../provider/spec.ts";
import type * as Api from "../api/schemas.ts";

export interface EventsOptions {
  /** Only events with a larger `seq`; 0 replays everything. */
  after: number;
  /** Aborted when the HTTP client leaves: the iterator must end and release its reader. */
  signal: AbortSignal;
}

export interface StoredEventsOptions {
  after: number;
  limit: number;
}

export interface SessionService {
  /** Never throws: a daemon that cannot answer this is not running. */
  health(): Promise<Api.Health>;
  capabilities(): Capabilities;
  /** `fieldsSet`: the spec's keys as the caller sent them (before defaults; see ignoredFields). */
  spawn(spec: Spec, fieldsSet?: readonly string[]): Promise<Api.SpawnResult>;
  list(): Promise<Api.SessionInfo[]>;
  /** @throws SessionNotFound */
  get(sessionId: string): Promise<Api.SessionInfo>;
  /** Starts a follow-up turn, or queues it while one runs. @throws SessionNotFound, WrongState */
  send(sessionId: string, prompt: string): Promise<Api.SendResult>;
  /** Brings a stopped, failed or orphaned (daemon/codex restarted) session back. */
  resume(sessionId: string, spec: Spec, fieldsSet?: readonly string[]): Promise<Api.SpawnResult>;
  /** Steers the running turn. @throws NoActiveTurn when none runs or is queued */
  inject(sessionId: string, text: string): Promise<Api.InjectResult>;
  interrupt(sessionId: string): Promise<void>;
  /** Idempotent: stopping a stopped session succeeds. @throws SessionNotFound */
  stop(sessionId: string): Promise<void>;
  /**
   * Replay of the stored events after `options.after`, then live ones. Ends when the session
   * stops or when `options.signal` aborts; a reader that falls behind is served from the
   * database, so memory stays bounded and nothing is skipped. @throws SessionNotFound (on first
   * `next()`)
   */
  events(sessionId: string, options: EventsOptions): AsyncIterable<Api.StoredEvent>;
  storedEvents(sessionId: string, options: StoredEventsOptions): Promise<Api.StoredEvent[]>;
  /** Decisions made for the session and `ask`s still waiting for a person. */
  approvals(sessionId: string): Promise<Api.ApprovalsView>;
  /** @throws SessionNotFound, ApprovalNotFound, ApprovalAlreadyDecided */
  answerApproval(sessionId: string, requestId: string, decision: "allow" | "deny"): Promise<void>;
  listPolicies(): Promise<Api.PolicySummary[]>;
  /** Problems of files that failed to load are reported, not thrown. */
  reloadPolicies(): Promise<Api.ReloadReport>;
  /** @throws UnknownPolicy (src/approval/policy-errors.ts) */
  evaluatePolicy(request: Api.EvaluateRequest): Promise<Api.EvaluateResult>;
  /** Fleets with their live sessions, token caps and spend (`GET /v1/fleets`); none if absent. */
  fleets?(): Promise<Api.FleetInfo[]>;
  /**
   * Starts a graceful shutdown and returns at once, so the HTTP answer (202) can still be sent;
   * the integrator closes the listener after in-flight responses.
   */
  shutdown(): void;
}

/** No session has this id. → 404 */
export class SessionNotFound extends CodexdError {
  constructor(readonly sessionId: string) {
    super("session_not_found", `Session ${sessionId} does not exist`);
  }
}

/** No pending or decided approval has this id in the session. → 404 */
export class ApprovalNotFound extends CodexdError {
  constructor(readonly sessionId: string, readonly requestId: string) {
    super(
      "approval_not_found",
      `Approval request ${requestId} does not exist in session ${sessionId}`,
    );
  }
}

/** The approval request was already decided (by policy, a person, or its deadline). → 409 */
export class ApprovalAlreadyDecided extends CodexdError {
  constructor(readonly requestId: string, readonly decision: string) {
    super("approval_decided", `Approval request ${requestId} was already decided: ${decision}`);
  }
}

/** The service cannot act now (codex down or restarting, daemon stopping). → 503 */
export class ServiceUnavailable extends CodexdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("service_unavailable", message, options);
  }
}
