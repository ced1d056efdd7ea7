/**
 * The protocol surface codexd uses, in one table: every request we send (with every param field
 * we set and every result field we read), every notification we send or handle, every server
 * request we answer (the fields we read and the answer shapes we send).
 *
 * drift.ts checks this table against the JSON schema the installed codex generates, so a renamed
 * method or field shows up as a named problem at test time and in the daemon's health output,
 * not as a silently ignored field. Whoever adds a call or reads a new field adds it here.
 *
 * Paths: `a.b` descends into an object, `a[]` into an array's items (`input[].text`). A path
 * that reaches an open map (an object without declared properties) is accepted from there on.
 * `values` lists the string values we send or switch on; each must be allowed by the schema.
 * `accepts` lists values codexd reads when codex sends them but does not depend on (one codex
 * release sends them, another does not): one the schema lacks is a note, not a problem.
 *
 * `features` are the codex feature flags codexd pins in every thread's `config` (plan.ts); the
 * JSON schema does not list them, so the check reads `codex features list` instead.
 */
import { PINNED_FEATURES } from "./plan.ts";
import { DEFAULT_ON_IN_REVIEWED_CODEX } from "./feature-baseline.ts";

export interface FieldUse {
  path: string;
  values?: readonly string[];
  accepts?: readonly string[];
}

export type FieldList = readonly (string | FieldUse)[];

export interface RequestUse {
  method: string;
  /** Fields of `params`: the ones we send (client requests) or read (server requests). */
  params: FieldList;
  /** Fields of `result`: the ones we read (client requests) or send (server requests). */
  result: FieldList;
  /**
   * The schema type of the result when it is not named after the params type
   * (`ConfigBatchWriteParams` is answered by `ConfigWriteResponse`).
   */
  resultType?: string;
}

export interface NotificationUse {
  method: string;
  params: FieldList;
  /**
   * For a method codex sends but leaves out of its schema's method list (one marked internal,
   * such as rawResponseItem/completed): the params type, checked instead of the method name.
   */
  paramsType?: string;
}

export interface ProtocolUsage {
  clientRequests: readonly RequestUse[];
  clientNotifications: readonly NotificationUse[];
  serverNotifications: readonly NotificationUse[];
  serverRequests: readonly RequestUse[];
  /** Feature flags set in thread `config` (`features.<name>`); each must exist, not removed. */
  features?: readonly string[];
  /**
   * Features known to be on by default (feature-baseline.ts): any other a codex turns on by
   * default, and codexd does not pin, is reported.
   */
  defaultOnKnown?: readonly string[];
}

/** Overrides thread/start and thread/resume share. */
const THREAD_OVERRIDES: FieldList = [
  "cwd",
  "model",
  { path: "approvalPolicy", values: ["untrusted", "on-request", "never"] },
  { path: "approvalsReviewer", values: ["user"] },
  { path: "sandbox", values: ["read-only", "workspace-write", "danger-full-access"] },
  "baseInstructions",
  "developerInstructions",
  "config",
];

const TEXT_INPUT: FieldList = [
  { path: "input[].type", values: ["text"] },
  "input[].text",
  "input[].text_elements",
];

const TURN_FIELDS = (prefix: string): FieldList => [
  `${prefix}.id`,
  { path: `${prefix}.status`, values: ["completed", "interrupted", "failed", "inProgress"] },
];

const TURN_SCOPED: FieldList = ["threadId", "turnId"];

const ITEM_FIELDS: FieldList = [
  {
    path: "item.type",
    values: [
      "agentMessage",
      "reasoning",
      "commandExecution",
      "fileChange",
      "mcpToolCall",
      "webSearch",
    ],
  },
  "item.id",
  "item.text",
  "item.summary",
  "item.content",
  "item.command",
  "item.cwd",
  "item.status",
  "item.aggregatedOutput",
  "item.exitCode",
  "item.changes[].path",
  { path: "item.changes[].kind.type", values: ["add", "delete", "update"] },
  "item.changes[].kind.move_path",
  "item.changes[].diff",
  "item.server",
  "item.tool",
  "item.arguments",
  "item.result",
  "item.error.message",
  "item.query",
];

const TOKEN_BREAKDOWN = [
  "inputTokens",
  "cachedInputTokens",
  "outputTokens",
  "reasoningOutputTokens",
];

const V2_DECISIONS = ["accept", "acceptForSession", "decline", "cancel"];

