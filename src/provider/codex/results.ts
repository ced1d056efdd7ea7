/**
 * The result of every codex method codexd calls, as a zod schema: only the fields codexd reads,
 * loose objects so that what a newer codex adds passes through. The router parses each response
 * with its method's schema, so a result codex changed becomes a `ProtocolError` naming the method
 * and the field, not a TypeError somewhere later. test/provider/codex/drift.test.ts checks these schemas against
 * the schema the installed codex generates.
 */
import { z } from "zod";
import { ProtocolError } from "../../errors.ts";

/** An object whose fields codexd does not read (codex answers `{}` or fields we ignore). */
const Unread = z.looseObject({});

/** `thread.path`: the rollout the thread's tool calls are read from (rollout-calls.ts). */
const ThreadWithRollout = z.looseObject({
  thread: z.looseObject({ id: z.string(), path: z.string().nullish() }),
});

export const InitializeResult = z.looseObject({
  userAgent: z.string(),
  codexHome: z.string(),
  platformFamily: z.string(),
  platformOs: z.string(),
});
export type InitializeResult = z.infer<typeof InitializeResult>;

export const METHOD_RESULTS = {
  "initialize": InitializeResult,
  "thread/start": ThreadWithRollout.extend({ model: z.string().optional() }),
  "thread/resume": ThreadWithRollout,
  "thread/unarchive": Unread,
  "thread/archive": Unread,
  "thread/unsubscribe": Unread,
  "thread/loaded/list": z.looseObject({ data: z.array(z.string()).optional() }),
  "config/batchWrite": Unread,
  "turn/start": z.looseObject({ turn: z.looseObject({ id: z.string() }) }),
  "turn/steer": Unread,
  "turn/interrupt": Unread,
} as const;

export type CodexMethod = keyof typeof METHOD_RESULTS;

/** What `request(method)` resolves with: the parsed result, or unknown for other methods. */
export type MethodResult<M extends string> = M extends CodexMethod
  ? z.output<(typeof METHOD_RESULTS)[M]>
  : unknown;

/** `result` parsed with `method`'s schema; other methods' results pass unchanged. */
export function parseResult<M extends string>(method: M, result: unknown): MethodResult<M> {
  const schema = Object.hasOwn(METHOD_RESULTS, method)
    ? METHOD_RESULTS[method as CodexMethod]
    : undefined;
  if (!schema) return result as MethodResult<M>;
  const parsed = schema.safeParse(result);
  if (parsed.success) return parsed.data as MethodResult<M>;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.join(".") : "(the result)";
  return throwProtocolError(method, field, issue.message, parsed.error);
}

function throwProtocolError(method: string, field: string, why: string, cause: unknown): never {
  throw new ProtocolError(
    `codex answered ${method} with an unexpected result: ${field}: ${why}`,
    { method, field, cause },
  );
}
