/**
 * The script format of the scripted model server (see ../scripted-model.ts).
 *
 * A script is a list of rules. A rule is matched against the latest *user* message of a request
 * (a substring `marker`, or the 0-based `turn` index of that message among the conversation's
 * user messages) and yields `rounds`: one model response per request, consumed in order while the
 * same turn continues (codex calls the model again after each tool call, sending the tool output
 * back). A round is a list of steps. When no rule matches, or a matched rule has run out of
 * rounds, the `fallback` round answers (default: a short echo of the user text), so unscripted
 * turns still complete.
 */
import { z } from "zod";

/** An assistant message, streamed as `response.output_text.delta` events, then the done item. */
export const MessageStep = z.strictObject({
  type: z.literal("message"),
  text: z.string(),
  /** Split the text into this many deltas (nearly equal). Default: one delta. */
  deltas: z.int().positive().optional(),
  /** Or into deltas of this many characters. */
  deltaSize: z.int().positive().optional(),
  /** false: stream the deltas but never send the finished item (use before `cut`). */
  done: z.boolean().default(true),
}).refine((s) => s.deltas === undefined || s.deltaSize === undefined, {
  message: "message step: give deltas or deltaSize, not both",
});

/** A `function_call` to any tool (e.g. an MCP tool codex offered). */
export const FunctionCallStep = z.strictObject({
  type: z.literal("functionCall"),
  name: z.string().min(1),
  /** An object is JSON-encoded; a string is sent as is (lets a test send malformed arguments). */
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
  callId: z.string().min(1).optional(),
  /** The tool's namespace: codex 0.169 offers a server's MCP tools in `mcp__<server>`. */
  namespace: z.string().min(1).optional(),
});

/**
 * A `custom_tool_call`: a freeform tool whose input is raw text (codex 0.169's code-mode `exec`,
 * which runs JavaScript calling the nested tools, for the gpt-6 models).
 */
export const CustomCallStep = z.strictObject({
  type: z.literal("customCall"),
  name: z.string().min(1),
  input: z.string(),
  callId: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
});

/** An `exec_command` call, the shell tool codex 0.169 offers for unknown model slugs. */
export const ExecStep = z.strictObject({
  type: z.literal("exec"),
  cmd: z.string().min(1),
  workdir: z.string().optional(),
  /** More `exec_command` arguments (e.g. `tty`, `yield_time_ms`, `sandbox_permissions`). */
  extra: z.record(z.string(), z.unknown()).optional(),
  callId: z.string().min(1).optional(),
});

/** Waits before the next step (headers and earlier events are already sent). */
export const DelayStep = z.strictObject({ type: z.literal("delay"), ms: z.int().nonnegative() });

/** Answers with an HTTP error instead of a stream. Must come before any output step. */
export const HttpErrorStep = z.strictObject({
  type: z.literal("httpError"),
  status: z.int().min(400).max(599),
  /** Seconds, sent as the `retry-after` header. */
  retryAfter: z.number().nonnegative().optional(),
  message: z.string().default("scripted error"),
});

/** Closes the socket right here, mid-stream (no `response.completed`). */
export const CutStep = z.strictObject({ type: z.literal("cut") });

/** Never answers further; the request hangs until codex aborts it or the server closes. */
export const StallStep = z.strictObject({ type: z.literal("stall") });

/** The usage reported in `response.completed` (default: estimated from the text sizes). */
export const UsageStep = z.strictObject({
  type: z.literal("usage"),
  inputTokens: z.int().nonnegative(),
  cachedInputTokens: z.int().nonnegative().default(0),
  outputTokens: z.int().nonnegative(),
  reasoningOutputTokens: z.int().nonnegative().default(0),
});

export const Step = z.union([
  MessageStep,
  FunctionCallStep,
  CustomCallStep,
  ExecStep,
  DelayStep,
  HttpErrorStep,
  CutStep,
  StallStep,
  UsageStep,
]);
export type Step = z.input<typeof Step>;
export type ParsedStep = z.output<typeof Step>;

const OUTPUT_TYPES: ReadonlySet<string> = new Set([
  "message",
  "functionCall",
  "customCall",
  "exec",
]);

/** One model response. */
export const Round = z.array(Step).superRefine((steps, ctx) => {
  const errorAt = steps.findIndex((s) => s.type === "httpError");
  if (errorAt >= 0 && steps.slice(0, errorAt).some((s) => OUTPUT_TYPES.has(s.type))) {
    ctx.addIssue({
      code: "custom",
      message: "httpError must come before any message or call step (headers are sent by then)",
      path: [errorAt],
    });
  }
});
export type Round = z.input<typeof Round>;

export const Rule = z.strictObject({
  /** Matches when the latest user message contains this text. */
  marker: z.string().min(1).optional(),
  /**
   * Matches the 0-based index of the latest user message among the conversation's user messages
   * (codex's own context messages excluded; steered input counts as a message).
   */
  turn: z.int().nonnegative().optional(),
  rounds: z.array(Round).min(1),
}).refine((r) => r.marker !== undefined || r.turn !== undefined, {
  message: "rule needs a marker or a turn",
});
export type Rule = z.input<typeof Rule>;
export type ParsedRule = z.output<typeof Rule>;

export const Script = z.strictObject({
  rules: z.array(Rule).default([]),
  /** Answers unmatched requests. Default: a message echoing the user text. */
  fallback: Round.optional(),
});
export type Script = z.input<typeof Script>;
export type ParsedScript = z.output<typeof Script>;

/** Step builders, so scripts read as prose. */
export const step = {
  message: (text: string, options: { deltas?: number; deltaSize?: number; done?: boolean } = {}) =>
    ({ type: "message", text, ...options }) as const,
  exec: (
    cmd: string,
    options: { workdir?: string; extra?: Record<string, unknown>; callId?: string } = {},
  ) => ({ type: "exec", cmd, ...options }) as const,
  functionCall: (
    name: string,
    args: string | Record<string, unknown>,
    callId?: string,
    options: { namespace?: string } = {},
  ) =>
    ({
      type: "functionCall",
      name,
      arguments: args,
      ...(callId ? { callId } : {}),
      ...options,
    }) as const,
  customCall: (
    name: string,
    input: string,
    options: { callId?: string; namespace?: string } = {},
  ) => ({ type: "customCall", name, input, ...options }) as const,
  delay: (ms: number) => ({ type: "delay", ms }) as const,
  httpError: (status: number, options: { retryAfter?: number; message?: string } = {}) =>
    ({ type: "httpError", status, ...options }) as const,
  cut: () => ({ type: "cut" }) as const,
  stall: () => ({ type: "stall" }) as const,
  usage: (
    inputTokens: number,
    outputTokens: number,
    more: { cachedInputTokens?: number; reasoningOutputTokens?: number } = {},
  ) => ({ type: "usage", inputTokens, outputTokens, ...more }) as const,
} satisfies Record<string, (...args: never[]) => Step>;
