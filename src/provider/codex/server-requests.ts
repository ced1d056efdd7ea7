/**
 * codex server request → what codexd does with it: a pure table. Approval requests become a
 * provider-neutral {@link ApprovalRequest} plus the reply codex reads for each verdict; every other
 * request gets an immediate refusal in the shape its method expects. Nothing is left unanswered.
 */
import { z } from "zod";
import type { ApprovalRequest, ApprovalVerdict } from "../types.ts";
import { fileChangePaths, type McpToolCallInfo } from "./event-map.ts";
import type { FileChangeItem } from "./notifications.ts";
import type { CallSandbox } from "./escalation.ts";

export type ServerRequestPlan =
  | {
    kind: "approval";
    request: ApprovalRequest;
    turnId?: string;
    itemId?: string;
    reply: (decision: "allow" | "deny") => unknown;
    /** Decided here, without the bridge: a request codexd cannot judge is declined. */
    decided?: ApprovalVerdict;
  }
  | { kind: "refuse"; result: unknown; reason: string }
  | { kind: "error"; code: number; message: string };

const CommandApproval = z.looseObject({
  kind: z.enum(["command", "humanCommand", "writeStdin"]).optional(),
  threadId: z.string(),
  turnId: z.string(),
  itemId: z.string(),
  command: z.string().nullish(),
  cwd: z.string().nullish(),
  reason: z.string().nullish(),
  additionalPermissions: z.unknown().optional(),
});

const FileChangeApproval = z.looseObject({
  threadId: z.string(),
  turnId: z.string(),
  itemId: z.string(),
  reason: z.string().nullish(),
  grantRoot: z.string().nullish(),
});

const PermissionsApproval = z.looseObject({
  threadId: z.string(),
  turnId: z.string(),
  itemId: z.string(),
  reason: z.string().nullish(),
  permissions: z.unknown(),
});

const Elicitation = z.looseObject({
  threadId: z.string(),
  turnId: z.string().nullish(),
  serverName: z.string(),
  message: z.string().optional(),
  _meta: z.unknown().optional(),
});

const ElicitationMeta = z.looseObject({
  codex_approval_kind: z.literal("mcp_tool_call"),
  tool_name: z.string().optional(),
  tool: z.string().optional(),
  tool_params: z.unknown().optional(),
});

const commandReply = (d: "allow" | "deny") => ({ decision: d === "allow" ? "accept" : "decline" });
const elicitationReply = (d: "allow" | "deny") => ({
  action: d === "allow" ? "accept" : "decline",
  content: null,
  _meta: null,
});

export interface ServerRequestContext {
  /** The session's worktree, used when codex omits the command's cwd. */
  worktree: string;
  /** File-change items seen in `item/started`, by item id (the approval carries no paths). */
  fileChanges: ReadonlyMap<string, FileChangeItem>;
  /**
   * MCP tool calls started (`item/started`) and not yet completed, by item id. The tool-approval
   * elicitation names no item and, before codex 0.169, no tool: the call it is about is the
   * thread's running call on the same server.
   */
  mcpToolCalls?: ReadonlyMap<string, McpToolCallInfo>;
  /**
   * Tool calls' sandbox requests by call id (= the approval's item id): the thread's raw items
   * (escalation.ts), or for a resumed thread the approval's call read from its rollout
   * (rollout-calls.ts). Absent, the approval is judged without them.
   */
  toolCalls?: ReadonlyMap<string, CallSandbox>;
}

/**
 * What a command approval asks beyond the sandbox: extra permissions named in the request, an
 * escalation its tool call asked for, or a call codex did not show although it shows the others.
 */
function commandEscalation(
  itemId: string,
  additionalPermissions: unknown,
  context: ServerRequestContext,
): string | undefined {
  if (additionalPermissions !== undefined && additionalPermissions !== null) {
    return `additionalPermissions: ${JSON.stringify(additionalPermissions)}`;
  }
  if (context.toolCalls === undefined) return undefined;
  const call = context.toolCalls.get(itemId);
  return call === undefined
    ? "a tool call codex did not show, so its sandbox request is unknown"
    : call.escalation;
}

