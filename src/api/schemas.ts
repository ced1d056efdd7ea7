/**
 * The wire shapes of codexd's HTTP API: one zod schema per shape, used by the routes to
 * validate, by `/v1/openapi.json` to document (`.meta({ id })` names a component), and by the
 * client (src/client.ts) to check what it receives. Plain zod and nothing else: the published
 * client imports this file, so no server code, no HTTP framework and no filesystem access here
 * (whether a cwd exists is the service's question).
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { Spec } from "../provider/spec.ts";

export { Spec };

export const ErrorDetail = z.object({
  /** Dotted path of the offending field (`cwd`, `permissionConfig.allowPatterns.0`); "" for the body. */
  path: z.string(),
  message: z.string(),
  /** The rule that refused it, where a policy or the built-in floor did (`env.floor`, `cwd.system`). */
  rule: z.string().optional(),
}).meta({ id: "ErrorDetail" });
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
}).meta({ id: "Error" });
export type ErrorBody = z.infer<typeof ErrorBody>;

export const SessionId = z.string().min(1).max(200).regex(
  /^[A-Za-z0-9._:-]+$/,
  "is not a session id",
);
export const SessionParams = z.object({
  id: SessionId.meta({ param: { name: "id", in: "path" } }),
});
export const ApprovalParams = SessionParams.extend({
  requestId: z.string().min(1).max(200).meta({ param: { name: "requestId", in: "path" } }),
});

export const HealthStatus = z.enum(["ok", "degraded", "starting", "stopping"]);
export const Health = z.object({
  status: HealthStatus,
  /** codexd's own version. */
  version: z.string(),
  codex: z.object({
    version: z.string().nullable(),
    pid: z.number().int().nullable(),
    /** The child's life-cycle state (`running`, `starting`, `restarting`, `stopped`, ...). */
    state: z.string(),
    restarts: z.number().int().nonnegative().optional(),
    /** The pool's app-server children (`codex.pool`; src/daemon/pool.ts). */
    children: z.array(z.object({
      id: z.number().int(),
      pid: z.number().int().nullable(),
      /** `ready`, `draining` (being replaced), `starting`, `degraded`, `stopping`, `stopped`. */
      state: z.string(),
      /** Live sessions on this child. */
      sessions: z.number().int().nonnegative(),
      rssBytes: z.number().int().nonnegative().nullable(),
      version: z.string().nullable(),
      restarts: z.number().int().nonnegative(),
    })).optional(),
  }),
  /** What a fleet runner needs to place sessions across hosts. */
  capacity: z.object({
    liveSessions: z.number().int().nonnegative(),
    /** `limits.maxLiveSessions`. */
    maxLiveSessions: z.number().int().nonnegative(),
    /** Spawns this daemon takes now: 0 while no codex child is ready or it is stopping. */
    freeSlots: z.number().int().nonnegative(),
  }).optional(),
  /** Protocol drift and other reasons for `degraded`. */
  problems: z.array(z.string()).default([]),
  /** The last lines codex wrote to stderr (redacted), when degraded. */
  stderr: z.array(z.string()).default([]),
  uptimeSeconds: z.number().nonnegative().optional(),
  /**
   * Liveness without killing anything: silence alone never ends a turn, so health reports what a
   * person may want to look at instead.
   */
  sessions: z.object({
    live: z.number().int().nonnegative(),
    /** `ask` approvals waiting for a person, and since when the oldest waits. */
    pendingApprovals: z.number().int().nonnegative(),
    oldestPendingApprovalSince: z.string().nullable(),
  }).optional(),
}).meta({ id: "Health" });
export type Health = z.input<typeof Health>;

export const CodexRestartAccepted = z.object({
  /** Every codex child is replaced one at a time; `GET /v1/health` shows the children. */
  restarting: z.literal(true),
}).meta({ id: "CodexRestartAccepted" });

