/**
 * Pure pieces of session bookkeeping: a stored row as the API shows it, usage arithmetic, and
 * the status a terminal error leaves a session in.
 */
import { z } from "zod";
import type { Usage } from "../provider/events.ts";
import type { SessionInfo, SessionStatus } from "../api/schemas.ts";
import type { SessionRow } from "./store.ts";

export const ZERO_USAGE: Usage = {
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
};

/** The fields of a stored (redacted) spec the listing shows; anything else stays unread. */
const StoredSpecView = z.object({
  cwd: z.string().catch(""),
  model: z.string().nullable().catch(null),
  permissionMode: z.enum(["default", "acceptEdits", "plan", "bypassPermissions"]).catch("default"),
  env: z.record(z.string(), z.unknown()).catch({}),
  metadata: z.record(z.string(), z.unknown()).optional().catch(undefined),
});

/** What only the live process knows of a session. */
export interface LiveFacts {
  queuedTurns: number;
  /** Newer than the row's when events arrived since its last write. */
  lastEventAt?: string;
}

export function sessionInfo(row: SessionRow, live: LiveFacts): SessionInfo {
  const spec = StoredSpecView.parse(row.spec);
  return {
    sessionId: row.id,
    threadId: row.threadId,
    status: row.status,
    policy: row.policy,
    permissionMode: spec.permissionMode,
    cwd: spec.cwd,
    model: spec.model,
    createdAt: row.createdAt,
    lastEventAt: live.lastEventAt ?? row.lastEventAt ?? null,
    currentTurn: row.status === "running" && row.currentTurnStartedAt
      ? { turnId: row.currentTurnId ?? null, startedAt: row.currentTurnStartedAt }
      : null,
    queuedTurns: live.queuedTurns,
    usage: row.usage ?? ZERO_USAGE,
    envKeys: Object.keys(spec.env),
    ...(spec.metadata && { metadata: spec.metadata }),
    ...(row.failure && { failure: row.failure }),
  };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** The status an error leaves a session in; undefined: the session goes on. */
export function statusAfterError(code: string): SessionStatus | undefined {
  switch (code) {
    case "app_server_crashed":
    case "daemon_shutdown":
      return "interrupted";
    case "context_cancelled":
      return "stopped";
    case "budget_exceeded":
      return "budget_exceeded";
    case "unsafe_repository":
      return "failed";
    default:
      return undefined;
  }
}
