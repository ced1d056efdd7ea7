/**
 * zod schemas for the codex notifications codexd reads: only the fields it uses, loose so that
 * fields codex adds later pass through. Checked against the generated schema by the drift test.
 */
import { z } from "zod";
import { RawToolCall } from "./escalation.ts";

const TokenUsageBreakdown = z.looseObject({
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  reasoningOutputTokens: z.number(),
});

const TurnError = z.looseObject({
  message: z.string(),
  codexErrorInfo: z.unknown().optional(),
  additionalDetails: z.string().nullish(),
});

export const Turn = z.looseObject({
  id: z.string(),
  status: z.enum(["completed", "interrupted", "failed", "inProgress"]),
  error: TurnError.nullish(),
});

export const FileUpdateChange = z.looseObject({
  path: z.string(),
  kind: z.looseObject({
    type: z.enum(["add", "delete", "update"]),
    move_path: z.string().nullish(),
  }),
  diff: z.string().optional(),
});

/** Thread items codexd maps; any other item type is accepted and ignored. */
export const ThreadItem = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("agentMessage"), id: z.string(), text: z.string() }),
  z.looseObject({
    type: z.literal("reasoning"),
    id: z.string(),
    summary: z.array(z.string()),
    content: z.array(z.string()),
  }),
  z.looseObject({
    type: z.literal("commandExecution"),
    id: z.string(),
    command: z.string(),
    cwd: z.string(),
    status: z.string(),
    aggregatedOutput: z.string().nullish(),
    exitCode: z.number().nullish(),
  }),
  z.looseObject({
    type: z.literal("fileChange"),
    id: z.string(),
    changes: z.array(FileUpdateChange),
    status: z.string(),
  }),
  z.looseObject({
    type: z.literal("mcpToolCall"),
    id: z.string(),
    server: z.string(),
    tool: z.string(),
    status: z.string(),
    arguments: z.unknown().optional(),
    result: z.unknown().nullish(),
    error: z.looseObject({ message: z.string() }).nullish(),
  }),
  z.looseObject({
    type: z.literal("webSearch"),
    id: z.string(),
    query: z.string().optional(),
  }),
]);
export type ThreadItem = z.infer<typeof ThreadItem>;
export type FileChangeItem = Extract<ThreadItem, { type: "fileChange" }>;

const ThreadScoped = { threadId: z.string() };
const TurnScoped = { threadId: z.string(), turnId: z.string() };

/**
 * `item/autoApprovalReview/*`: a reviewer inside codex (auto_review, guardian) judged an action
 * without asking codexd. Marked unstable by codex, so only the fields worth journaling are read
 * and the action is kept loose.
 */
const AutoReview = z.object({
  ...TurnScoped,
  reviewId: z.string(),
  targetItemId: z.string().nullish(),
  review: z.looseObject({
    status: z.string(),
    riskLevel: z.string().nullish(),
    userAuthorization: z.string().nullish(),
    rationale: z.string().nullish(),
  }),
  action: z.looseObject({ type: z.string() }),
});

/**
 * Notification params by method. The outer objects strip what codexd does not read (cheaper than
 * copying every unknown key of every streamed delta); nested items stay loose where a later
 * schema reads more of them.
 */
export const NotificationParams = {
  "turn/started": z.object({ ...ThreadScoped, turn: Turn }),
  "turn/completed": z.object({ ...ThreadScoped, turn: Turn }),
  "item/started": z.object({ ...TurnScoped, item: z.looseObject({ type: z.string() }) }),
  "item/completed": z.object({ ...TurnScoped, item: z.looseObject({ type: z.string() }) }),
  "item/agentMessage/delta": z.object({
    ...TurnScoped,
    itemId: z.string(),
    delta: z.string(),
  }),
  "item/reasoning/textDelta": z.object({
    ...TurnScoped,
    itemId: z.string(),
    delta: z.string(),
  }),
  "item/reasoning/summaryTextDelta": z.object({
    ...TurnScoped,
    itemId: z.string(),
    delta: z.string(),
  }),
  "thread/tokenUsage/updated": z.object({
    ...TurnScoped,
    tokenUsage: z.looseObject({ total: TokenUsageBreakdown, last: TokenUsageBreakdown }),
  }),
  "error": z.object({ ...TurnScoped, error: TurnError, willRetry: z.boolean() }),
  "warning": z.object({ ...ThreadScoped, message: z.string() }),
  // What codex reports about security, journaled as `system` events (see event-map.ts).
  "item/commandExecution/terminalInteraction": z.object({
    ...TurnScoped,
    itemId: z.string(),
    processId: z.string(),
    stdin: z.string(),
  }),
  "item/fileChange/patchUpdated": z.object({
    ...TurnScoped,
    itemId: z.string(),
    changes: z.array(FileUpdateChange),
  }),
  "item/autoApprovalReview/started": AutoReview,
  "item/autoApprovalReview/completed": AutoReview.extend({
    decisionSource: z.string().nullish(),
    completedAtMs: z.number().nullish(),
  }),
  "autoApprovalReview/strictReviewRequired": z.object({ ...TurnScoped }),
  "guardianWarning": z.object({ ...ThreadScoped, message: z.string() }),
  // The model's raw output items (thread/start's experimentalRawEvents): read for tool calls'
  // sandbox requests (escalation.ts); the item itself is not parsed beyond its type and call.
  "rawResponseItem/completed": z.object({ ...TurnScoped, item: RawToolCall }),
  "model/rerouted": z.object({
    ...TurnScoped,
    fromModel: z.string(),
    toModel: z.string(),
    reason: z.string(),
  }),
} as const;

export type MappedMethod = keyof typeof NotificationParams;
