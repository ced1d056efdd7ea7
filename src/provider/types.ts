/**
 * The provider contract a fleet runner's sessions live on. Provider-agnostic: the codex
 * implementation is in `./codex/`.
 */
import type {
  ApprovalKind,
  BudgetReport,
  ErrorCode,
  PolicyShadow,
  SessionEvent,
} from "./events.ts";
import type { PermissionConfig, PermissionMode, Spec } from "./spec.ts";

/** The capability matrix, with the Go provider's names. */
export interface Capabilities {
  supportsMessageInjection: boolean;
  supportsSessionResume: boolean;
  supportsToolPlugins: boolean;
  needsBaseInstructions: boolean;
  needsPermissionConfig: boolean;
  supportsCodeIntelligenceEnforcement: boolean;
  emitsSubagentEvents: boolean;
  supportsReasoningEffort: boolean;
  toolPermissionFormat: "codex";
}

export interface SpawnOptions {
  signal?: AbortSignal;
  /** codexd's own session id; generated when absent. */
  sessionId?: string;
}

export interface ResumeOptions {
  signal?: AbortSignal;
  /** The thread the session last ran on. */
  threadId: string;
  /**
   * The session's earlier prompts and final messages, used to re-seed a fresh thread when the
   * provider cannot resume the old one (codex does not store a thread whose first turn never
   * completed).
   */
  transcript?: TranscriptEntry[];
}

export interface TranscriptEntry {
  role: "user" | "assistant";
  text: string;
}

export interface PlanOptions {
  /**
   * The spec's keys as the caller sent them, before the schema's defaults: `ignoredFields` names
   * only these. Without it every field with a value counts.
   */
  fieldsSet?: readonly string[];
}

/** A field of the spec the caller set that the session will not honour as given. */
export interface IgnoredField {
  field: keyof Spec;
  reason: string;
}

/**
 * A spec the provider checked and translated, before anything started: what it will not honour,
 * and how to start it. Planning throws (InvalidInput, 400) for a spec the provider refuses, such
 * as `bypassPermissions` under a fleet policy that does not allow it.
 */
export interface SessionPlan {
  readonly ignoredFields: readonly IgnoredField[];
  /** Starts a new session and its first turn with the spec's prompt. */
  spawn(options?: SpawnOptions): Promise<Handle>;
  /** Brings an earlier session back under its id; its first turn runs the spec's prompt. */
  resume(sessionId: string, options: ResumeOptions): Promise<Handle>;
}

export type ProviderState = "starting" | "ready" | "degraded" | "stopping" | "stopped";

/** What health reports of a provider (for codex: its app-server children, as one). */
export interface ProviderStatus {
  state: ProviderState;
  pid?: number;
  version?: string;
  /** Times the provider's backend was started again after it died. */
  restarts: number;
  lastError?: string;
  /** When the next start is attempted, while it is down. */
  nextAttemptInMs?: number;
}

/**
 * Where sessions run. The daemon sees one provider, however many processes are behind it.
 * Disposing of it is `shutdown()`.
 */
export interface Provider extends AsyncDisposable {
  readonly name: string;
  capabilities(): Capabilities;
  status(): ProviderStatus;
  /** The last lines the backend wrote to stderr (health shows them while it is not ready). */
  stderrTail(lines?: number): string[];
  /** @throws ProviderUnavailable, saying why and when it may take sessions again. */
  assertAvailable(action: string): void;
  plan(spec: Spec, options?: PlanOptions): Promise<SessionPlan>;
  /** Ends every session with `daemon_shutdown` and stops the backend. Idempotent. */
  shutdown(): Promise<void>;
}

export interface SendReceipt {
  /** The started turn's id; absent while the turn waits in the queue. */
  turnId?: string;
  queued: boolean;
}

export interface InjectReceipt {
  deliveredAs: "steer" | "nextTurn";
  turnId?: string;
}

/** Why a session was stopped: its last event is `error` with this code when a turn ran. */
export type StopCode = Extract<
  ErrorCode,
  "context_cancelled" | "daemon_shutdown" | "budget_exceeded"
>;

export interface StopDetail {
  message: string;
  budget?: BudgetReport;
}

/** One live session: a thread of the provider's. */
export interface Handle {
  readonly sessionId: string;
  /** The provider's thread id; may change when a session is re-seeded on a fresh thread. */
  readonly threadId: string;
  /** Every event of the session, in order; ends when the session stops or its backend dies. */
  readonly events: AsyncIterable<SessionEvent>;
  /** A turn runs (its terminal event not yet emitted). */
  readonly busy: boolean;
  /** Turns sent while one ran, waiting to start. */
  readonly queuedTurns: number;
  send(prompt: string): Promise<SendReceipt>;
  inject(text: string): Promise<InjectReceipt>;
  interrupt(): Promise<void>;
  /**
   * Ends the running turn with `error{code}` (default `context_cancelled`, with `detail`'s
   * message and budget), drops queued turns and closes the event stream. Idempotent.
   */
  stop(code?: StopCode, detail?: StopDetail): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// The approval bridge, as the provider sees it.

/** One tool call codex wants to make, in provider-neutral terms. */
export type ApprovalRequest =
  | {
    kind: "command" | "writeStdin";
    /** The command line as codex sends it (often `/bin/bash -lc '…'`), or the typed text. */
    command: string;
    cwd: string;
    reason?: string | null;
    /**
     * Set when the command asks to run with more than the session's sandbox allows (unsandboxed,
     * or with extra permissions), or when the provider cannot tell: what it asks for.
     */
    escalation?: string;
  }
  | {
    kind: "fileChange";
    /** Absolute paths from the file-change item; `movePath` of renames included. */
    paths: string[];
    grantRoot?: string | null;
    reason?: string | null;
  }
  | { kind: "mcpTool"; server: string; tool: string; arguments?: unknown }
  | { kind: "permissions"; permissions: unknown; reason?: string | null };

export interface ApprovalContext {
  /** Unique per request; used to answer `ask` decisions through the daemon. */
  requestId: string;
  sessionId: string;
  threadId: string;
  turnId?: string;
  itemId?: string;
  /** The session's worktree (the spec's cwd, not the request's). */
  worktree: string;
  policy: string;
  permissionMode: PermissionMode;
  permissionConfig?: PermissionConfig;
  signal?: AbortSignal;
}

export interface ApprovalVerdict {
  decision: "allow" | "deny";
  ruleId?: string;
  /** `builtin`, `policy:<name>`, `spec`, `default`, `mode`, `person`. */
  source: string;
  reason: string;
  policyVersion?: string;
  /** Events to record beside the decision (`policy.shadow`, ...). */
  extraEvents?: PolicyShadow[];
}

export interface Approver {
  decide(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalVerdict>;
}

export type { ApprovalKind };
