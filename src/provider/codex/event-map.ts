/**
 * codex notification → codexd events: a pure table, tested on payloads captured from codex 0.169.
 * The handle stamps `sessionId` and `ts`, and builds each turn's terminal event with
 * {@link terminalEvent} from what it saw during the turn.
 */
import type { EventBody, SecurityEvent, Usage } from "../events.ts";
import { type FileChangeItem, NotificationParams, ThreadItem, Turn } from "./notifications.ts";
import type { z } from "zod";
import { type CallSandbox, callSandbox } from "./escalation.ts";

/** An MCP tool call codex started: the tool-approval elicitation that may follow names neither. */
export interface McpToolCallInfo {
  id: string;
  turnId: string;
  server: string;
  tool: string;
  arguments?: unknown;
}

export interface MappedNotification {
  events: EventBody[];
  /**
   * A fileChange item started, or codex updated its patch: the bridge needs its paths when the
   * approval request comes (an update adds to the paths already known, never replaces them).
   */
  fileChange?: FileChangeItem;
  /** An MCP tool call started: the approval request that may follow is matched against it. */
  mcpToolCallStarted?: McpToolCallInfo;
  /** An MCP tool call ended (its item id). */
  mcpToolCallEnded?: string;
  /** A raw tool-call item: what it asks of the sandbox, for its approval to come. */
  toolCall?: CallSandbox;
  /** A raw item arrived: this thread has raw events, so every call's arguments are shown. */
  rawItem?: boolean;
  /** The turn ended; the handle turns this into the terminal event. */
  turnCompleted?: z.infer<typeof Turn>;
  /** Cumulative thread usage reported by codex. */
  totalUsage?: Usage;
  /** Not a method codexd knows (counted, never fatal). */
  unknown?: boolean;
  /** A known method whose params did not have the expected shape. */
  invalid?: string;
}

/** Methods codex sends that codexd deliberately does not turn into events. */
const QUIET = new Set([
  "item/commandExecution/outputDelta",
  "item/reasoning/textDelta",
  "item/reasoning/summaryTextDelta",
  "item/reasoning/summaryPartAdded",
  "item/fileChange/outputDelta",
  "thread/status/changed",
  "thread/started",
  "thread/archived",
  "thread/unarchived",
  "thread/closed",
  "serverRequest/resolved",
  "turn/diff/updated",
  "turn/plan/updated",
  "mcpServer/startupStatus/updated",
  "account/rateLimits/updated",
  "thread/name/updated",
  "thread/goal/cleared",
  "thread/goal/updated",
  "remoteControl/status/changed",
  "configWarning",
  "deprecationNotice",
]);

const NONE: MappedNotification = { events: [] };

/** A method codexd deliberately leaves out of the journal. */
export function isQuiet(method: string): boolean {
  return QUIET.has(method);
}

