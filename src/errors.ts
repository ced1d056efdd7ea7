/**
 * The two error families of codexd.
 *
 * - Errors that come from codex keep their JSON-RPC code: {@link RpcError}.
 * - codexd's own errors extend {@link CodexdError}: a string `code` a program can switch on, a
 *   `name` equal to the class name, and the underlying `cause` when there is one. Messages read
 *   like deno std's: "Cannot spawn session: cwd /x does not exist".
 */

/**
 * Every string code codexd raises: in a {@link CodexdError}, or in an API error answer
 * (`{"error":{"code"}}`; src/daemon/api-errors.ts maps each to its HTTP status). Session event codes
 * (`turn_failed`, `app_server_crashed`, …) are events, not errors: see src/provider/events.ts.
 */
export type ErrorCode =
  // the request: body, schema, policy, routing, edge
  | "invalid_input"
  | "malformed_json"
  | "unsupported_media_type"
  | "body_too_large"
  | "unknown_policy"
  | "shadow_policy"
  | "unauthorized"
  | "cross_origin"
  // the console (/ui): a form posted from another site, a missing or wrong CSRF token
  | "cross_site"
  | "csrf"
  | "misdirected_request"
  | "not_found"
  | "method_not_allowed"
  | "too_many_requests"
  | "budget_exceeded"
  | "http_error"
  // sessions and approvals
  | "session_not_found"
  | "approval_not_found"
  | "approval_decided"
  | "no_active_turn"
  | "wrong_state"
  // codex and the connection to it
  | "provider_unavailable"
  | "service_unavailable"
  | "connection_closed"
  | "write_failed"
  | "request_timeout"
  | "request_aborted"
  | "codex_error"
  | "protocol_error"
  // policies and the command analyser
  | "policy_invalid"
  | "shell_parser_unavailable"
  | "shell_parse_failed"
  // the daemon's own files and start-up
  | "config_invalid"
  | "state_dir_busy"
  | "state_missing"
  | "store_corrupt"
  | "internal"
  // the client (src/client.ts): an answer that does not match its schema
  | "bad_response";

export class CodexdError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** codex answered a request with a JSON-RPC error object. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The codex child is missing, failed its handshake, or died. */
export class ProviderUnavailable extends CodexdError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("provider_unavailable", message, options);
  }
}

/** A request got no response within its timeout. */
export class RequestTimeout extends CodexdError {
  constructor(readonly method: string, readonly timeoutMs: number) {
    super("request_timeout", `Request ${method} timed out after ${timeoutMs} ms`);
  }
}

/** A request was cancelled through its AbortSignal. */
export class RequestAborted extends CodexdError {
  constructor(readonly method: string, cause?: unknown) {
    super("request_aborted", `Request ${method} was aborted`, { cause });
  }
}

/** The connection closed (stop, crash, end of stream) before the request was answered. */
export class ConnectionClosed extends CodexdError {
  constructor(message: string, cause?: unknown) {
    super("connection_closed", message, { cause });
  }
}

/** Writing a message to the peer failed. */
export class WriteFailed extends CodexdError {
  constructor(readonly method: string, cause: unknown) {
    super("write_failed", `Cannot send ${method}: ${errorMessage(cause)}`, { cause });
  }
}

/** codex answered with a result codexd cannot read; `field` names the first field at fault. */
export class ProtocolError extends CodexdError {
  readonly method: string;
  readonly field: string;
  constructor(message: string, options: { method: string; field: string; cause?: unknown }) {
    super("protocol_error", message, { cause: options.cause });
    this.method = options.method;
    this.field = options.field;
  }
}

/** A spec or request body is invalid; `field` names the offending field. */
export class InvalidInput extends CodexdError {
  constructor(message: string, readonly field?: string, options?: { cause?: unknown }) {
    super("invalid_input", message, options);
  }
}

/** `inject()` was called with no turn running or queued. */
export class NoActiveTurn extends CodexdError {
  constructor(sessionId: string) {
    super("no_active_turn", `Cannot steer session ${sessionId}: no turn is running or queued`);
  }
}

/** An operation does not fit the session's state (stopped, failed, ...). */
export class WrongState extends CodexdError {
  constructor(message: string) {
    super("wrong_state", message);
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