export const PROTOCOL_USAGE: ProtocolUsage = {
  clientRequests: [
    {
      method: "initialize",
      params: [
        "clientInfo.name",
        "clientInfo.title",
        "clientInfo.version",
        "capabilities.experimentalApi",
        "capabilities.optOutNotificationMethods",
      ],
      result: ["userAgent", "codexHome", "platformFamily", "platformOs"],
    },
    {
      method: "thread/start",
      params: [...THREAD_OVERRIDES, "experimentalRawEvents"],
      result: ["thread.id", "model"],
    },
    {
      method: "thread/resume",
      params: ["threadId", ...THREAD_OVERRIDES],
      result: ["thread.id", "model"],
    },
    {
      method: "turn/start",
      params: [
        "threadId",
        ...TEXT_INPUT,
        "cwd",
        { path: "approvalPolicy", values: ["untrusted", "on-request", "never"] },
        "effort",
        "model",
      ],
      result: TURN_FIELDS("turn"),
    },
    {
      method: "turn/steer",
      params: ["threadId", ...TEXT_INPUT, "expectedTurnId"],
      result: ["turnId"],
    },
    { method: "turn/interrupt", params: ["threadId", "turnId"], result: [] },
    { method: "thread/unsubscribe", params: ["threadId"], result: [] },
    // The pool hands a live thread from one child to another (pool.ts) and counts loaded ones.
    { method: "thread/archive", params: ["threadId"], result: [] },
    { method: "thread/unarchive", params: ["threadId"], result: ["thread.id"] },
    { method: "thread/loaded/list", params: [], result: ["data"] },
    {
      method: "config/batchWrite",
      params: [
        "edits[].keyPath",
        "edits[].value",
        { path: "edits[].mergeStrategy", values: ["replace", "upsert"] },
        "reloadUserConfig",
      ],
      result: [],
      resultType: "ConfigWriteResponse",
    },
  ],

  clientNotifications: [{ method: "initialized", params: [] }],

  serverNotifications: [
    { method: "turn/started", params: ["threadId", ...TURN_FIELDS("turn")] },
    {
      method: "turn/completed",
      params: [
        "threadId",
        ...TURN_FIELDS("turn"),
        "turn.items",
        "turn.error.message",
        "turn.error.codexErrorInfo",
        "turn.error.additionalDetails",
      ],
    },
    { method: "item/started", params: [...TURN_SCOPED, ...ITEM_FIELDS] },
    { method: "item/completed", params: [...TURN_SCOPED, ...ITEM_FIELDS] },
    { method: "item/agentMessage/delta", params: [...TURN_SCOPED, "itemId", "delta"] },
    { method: "item/commandExecution/outputDelta", params: [...TURN_SCOPED, "itemId", "delta"] },
    { method: "item/reasoning/textDelta", params: [...TURN_SCOPED, "itemId", "delta"] },
    { method: "item/reasoning/summaryTextDelta", params: [...TURN_SCOPED, "itemId", "delta"] },
    {
      method: "thread/tokenUsage/updated",
      params: [
        ...TURN_SCOPED,
        ...TOKEN_BREAKDOWN.map((f) => `tokenUsage.total.${f}`),
        ...TOKEN_BREAKDOWN.map((f) => `tokenUsage.last.${f}`),
      ],
    },
    {
      method: "error",
      params: [...TURN_SCOPED, "error.message", "error.codexErrorInfo", "willRetry"],
    },
    { method: "thread/status/changed", params: ["threadId", "status"] },
    // What codex reports about security (event-map.ts journals them as `system` events).
    {
      method: "item/commandExecution/terminalInteraction",
      params: [...TURN_SCOPED, "itemId", "processId", "stdin"],
    },
    {
      method: "item/fileChange/patchUpdated",
      params: [
        ...TURN_SCOPED,
        "itemId",
        "changes[].path",
        { path: "changes[].kind.type", values: ["add", "delete", "update"] },
        "changes[].kind.move_path",
      ],
    },
    ...["item/autoApprovalReview/started", "item/autoApprovalReview/completed"].map((method) => ({
      method,
      params: [
        ...TURN_SCOPED,
        "reviewId",
        "targetItemId",
        "review.status",
        "review.riskLevel",
        "review.userAuthorization",
        "review.rationale",
        "action.type",
      ],
    })),
    { method: "autoApprovalReview/strictReviewRequired", params: TURN_SCOPED },
    { method: "guardianWarning", params: ["threadId", "message"] },
    { method: "model/rerouted", params: [...TURN_SCOPED, "fromModel", "toModel", "reason"] },
    // Experimental (initialize's experimentalApi): the model's tool calls, for escalation.ts.
    {
      method: "rawResponseItem/completed",
      params: [...TURN_SCOPED, "item"],
      paramsType: "RawResponseItemCompletedNotification",
    },
    { method: "serverRequest/resolved", params: ["threadId", "requestId"] },
  ],

  serverRequests: [
    {
      method: "item/commandExecution/requestApproval",
      params: [
        ...TURN_SCOPED,
        "itemId",
        // humanCommand: a command the user typed (codex 0.169; 0.166 has no such kind).
        { path: "kind", values: ["command", "writeStdin"], accepts: ["humanCommand"] },
        "command",
        "cwd",
        "commandActions",
        "reason",
        "additionalPermissions",
      ],
      result: [{ path: "decision", values: V2_DECISIONS }],
    },
    {
      method: "item/fileChange/requestApproval",
      params: [...TURN_SCOPED, "itemId", "reason", "grantRoot"],
      result: [{ path: "decision", values: V2_DECISIONS }],
    },
    {
      method: "item/permissions/requestApproval",
      params: [...TURN_SCOPED, "itemId", "permissions", "reason"],
      result: ["permissions", { path: "scope", values: ["turn"] }],
    },
    {
      method: "mcpServer/elicitation/request",
      params: ["threadId", "turnId", "serverName", "_meta"],
      result: [{ path: "action", values: ["accept", "decline", "cancel"] }],
    },
    {
      method: "item/tool/requestUserInput",
      params: [...TURN_SCOPED, "itemId"],
      result: ["answers"],
    },
    {
      method: "item/tool/call",
      params: [...TURN_SCOPED, "callId", "tool"],
      result: [
        { path: "contentItems[].type", values: ["inputText"] },
        "contentItems[].text",
        "success",
      ],
    },
    {
      method: "applyPatchApproval",
      params: ["conversationId", "callId"],
      result: ["decision.denied.rejection"],
    },
    {
      method: "execCommandApproval",
      params: ["conversationId", "callId"],
      result: ["decision.denied.rejection"],
    },
    {
      method: "account/chatgptAuthTokens/refresh",
      params: [],
      result: [],
    },
  ],

  features: Object.keys(PINNED_FEATURES),
  defaultOnKnown: DEFAULT_ON_IN_REVIEWED_CODEX,
};
