/**
 * How the HTTP API answers an error: `{"error":{"code","message","details"?}}` with the status of
 * its code. codexd's own errors carry their code (src/errors.ts), codex's refusals become
 * `codex_error`, anything else is a logged 500 `internal`.
 */
import type { z } from "@hono/zod-openapi";
import type { Context, ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CodexdError, type ErrorCode, errorMessage, InvalidInput, RpcError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { ErrorDetail } from "../api/schemas.ts";
import { BudgetExceeded } from "./budgets.ts";
import { RETRY_AFTER_SECONDS } from "./http-edge.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: ErrorCode,
  message: string,
  details?: unknown,
): Response {
  return c.json(
    { error: { code, message, ...(details === undefined ? {} : { details }) } },
    status,
  );
}

/** zod issues as `{path, message}`; unknown keys get one entry each, named. */
export function issueDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        path: [...base, key].join("."),
        message: "is not allowed",
      }));
    }
    // zod says "expected string, received undefined"; a caller wants to read "is required".
    const missing = issue.code === "invalid_type" && issue.message.endsWith("received undefined");
    return [{ path: base.join("."), message: missing ? "is required" : issue.message }];
  });
}

/**
 * The HTTP status of every error code (a new code does not compile until it is here). 5xx: the
 * fault is codexd's or codex's, not the request's; the ones raised only at start-up, by the CLI
 * or by the client are mapped too, so nothing known falls through to `internal`.
 */
export const STATUS_BY_CODE = {
  invalid_input: 400,
  malformed_json: 400,
  unknown_policy: 400,
  shadow_policy: 400,
  unauthorized: 401,
  cross_origin: 403,
  cross_site: 403,
  csrf: 403,
  session_not_found: 404,
  approval_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  no_active_turn: 409,
  wrong_state: 409,
  approval_decided: 409,
  body_too_large: 413,
  unsupported_media_type: 415,
  misdirected_request: 421,
  policy_invalid: 422,
  // the command could not be analysed (the parser gave up on it): judged as not allowed
  shell_parse_failed: 422,
  too_many_requests: 429,
  budget_exceeded: 429,
  // an HTTPException answers with its own status; this is the fallback
  http_error: 500,
  internal: 500,
  // a row of the state database does not read back: codexd's fault, answered with its code
  store_corrupt: 500,
  config_invalid: 500,
  state_dir_busy: 500,
  state_missing: 500,
  codex_error: 502,
  protocol_error: 502,
  bad_response: 502,
  service_unavailable: 503,
  provider_unavailable: 503,
  connection_closed: 503,
  write_failed: 503,
  request_aborted: 503,
  shell_parser_unavailable: 503,
  request_timeout: 504,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

/** Over a limit on sessions or streams: 429 with `Retry-After`. */
export class TooManyRequests extends CodexdError {
  constructor(message: string) {
    super("too_many_requests", message);
  }
}

/** The app's `onError`: each error as its code's answer; codexd's own faults logged whole. */
export function apiErrorHandler(logger: Logger): ErrorHandler {
  return (error, c) => {
    if (error instanceof HTTPException) {
      if (error.status === 400) {
        return errorResponse(c, 400, "malformed_json", "Request body is not valid JSON");
      }
      if (error.status === 415) {
        return errorResponse(
          c,
          415,
          "unsupported_media_type",
          "Request body must be application/json",
        );
      }
      if (error.status === 413) {
        return errorResponse(
          c,
          413,
          "body_too_large",
          `Request body is over ${MAX_BODY_BYTES} bytes`,
        );
      }
      return errorResponse(c, error.status as ContentfulStatusCode, "http_error", error.message);
    }
    if (error instanceof BudgetExceeded) {
      if (error.retryAfter !== null) c.header("Retry-After", String(error.retryAfter));
      return errorResponse(c, 429, error.code, error.message, error.details);
    }
    if (error instanceof TooManyRequests) {
      c.header("Retry-After", String(RETRY_AFTER_SECONDS));
      return errorResponse(c, 429, "too_many_requests", error.message);
    }
    if (error instanceof CodexdError) {
      const details = error instanceof InvalidInput && error.field
        ? [{ path: error.field, message: error.message }]
        : error.code === "unknown_policy" || error.code === "shadow_policy"
        ? [{ path: "policy", message: error.message }]
        : "issues" in error
        ? error.issues
        : undefined;
      const status = STATUS_BY_CODE[error.code];
      // A known fault of codexd's own (a corrupt store, …) is logged like an unexpected one.
      if (status === 500) {
        logger.error(`${error.code} in ${c.req.method} ${c.req.path}`, { error });
      }
      return errorResponse(c, status, error.code, error.message, details);
    }
    if (error instanceof RpcError) {
      return errorResponse(
        c,
        502,
        "codex_error",
        `codex refused ${error.method}: ${error.message}`,
        {
          rpcCode: error.code,
        },
      );
    }
    logger.error(`Unexpected error in ${c.req.method} ${c.req.path}`, { error });
    return errorResponse(c, 500, "internal", `Internal error: ${errorMessage(error)}`);
  };
}