export const CapabilitiesBody = z.object({
  supportsMessageInjection: z.boolean(),
  supportsSessionResume: z.boolean(),
  supportsToolPlugins: z.boolean(),
  needsBaseInstructions: z.boolean(),
  needsPermissionConfig: z.boolean(),
  supportsCodeIntelligenceEnforcement: z.boolean(),
  emitsSubagentEvents: z.boolean(),
  supportsReasoningEffort: z.boolean(),
  toolPermissionFormat: z.literal("codex"),
}).meta({ id: "Capabilities" });

export const SpawnResult = z.object({
  sessionId: z.string(),
  threadId: z.string(),
  /** Spec fields the provider accepted but does not act on. */
  ignoredFields: z.array(z.string()),
}).meta({ id: "SpawnResult" });
export type SpawnResult = z.infer<typeof SpawnResult>;

export const UsageTotals = z.object({
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  reasoningTokens: z.number(),
}).meta({ id: "Usage" });

/** `budget_exceeded`: a token budget stopped it; resumable once the budget has room. */
export const SessionStatus = z.enum([
  "running",
  "idle",
  "stopped",
  "failed",
  "interrupted",
  "budget_exceeded",
]);
export type SessionStatus = z.infer<typeof SessionStatus>;

/** One session as listed. No `env`: the spec's environment values are secrets. */
export const SessionInfo = z.object({
  sessionId: z.string(),
  threadId: z.string(),
  status: SessionStatus,
  policy: z.string(),
  permissionMode: z.string(),
  cwd: z.string(),
  model: z.string().nullable().optional(),
  createdAt: z.string(),
  lastEventAt: z.string().nullable(),
  /** The running turn, if any. */
  currentTurn: z.object({ turnId: z.string().nullable(), startedAt: z.string() }).nullable(),
  queuedTurns: z.number().int().nonnegative(),
  usage: UsageTotals,
  /** The names (never the values) of the spec's extra environment variables. */
  envKeys: z.array(z.string()).default([]),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Why the session failed, when `status` is `failed`. */
  failure: z.string().optional(),
  /**
   * The session's token cap (its spec's `budget.tokens` within its policy's `sessionTokens`; null:
   * none) and the tokens it spent over its life, as counted against it.
   */
  budget: z.object({
    tokens: z.number().int().nonnegative().nullable(),
    spent: z.number().int().nonnegative(),
  }).optional(),
}).meta({ id: "Session" });
export type SessionInfo = z.input<typeof SessionInfo>;

export const SessionList = z.object({ sessions: z.array(SessionInfo) }).meta({ id: "SessionList" });

export const TurnRequest = z.strictObject({ prompt: z.string().min(1).max(1_000_000) })
  .meta({ id: "TurnRequest" });
export const SendResult = z.object({ turnId: z.string().optional(), queued: z.boolean() })
  .meta({ id: "SendResult" });
export type SendResult = z.infer<typeof SendResult>;

export const InjectRequest = z.strictObject({ text: z.string().min(1).max(1_000_000) })
  .meta({ id: "InjectRequest" });
export const InjectResult = z.object({
  deliveredAs: z.enum(["steer", "nextTurn"]),
  turnId: z.string().optional(),
}).meta({ id: "InjectResult" });
export type InjectResult = z.infer<typeof InjectResult>;

export const Accepted = z.object({ sessionId: z.string(), status: z.string() }).meta({
  id: "Accepted",
});

/** A journaled event: the provider's event plus its sequence number. */
export const StoredEvent = z.looseObject({
  seq: z.number().int().positive(),
  type: z.string(),
  sessionId: z.string(),
  ts: z.string(),
  turnId: z.string().optional(),
}).meta({ id: "Event" });
export type StoredEvent = z.infer<typeof StoredEvent>;
/** The fields every event has, checked without copying the rest (clients validate with it). */
export const EventEnvelope = z.object({
  seq: z.number().int().positive(),
  type: z.string(),
  sessionId: z.string(),
  ts: z.string(),
  turnId: z.string().optional(),
});

