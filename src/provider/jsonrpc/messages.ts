/**
 * zod schemas for JSON-RPC 2.0 envelopes, lenient where peers are (codex omits `"jsonrpc"`; ids
 * are numbers or strings). One schema per shape; `classify` tells them apart.
 */
import { z } from "zod";

export const RequestId = z.union([z.number(), z.string()]);
export type RequestId = z.infer<typeof RequestId>;

const Version = { jsonrpc: z.literal("2.0").optional() };

export const IncomingRequest = z.looseObject({
  ...Version,
  id: RequestId,
  method: z.string(),
  params: z.unknown().optional(),
});
export type IncomingRequest = z.infer<typeof IncomingRequest>;

export const IncomingNotification = z.looseObject({
  ...Version,
  method: z.string(),
  params: z.unknown().optional(),
});
export type IncomingNotification = z.infer<typeof IncomingNotification>;

export const ErrorObject = z.looseObject({
  code: z.number(),
  message: z.string(),
  data: z.unknown().optional(),
});

export const SuccessResponse = z.looseObject({
  ...Version,
  id: RequestId,
  result: z.unknown().optional(),
});
export const ErrorResponse = z.looseObject({
  ...Version,
  id: RequestId.nullable(),
  error: ErrorObject,
});
export type IncomingResponse =
  | { kind: "success"; id: RequestId; result: unknown }
  | { kind: "error"; id: RequestId | null; error: z.infer<typeof ErrorObject> };

export type Incoming =
  | { kind: "request"; message: IncomingRequest }
  | { kind: "notification"; message: IncomingNotification }
  | { kind: "response"; message: IncomingResponse }
  | { kind: "invalid"; reason: string };

/** Sorts a parsed JSON value into a request, notification or response, validating its shape. */
export function classify(value: unknown): Incoming {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", reason: "not a JSON object" };
  }
  const hasMethod = "method" in value;
  const hasId = "id" in value;
  if (!hasMethod) {
    if ("error" in value) {
      const parsed = ErrorResponse.safeParse(value);
      if (!parsed.success) return { kind: "invalid", reason: z.prettifyError(parsed.error) };
      return {
        kind: "response",
        message: { kind: "error", id: parsed.data.id, error: parsed.data.error },
      };
    }
    if (!("result" in value)) return { kind: "invalid", reason: "no method, result or error" };
    const parsed = SuccessResponse.safeParse(value);
    if (!parsed.success) return { kind: "invalid", reason: z.prettifyError(parsed.error) };
    return {
      kind: "response",
      message: { kind: "success", id: parsed.data.id, result: parsed.data.result },
    };
  }
  const parsed = (hasId ? IncomingRequest : IncomingNotification).safeParse(value);
  if (!parsed.success) return { kind: "invalid", reason: z.prettifyError(parsed.error) };
  return hasId
    ? { kind: "request", message: parsed.data as IncomingRequest }
    : { kind: "notification", message: parsed.data as IncomingNotification };
}
