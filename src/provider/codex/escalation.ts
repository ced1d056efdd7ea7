/**
 * Whether a command codex asks approval for would leave the session's sandbox. codex's approval
 * request does not say: a command the model sends with `sandbox_permissions: "require_escalated"`
 * runs unsandboxed once approved, and its request looks like any other (checked against codex
 * 0.169). The model's tool call does say, and codex shows it to a client that opted into raw
 * events (`experimentalRawEvents` on thread/start): a `rawResponseItem/completed` notification
 * carrying the call's arguments arrives before the approval request for that call (`itemId` is
 * the call's `call_id`). So the handle remembers each call's sandbox request, and the approval
 * carries it to the bridge, which declines any escalation (`builtin.sandbox-escalation`).
 *
 * codex sends raw events only for threads started with the flag on this child: a thread resumed
 * on another child (a pool move, a daemon restart) has none, and its calls are read from the
 * thread's rollout file instead (rollout-calls.ts), with the same `callSandbox`.
 */
import { z } from "zod";

/** One raw Responses-API item, as much of it as this needs (the rest passes through unread). */
export const RawToolCall = z.looseObject({
  type: z.string(),
  call_id: z.string().optional(),
  arguments: z.string().optional(),
});
export type RawToolCall = z.infer<typeof RawToolCall>;

/** A tool call's request to run with more than the sandbox: undefined when it asks for none. */
export interface CallSandbox {
  callId: string;
  /** What the call asks for beyond the sandbox (`sandbox_permissions: require_escalated`, …). */
  escalation?: string;
}

const Arguments = z.looseObject({
  sandbox_permissions: z.unknown().optional(),
  additional_permissions: z.unknown().optional(),
});

/** The sandbox request of a raw tool-call item; undefined for items that are not calls. */
export function callSandbox(item: RawToolCall): CallSandbox | undefined {
  if (item.call_id === undefined || !/_call$/.test(item.type)) return undefined;
  const callId = item.call_id;
  if (item.type !== "function_call") return { callId };
  if (item.arguments === undefined) {
    return { callId, escalation: "arguments codex did not show (encrypted or absent)" };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(item.arguments);
  } catch {
    // codex could not parse them either; the call fails before anything runs.
    return { callId };
  }
  const args = Arguments.safeParse(parsed);
  if (!args.success) return { callId };
  const { sandbox_permissions: asked, additional_permissions: extra } = args.data;
  if (asked !== undefined && asked !== null && asked !== "use_default") {
    return { callId, escalation: `sandbox_permissions: ${JSON.stringify(asked)}` };
  }
  if (extra !== undefined && extra !== null) {
    return { callId, escalation: `additional_permissions: ${JSON.stringify(extra)}` };
  }
  return { callId };
}