export function planServerRequest(
  method: string,
  params: unknown,
  context: ServerRequestContext,
): ServerRequestPlan {
  switch (method) {
    case "item/commandExecution/requestApproval": {
      const p = CommandApproval.safeParse(params);
      if (!p.success) return invalid(method, p.error, commandReply("deny"));
      const d = p.data;
      const kind = d.kind === "writeStdin" ? "writeStdin" : "command";
      // Typing into a running process changes nothing about where it runs.
      const escalation = kind === "command"
        ? commandEscalation(d.itemId, d.additionalPermissions, context)
        : undefined;
      return {
        kind: "approval",
        turnId: d.turnId,
        itemId: d.itemId,
        request: {
          kind,
          command: d.command ?? "",
          cwd: d.cwd ?? context.worktree,
          reason: d.reason ?? null,
          ...(escalation !== undefined && { escalation }),
        },
        reply: commandReply,
      };
    }
    case "item/fileChange/requestApproval": {
      const p = FileChangeApproval.safeParse(params);
      if (!p.success) return invalid(method, p.error, commandReply("deny"));
      const item = context.fileChanges.get(p.data.itemId);
      return {
        kind: "approval",
        turnId: p.data.turnId,
        itemId: p.data.itemId,
        // An unseen item has no paths: the bridge declines a change it cannot see.
        request: {
          kind: "fileChange",
          paths: item ? fileChangePaths(item) : [],
          grantRoot: p.data.grantRoot ?? null,
          reason: p.data.reason ?? null,
        },
        reply: commandReply,
      };
    }
    case "item/permissions/requestApproval": {
      const p = PermissionsApproval.safeParse(params);
      if (!p.success) return invalid(method, p.error, { permissions: {}, scope: "turn" });
      const requested = p.data.permissions;
      return {
        kind: "approval",
        turnId: p.data.turnId,
        itemId: p.data.itemId,
        request: { kind: "permissions", permissions: requested, reason: p.data.reason ?? null },
        reply: (d) => ({ permissions: d === "allow" ? requested : {}, scope: "turn" }),
      };
    }
    case "mcpServer/elicitation/request": {
      const p = Elicitation.safeParse(params);
      if (!p.success) return invalid(method, p.error, elicitationReply("deny"));
      const meta = ElicitationMeta.safeParse(p.data._meta);
      if (!meta.success) {
        return {
          kind: "refuse",
          result: elicitationReply("deny"),
          reason: "codexd answers no MCP elicitation but tool-call approvals",
        };
      }
      const d = p.data;
      const call = mcpToolCallOf(
        context,
        d.serverName,
        d.turnId,
        meta.data.tool_name ?? meta.data.tool,
      );
      const plan = {
        kind: "approval" as const,
        ...(d.turnId ? { turnId: d.turnId } : {}),
        ...("id" in call && { itemId: call.id }),
        request: {
          kind: "mcpTool" as const,
          server: d.serverName,
          tool: "id" in call ? call.tool : "",
          arguments: "id" in call ? call.arguments : meta.data.tool_params,
        },
        reply: elicitationReply,
      };
      if ("id" in call) return plan;
      return {
        ...plan,
        decided: {
          decision: "deny",
          source: "builtin",
          ruleId: "mcp-unknown-tool",
          reason: call.why,
        },
      };
    }
    case "item/tool/requestUserInput":
      return { kind: "refuse", result: { answers: {} }, reason: "no person answers questions" };
    case "item/tool/call":
      return {
        kind: "refuse",
        result: {
          contentItems: [{ type: "inputText", text: "codexd provides no dynamic tools" }],
          success: false,
        },
        reason: "codexd registers no dynamic tools",
      };
    case "execCommandApproval":
    case "applyPatchApproval":
      return {
        kind: "refuse",
        result: { decision: { denied: { rejection: "codexd judges only v2 approval requests" } } },
        reason: "legacy approval request",
      };
    default:
      return { kind: "error", code: -32601, message: `codexd does not handle ${method}` };
  }
}

/**
 * The MCP tool call an approval elicitation is about: the running `mcpToolCall` item of the same
 * server (and turn, when codex names it). The item is the authority: the tool name in `_meta`
 * (sent by codex 0.169, not by 0.166) only chooses among running calls of different tools and is
 * never trusted alone. Without such a call, or with several and no name that picks one, the tool
 * is unknown and the request is declined: a per-tool rule cannot be judged, and a server-wide
 * allow must not stand in for it.
 */
function mcpToolCallOf(
  context: ServerRequestContext,
  server: string,
  turnId: string | null | undefined,
  metaTool: string | undefined,
): McpToolCallInfo | { why: string } {
  const running = [...(context.mcpToolCalls?.values() ?? [])]
    .filter((c) => c.server === server && (!turnId || c.turnId === turnId));
  const tools = new Set(running.map((c) => c.tool));
  if (tools.size === 1) return running[0]!;
  if (tools.size === 0) {
    return { why: `MCP tool approval for server ${server}: no call of its tools is running` };
  }
  const named = running.find((c) => c.tool === metaTool);
  if (named) return named;
  return {
    why: `MCP tool approval for server ${server}: several of its tools run (` +
      [...tools].join(", ") +
      `); the request names ${metaTool === undefined ? "none" : JSON.stringify(metaTool)}`,
  };
}

/** Params codexd cannot read are refused in the method's own shape, so the turn goes on. */
function invalid(method: string, error: z.ZodError, result: unknown): ServerRequestPlan {
  return { kind: "refuse", result, reason: `invalid ${method} params: ${z.prettifyError(error)}` };
}
