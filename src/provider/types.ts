/**
 * The provider contract a fleet runner's sessions live on. Provider-agnostic: the codex
 * implementation is in `./codex/`.
 */
import type { ApprovalKind, SessionEvent } from "./events.ts";
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
  /** The codex thread the session last ran on. */
  threadId: string;
  /**
   * The session's earlier prompts and final messages, used to re-seed a fresh thread when codex
   * cannot resume the old one (a thread whose first turn never completed is not stored).
   */
  transcript?: TranscriptEntry[];
}

export interface TranscriptEntry {
  role: "user" | "assistant";
  text: string;
}

export interface Provider {
  readonly name: string;
  capabilities(): Capabilities;
  spawn(spec: Spec, options?: SpawnOptions): Promise<Handle>;
  resume(sessionId: string, spec: Spec, options: ResumeOptions): Promise<Handle>;
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

/** One live session: a codex thread. */
export interface Handle {
  readonly sessionId: string;
  /** The codex thread id; may change when a session is re-seeded on a fresh thread. */
  readonly threadId: string;
  /** Every event of the session, in order; ends when the session stops or its child dies. */
  readonly events: AsyncIterable<SessionEvent>;
  send(prompt: string): Promise<SendReceipt>;
  inject(text: string): Promise<InjectReceipt>;
  interrupt(): Promise<void>;
  stop(): Promise<void>;
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
  extraEvents?: Array<{ type: string; [key: string]: unknown }>;
}

export interface Approver {
  decide(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalVerdict>;
}

export type { ApprovalKind };
