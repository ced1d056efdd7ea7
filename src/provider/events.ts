/**
 * The events a session emits, provider-agnostic. Every event has `type`, `sessionId`, `turnId`
 * where known, and `ts` (ISO time). The daemon's journal adds `seq`.
 *
 * A turn ends with exactly one terminal event: `result` or `error`.
 */

export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export type ErrorCode =
  | "turn_failed"
  | "interrupted"
  | "context_cancelled"
  | "app_server_crashed"
  | "timeout"
  | "daemon_shutdown"
  | "start_failed"
  | "budget_exceeded"
  /** The repository's git config changed so that codex's own git would run a program. */
  | "unsafe_repository";

/** Which token budget a `budget_warning` or `budget_exceeded` is about (src/daemon/budgets.ts). */
export interface BudgetReport {
  /** `session`: the session's lifetime cap; `hour`/`day`: the fleet's rolling windows. */
  scope: "session" | "hour" | "day";
  fleet: string;
  /** The cap, in tokens. */
  budget: number;
  /** Tokens counted against it so far. */
  spend: number;
  /**
   * When the window has room again (ISO), once it is spent; null while it has room, and always
   * for a session's cap, which no time reopens.
   */
  reopensAt: string | null;
}

/**
 * How codex reported a completed turn: `completed`, or `inProgress`, which codex never sends
 * with `turn/completed` and codexd takes for done rather than hang.
 */
export type TurnStatus = "completed" | "inProgress";

/** A policy in shadow mode would have decided otherwise (src/approval/bridge.ts). */
export interface PolicyShadow {
  type: "policy.shadow";
  turnId?: string;
  policy: string;
  policyVersion: string;
  request: unknown;
  shadow: { decision: string; ruleId?: string; source: string; reason: string };
  actual: {
    policy: string;
    policyVersion: string;
    decision: string;
    ruleId?: string;
    source: string;
    reason: string;
  };
}

/** An event as a provider produces it; the handle adds `sessionId` and `ts`. */
export type EventBody =
  | { type: "session.started"; turnId?: string; threadId: string; model?: string; cwd: string }
  | { type: "turn.started"; turnId?: string }
  | { type: "text.delta"; turnId?: string; itemId?: string; text: string }
  | { type: "message"; turnId?: string; itemId?: string; text: string }
  | { type: "reasoning"; turnId?: string; itemId?: string; text: string }
  | { type: "tool.use"; turnId?: string; toolId: string; name: string; input: unknown }
  | {
    type: "tool.result";
    turnId?: string;
    toolId: string;
    output: string;
    isError: boolean;
    exitCode?: number | null;
  }
  | { type: "approval"; turnId?: string } & ApprovalRecord
  | PolicyShadow
  /** One model response's usage; `total`: the thread's, as codex counts it (budgets.ts). */
  | { type: "usage"; turnId?: string; total?: Usage } & Usage
  | SystemEvent
  | { type: "result"; turnId?: string; text: string; usage?: Usage; turnStatus: TurnStatus }
  | { type: "error"; turnId?: string; code: ErrorCode; message: string; budget?: BudgetReport };

export type SessionEvent = EventBody & { sessionId: string; ts: string };

/**
 * What happened around the turns rather than in them: one member per `subtype`. Each may carry a
 * human `message`.
 */
export type SystemEvent =
  | { type: "system"; turnId?: string; message?: string }
    & (
      /** A prompt as the runner sent it (spawn, resume, send; `steer`: an inject). The daemon's. */
      | { subtype: "user_prompt"; text: string; steer?: boolean }
      /** A token budget is 80 % spent (src/daemon/budgets.ts). The daemon's. */
      | { subtype: "budget_warning"; message: string; threshold: number } & BudgetReport
      /** codex reported an error; `codex_retry`: it retries by itself. */
      | { subtype: "codex_error" | "codex_retry"; message: string; willRetry: boolean }
      | { subtype: "codex_warning"; message: string; source?: "guardian" }
      | { subtype: "session_resumed"; threadId: string }
      /** codex could not resume the thread: a new one, seeded with the transcript. */
      | { subtype: "session_reseeded"; threadId: string; previousThreadId: string; message: string }
      /** The session's event stream ends here (no terminal event when it was idle). */
      | { subtype: "session_stopped"; reason: ErrorCode }
      /** An interrupt dropped turns waiting in the queue. */
      | { subtype: "queue_cleared"; dropped: number }
      /** A request from codex that codexd does not answer with an approval. */
      | { subtype: "unhandled_server_request"; method: string; reason: string }
      | { subtype: "approval_denied"; requestId: string; message: string }
      /**
       * codex started a turn on its own (a goal's continuation, or any feature that does): it is
       * interrupted, its events are dropped and its approvals declined unasked. `threadId`: a
       * sub-agent's thread, when the refused turn was one this session's turn spawned.
       */
      | { subtype: "turn_refused"; turnId: string; message: string; threadId?: string }
    )
  | SecurityEvent;

export type SystemSubtype = SystemEvent["subtype"];

/**
 * What codex reports about security, journaled as `system` events (codex/event-map.ts). Each is
 * one of EventBody's `system` events, with these fields.
 */
export type SecurityEvent =
  /** Text typed into a running terminal (`write_stdin`): codex asks no approval for it. */
  | {
    type: "system";
    subtype: "terminal_input";
    turnId?: string;
    /** The command execution item whose terminal it is. */
    itemId: string;
    processId: string;
    text: string;
  }
  /** codex changed a file change's patch; its paths are added to those the approval judges. */
  | {
    type: "system";
    subtype: "patch_updated";
    turnId?: string;
    itemId: string;
    changes: Array<{ path: string; kind: string; movePath?: string }>;
  }
  /** A reviewer inside codex (auto_review, guardian) judged an action without asking codexd. */
  | {
    type: "system";
    subtype: "auto_review";
    turnId?: string;
    phase: "started" | "completed" | "strict_review_required";
    reviewId?: string;
    targetItemId?: string;
    status?: string;
    riskLevel?: string;
    userAuthorization?: string;
    rationale?: string;
    decisionSource?: string;
    /** codex's description of the action, as sent. */
    action?: unknown;
  }
  /** codex switched the turn to another model. */
  | {
    type: "system";
    subtype: "model_rerouted";
    turnId?: string;
    fromModel: string;
    toModel: string;
    reason: string;
  };

/** The `system` subtypes of {@link SecurityEvent}. */
export const SECURITY_SUBTYPES: ReadonlySet<SystemSubtype> = new Set<SecurityEvent["subtype"]>([
  "terminal_input",
  "patch_updated",
  "auto_review",
  "model_rerouted",
]);

export type SessionEventType = EventBody["type"];

export function isTerminal(event: { type: string }): boolean {
  return event.type === "result" || event.type === "error";
}

/** What the approval bridge decided, as recorded in `approval` events. */
export interface ApprovalRecord {
  requestId: string;
  kind: ApprovalKind;
  command?: string;
  paths?: string[];
  tool?: { server: string; name: string };
  decision: "allow" | "deny";
  ruleId?: string;
  source: string;
  reason: string;
  policyVersion?: string;
  elapsedMs: number;
}

export type ApprovalKind = "command" | "writeStdin" | "fileChange" | "mcpTool" | "permissions";