export function mapNotification(method: string, params: unknown): MappedNotification {
  if (!(method in NotificationParams)) {
    return QUIET.has(method) ? NONE : { events: [], unknown: true };
  }
  const schema = NotificationParams[method as keyof typeof NotificationParams];
  const parsed = schema.safeParse(params);
  if (!parsed.success) return { events: [], invalid: `${method}: ${parsed.error.message}` };
  const p = parsed.data as Record<string, unknown>;
  switch (method) {
    case "turn/started": {
      const { turn } = p as z.infer<(typeof NotificationParams)["turn/started"]>;
      return { events: [{ type: "turn.started", turnId: turn.id }] };
    }
    case "rawResponseItem/completed": {
      const { item } = p as z.infer<(typeof NotificationParams)["rawResponseItem/completed"]>;
      const toolCall = callSandbox(item);
      return toolCall ? { events: [], rawItem: true, toolCall } : { events: [], rawItem: true };
    }
    case "turn/completed":
      return {
        events: [],
        turnCompleted: (p as z.infer<(typeof NotificationParams)["turn/completed"]>).turn,
      };
    case "item/agentMessage/delta": {
      const d = p as z.infer<(typeof NotificationParams)["item/agentMessage/delta"]>;
      return {
        events: [{ type: "text.delta", turnId: d.turnId, itemId: d.itemId, text: d.delta }],
      };
    }
    case "item/started":
    case "item/completed": {
      const n = p as { turnId: string; item: unknown };
      const item = ThreadItem.safeParse(n.item);
      if (!item.success) return NONE; // an item type codexd does not map
      return method === "item/started"
        ? itemStarted(n.turnId, item.data)
        : itemCompleted(n.turnId, item.data);
    }
    case "thread/tokenUsage/updated": {
      const u = p as z.infer<(typeof NotificationParams)["thread/tokenUsage/updated"]>;
      const last = toUsage(u.tokenUsage.last);
      return {
        events: [{ type: "usage", turnId: u.turnId, ...last, total: toUsage(u.tokenUsage.total) }],
        totalUsage: toUsage(u.tokenUsage.total),
      };
    }
    case "error": {
      const e = p as z.infer<(typeof NotificationParams)["error"]>;
      return {
        events: [{
          type: "system",
          subtype: e.willRetry ? "codex_retry" : "codex_error",
          turnId: e.turnId,
          message: e.error.message,
          willRetry: e.willRetry,
        }],
      };
    }
    case "warning": {
      const w = p as z.infer<(typeof NotificationParams)["warning"]>;
      return { events: [{ type: "system", subtype: "codex_warning", message: w.message }] };
    }
    case "guardianWarning": {
      const w = p as z.infer<(typeof NotificationParams)["guardianWarning"]>;
      return {
        events: [{
          type: "system",
          subtype: "codex_warning",
          source: "guardian",
          message: w.message,
        }],
      };
    }
    case "item/commandExecution/terminalInteraction": {
      // Text typed into a running terminal: codex sends no approval request for it, so this is
      // the only record of what was typed.
      const t = p as z.infer<
        (typeof NotificationParams)["item/commandExecution/terminalInteraction"]
      >;
      return {
        events: [
          {
            type: "system",
            subtype: "terminal_input",
            turnId: t.turnId,
            itemId: t.itemId,
            processId: t.processId,
            text: t.stdin,
          } satisfies SecurityEvent,
        ],
      };
    }
    case "item/fileChange/patchUpdated": {
      const u = p as z.infer<(typeof NotificationParams)["item/fileChange/patchUpdated"]>;
      const item: FileChangeItem = {
        type: "fileChange",
        id: u.itemId,
        changes: u.changes,
        status: "inProgress",
      };
      return {
        events: [
          {
            type: "system",
            subtype: "patch_updated",
            turnId: u.turnId,
            itemId: u.itemId,
            changes: describeChanges(item),
          } satisfies SecurityEvent,
        ],
        fileChange: item,
      };
    }
    case "item/autoApprovalReview/started":
    case "item/autoApprovalReview/completed": {
      const r = p as z.infer<(typeof NotificationParams)["item/autoApprovalReview/completed"]>;
      return {
        events: [
          {
            type: "system",
            subtype: "auto_review",
            turnId: r.turnId,
            phase: method === "item/autoApprovalReview/started" ? "started" : "completed",
            reviewId: r.reviewId,
            ...(r.targetItemId != null && { targetItemId: r.targetItemId }),
            status: r.review.status,
            ...(r.review.riskLevel != null && { riskLevel: r.review.riskLevel }),
            ...(r.review.userAuthorization != null &&
              { userAuthorization: r.review.userAuthorization }),
            ...(r.review.rationale != null && { rationale: r.review.rationale }),
            ...(r.decisionSource != null && { decisionSource: r.decisionSource }),
            action: r.action,
          } satisfies SecurityEvent,
        ],
      };
    }
    case "autoApprovalReview/strictReviewRequired": {
      const r = p as z.infer<
        (typeof NotificationParams)["autoApprovalReview/strictReviewRequired"]
      >;
      return {
        events: [
          {
            type: "system",
            subtype: "auto_review",
            turnId: r.turnId,
            phase: "strict_review_required",
          } satisfies SecurityEvent,
        ],
      };
    }
    case "model/rerouted": {
      const r = p as z.infer<(typeof NotificationParams)["model/rerouted"]>;
      return {
        events: [
          {
            type: "system",
            subtype: "model_rerouted",
            turnId: r.turnId,
            fromModel: r.fromModel,
            toModel: r.toModel,
            reason: r.reason,
          } satisfies SecurityEvent,
        ],
      };
    }
  }
  return NONE;
}

/** Labels past this many distinct methods are counted under `other` (a bounded label set). */
const MAX_TALLIED_METHODS = 200;

/**
 * Notifications codexd received but did not turn into events, per method and reason (`unknown`:
 * a method codexd does not map; `invalid`: a mapped method whose params did not parse;
 * `no_session`: no session's thread to deliver it to). Process-wide; `/metrics` reads it.
 */
export class NotificationTally {
  readonly #counts = new Map<string, { method: string; reason: string; count: number }>();

  count(method: string, reason: "unknown" | "invalid" | "no_session"): void {
    let key = `${reason} ${method}`;
    if (!this.#counts.has(key) && this.#counts.size >= MAX_TALLIED_METHODS) {
      key = `${reason} other`;
      method = "other";
    }
    const entry = this.#counts.get(key);
    if (entry) entry.count++;
    else this.#counts.set(key, { method, reason, count: 1 });
  }