const NonNegativeInt = z.coerce.number().int().nonnegative();
export const EventsQuery = z.object({
  after: NonNegativeInt.max(Number.MAX_SAFE_INTEGER).optional().meta({
    description: "Return only events with a larger seq (a Last-Event-ID header wins over it).",
  }),
  format: z.enum(["sse", "json"]).default("sse"),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000).meta({
    description: "Only with format=json.",
  }),
});
/** EventSource sends the last seen `id:` back on reconnect; it wins over `?after`. */
export const EventsHeaders = z.object({
  "last-event-id": z.string().regex(/^\s*\d{0,15}\s*$/, "must be a sequence number").optional()
    .meta({ param: { name: "last-event-id", in: "header" } }),
});
export const EventList = z.array(StoredEvent).meta({ id: "EventList" });

export const ApprovalDecisionRecord = z.looseObject({
  requestId: z.string(),
  kind: z.string(),
  decision: z.enum(["allow", "deny"]),
  source: z.string(),
  reason: z.string(),
  ruleId: z.string().optional(),
  command: z.string().optional(),
  paths: z.array(z.string()).optional(),
  ts: z.string().optional(),
}).meta({ id: "ApprovalDecision" });

export const PendingApproval = z.object({
  requestId: z.string(),
  sessionId: z.string(),
  policy: z.string(),
  request: z.object({
    kind: z.string(),
    command: z.string().optional(),
    paths: z.array(z.string()).optional(),
    server: z.string().optional(),
    tool: z.string().optional(),
  }),
  ruleId: z.string().optional(),
  reason: z.string(),
  since: z.string(),
  deadline: z.string(),
}).meta({ id: "PendingApproval" });

export const ApprovalsView = z.object({
  decisions: z.array(ApprovalDecisionRecord),
  pending: z.array(PendingApproval),
}).meta({ id: "Approvals" });
export type ApprovalsView = z.input<typeof ApprovalsView>;

export const ApprovalAnswer = z.strictObject({ decision: z.enum(["allow", "deny"]) })
  .meta({ id: "ApprovalAnswer" });
export const ApprovalAnswered = z.object({
  requestId: z.string(),
  decision: z.enum(["allow", "deny"]),
}).meta({ id: "ApprovalAnswered" });

export const PolicySummary = z.object({
  name: z.string(),
  version: z.string(),
  file: z.string().optional(),
  mode: z.enum(["enforce", "shadow"]),
  shadows: z.string().optional(),
  default: z.enum(["allow", "deny", "ask"]),
  allowBypass: z.boolean(),
  stale: z.boolean().optional(),
}).meta({ id: "Policy" });
export type PolicySummary = z.infer<typeof PolicySummary>;
export const PolicyList = z.object({ policies: z.array(PolicySummary) }).meta({ id: "PolicyList" });

export const PolicyIssue = z.object({
  file: z.string(),
  line: z.number(),
  col: z.number(),
  key: z.string(),
  message: z.string(),
}).meta({ id: "PolicyIssue" });

/** A reload always answers 200: files that failed keep their previous version; `ok` says if any did. */
export const ReloadReport = z.object({
  ok: z.boolean(),
  issues: z.array(PolicyIssue),
  changed: z.array(z.string()),
  policies: z.array(PolicySummary),
}).meta({ id: "ReloadReport" });
export type ReloadReport = z.infer<typeof ReloadReport>;

const AbsolutePath = z.string().min(1).refine(isAbsolute, "must be an absolute path");

