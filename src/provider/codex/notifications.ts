/**
 * zod schemas for the codex notifications codexd reads: only the fields it uses, loose so that
 * fields codex adds later pass through. Checked against the generated schema by the drift test.
 */
import { z } from "zod";

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

const FileUpdateChange = z.looseObject({
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
} as const;

export type MappedMethod = keyof typeof NotificationParams;