  entries(): Array<{ method: string; reason: string; count: number }> {
    return [...this.#counts.values()].map((e) => ({ ...e }));
  }

  reset(): void {
    this.#counts.clear();
  }
}

export const unhandledNotifications = new NotificationTally();

function itemStarted(turnId: string, item: ThreadItem): MappedNotification {
  switch (item.type) {
    case "commandExecution":
      return {
        events: [{
          type: "tool.use",
          turnId,
          toolId: item.id,
          name: "command",
          input: { command: item.command, cwd: item.cwd },
        }],
      };
    case "fileChange":
      return {
        events: [{
          type: "tool.use",
          turnId,
          toolId: item.id,
          name: "file_change",
          input: { changes: describeChanges(item) },
        }],
        fileChange: item,
      };
    case "mcpToolCall":
      return {
        events: [{
          type: "tool.use",
          turnId,
          toolId: item.id,
          name: `mcp:${item.server}/${item.tool}`,
          input: item.arguments,
        }],
        mcpToolCallStarted: {
          id: item.id,
          turnId,
          server: item.server,
          tool: item.tool,
          ...(item.arguments !== undefined && { arguments: item.arguments }),
        },
      };
    case "webSearch":
      return {
        events: [{
          type: "tool.use",
          turnId,
          toolId: item.id,
          name: "web_search",
          input: { query: item.query },
        }],
      };
    default:
      return NONE;
  }
}

function itemCompleted(turnId: string, item: ThreadItem): MappedNotification {
  switch (item.type) {
    case "agentMessage":
      return { events: [{ type: "message", turnId, itemId: item.id, text: item.text }] };
    case "reasoning": {
      const text = [...item.summary, ...item.content].join("\n");
      return text ? { events: [{ type: "reasoning", turnId, itemId: item.id, text }] } : NONE;
    }
    case "commandExecution":
      return {
        events: [{
          type: "tool.result",
          turnId,
          toolId: item.id,
          output: item.aggregatedOutput ?? "",
          isError: item.status !== "completed" || (item.exitCode ?? 0) !== 0,
          exitCode: item.exitCode ?? null,
        }],
      };
    case "fileChange":
      return {
        events: [{
          type: "tool.result",
          turnId,
          toolId: item.id,
          output: `${item.status}: ${fileChangePaths(item).join(", ")}`,
          isError: item.status !== "completed",
        }],
      };
    case "mcpToolCall":
      return {
        mcpToolCallEnded: item.id,
        events: [{
          type: "tool.result",
          turnId,
          toolId: item.id,
          output: item.error?.message ?? JSON.stringify(item.result ?? null),
          isError: item.error != null || item.status === "failed",
        }],
      };
    case "webSearch":
      return {
        events: [{
          type: "tool.result",
          turnId,
          toolId: item.id,
          output: item.query ?? "",
          isError: false,
        }],
      };
  }
}

/** Every path a file-change item touches, renames' destinations included. */
export function fileChangePaths(item: FileChangeItem): string[] {
  return item.changes.flatMap((c) => c.kind.move_path ? [c.path, c.kind.move_path] : [c.path]);
}

function describeChanges(item: FileChangeItem) {
  return item.changes.map((c) => ({
    path: c.path,
    kind: c.kind.type,
    ...(c.kind.move_path ? { movePath: c.kind.move_path } : {}),
  }));
}

function toUsage(b: {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens: number;
}): Usage {
  return {
    inputTokens: b.inputTokens,
    cachedInputTokens: b.cachedInputTokens,
    outputTokens: b.outputTokens,
    reasoningTokens: b.reasoningOutputTokens,
  };
}

export function usageDelta(end: Usage, start: Usage | undefined): Usage {
  if (!start) return end;
  return {
    inputTokens: end.inputTokens - start.inputTokens,
    cachedInputTokens: end.cachedInputTokens - start.cachedInputTokens,
    outputTokens: end.outputTokens - start.outputTokens,
    reasoningTokens: end.reasoningTokens - start.reasoningTokens,
  };
}

/** The terminal event of a turn that codex reported complete. */
export function terminalEvent(
  turn: z.infer<typeof Turn>,
  lastMessage: string,
  usage: Usage | undefined,
): EventBody {
  switch (turn.status) {
    case "completed":
    case "inProgress": // never sent with turn/completed; treat as done rather than hang
      return {
        type: "result",
        turnId: turn.id,
        text: lastMessage,
        ...(usage && { usage }),
        turnStatus: turn.status,
      };
    case "interrupted":
      return { type: "error", turnId: turn.id, code: "interrupted", message: "Turn interrupted" };
    case "failed":
      return {
        type: "error",
        turnId: turn.id,
        code: "turn_failed",
        message: turn.error?.message ?? "Turn failed",
      };
  }
}