/** A dry run: a command line, or a file change (paths inside the worktree `cwd`). */
export const EvaluateRequest = z.strictObject({
  policy: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "is not a policy name"),
  // No length cap here: the engine declines a command over the policy's maxCommandLength.
  command: z.string().min(1).optional(),
  paths: z.array(AbsolutePath).min(1).max(1000).optional(),
  /** The worktree; required with `paths`, defaults to `/` for commands. */
  cwd: AbsolutePath.optional(),
  permissionMode: z.enum(["default", "acceptEdits", "plan", "bypassPermissions"]).optional(),
}).superRefine((body, ctx) => {
  if ((body.command === undefined) === (body.paths === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: ["command"],
      message: "give exactly one of command, paths",
    });
  }
  if (body.paths !== undefined && body.cwd === undefined) {
    ctx.addIssue({ code: "custom", path: ["cwd"], message: "is required with paths" });
  }
}).meta({ id: "EvaluateRequest" });
export type EvaluateRequest = z.infer<typeof EvaluateRequest>;

export const EvaluateResult = z.object({
  decision: z.enum(["allow", "deny", "ask"]),
  ruleId: z.string().optional(),
  source: z.string(),
  reason: z.string(),
  policyVersion: z.string().optional(),
}).meta({ id: "EvaluateResult" });
export type EvaluateResult = z.infer<typeof EvaluateResult>;

/** A one-time login link to the web console (`POST /v1/ui/login-link`). */
export const LoginLink = z.object({
  /** The link to open, on the address the request came to. */
  url: z.string(),
  path: z.string(),
  expiresAt: z.string(),
}).meta({ id: "LoginLink" });

export const ShutdownAccepted = z.object({ status: z.literal("stopping") }).meta({
  id: "Shutdown",
});

// ---------------------------------------------------------------------------------------------
// Fleets and token budgets (src/daemon/budgets.ts)

const Tokens = z.number().int().nonnegative();

/** A policy's token caps; null: no cap. */
export const FleetBudgets = z.object({
  sessionTokens: Tokens.nullable(),
  fleetTokensPerHour: Tokens.nullable(),
  fleetTokensPerDay: Tokens.nullable(),
  countCachedInput: z.boolean(),
}).meta({ id: "FleetBudgets" });

/** A fleet's spend over a rolling window. */
export const BudgetWindow = z.object({
  tokens: Tokens,
  /** The fleet's cap over this window; null: none. */
  budget: Tokens.nullable(),
  /** While the window is spent: when it has room again; else null. */
  reopensAt: z.string().nullable(),
}).meta({ id: "BudgetWindow" });

export const FleetInfo = z.object({
  /** The policy's name (a spec's `policy`). */
  name: z.string(),
  /** null when no policy of that name is loaded (sessions or spend remain). */
  policyVersion: z.string().nullable(),
  /** Sessions running or idle. */
  liveSessions: z.number().int().nonnegative(),
  budgets: FleetBudgets.nullable(),
  usage: z.object({ lastHour: BudgetWindow, lastDay: BudgetWindow }),
}).meta({ id: "Fleet" });
export type FleetInfo = z.input<typeof FleetInfo>;
export const FleetList = z.object({ fleets: z.array(FleetInfo) }).meta({ id: "FleetList" });

/** The `details` of a 429 `budget_exceeded`. */
export const BudgetRefusal = z.object({
  /** `session`: the session's own cap; `hour`, `day`: the fleet's rolling windows. */
  scope: z.enum(["session", "hour", "day"]),
  fleet: z.string(),
  /** The cap, in tokens. */
  budget: Tokens,
  /** Tokens counted against it. */
  spend: Tokens,
  /** When the window has room again (also the `Retry-After` header); null for a session's cap. */
  reopensAt: z.string().nullable(),
  /** Seconds until `reopensAt`. */
  retryAfter: z.number().int().nonnegative().nullable(),
}).meta({ id: "BudgetRefusal" });
export const BudgetErrorBody = z.object({
  error: z.object({
    code: z.literal("budget_exceeded"),
    message: z.string(),
    details: BudgetRefusal,
  }),
}).meta({ id: "BudgetError" });
