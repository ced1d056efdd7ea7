/**
 * codexd's HTTP API as a Hono app. It never listens by itself: the daemon serves `app.fetch`,
 * tests call `app.request()`. Routes are declared with zod schemas, which both validate and
 * generate `/v1/openapi.json`.
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CodexdError, type ErrorCode, errorMessage, InvalidInput, RpcError } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";
import * as S from "./api-schemas.ts";
import { bearerAuth, isAuthenticated } from "./auth.ts";
import { BudgetExceeded } from "./budgets.ts";
import {
  allowedHosts,
  DEFAULT_LIMITS,
  type HttpLimits,
  isSameOrigin,
  jsonTooDeep,
  type ListenAddress,
  MAX_JSON_DEPTH,
  metadataProblem,
  RETRY_AFTER_SECONDS,
} from "./http-edge.ts";
import { createDaemonMetrics, type DaemonMetrics } from "./metrics.ts";
import type { SessionService } from "./service.ts";
import { type KeepAliveTimers, sseResponse } from "./sse.ts";
import { isUiPath, mountUi, UiAuth } from "../ui/routes.tsx";

export const MAX_BODY_BYTES = 1024 * 1024;
/** `POST /v1/policies/evaluate` takes commands of a few MiB, to decline them like codex's. */
export const MAX_EVALUATE_BODY_BYTES = 8 * 1024 * 1024;

export interface CreateAppOptions {
  service: SessionService;
  /** The bearer token every route except `GET /v1/health` requires. */
  token: string;
  /** Shared with the service, which counts turns, events, approvals and restarts. */
  metrics?: DaemonMetrics;
  /** SSE keep-alive comment interval (15 s) and its timers, injectable for tests. */
  keepAliveMs?: number;
  timers?: KeepAliveTimers;
  /** Where unexpected errors (500s, failed streams) go, whole; JSON lines on stderr by default. */
  logger?: Logger;
  /** Milliseconds clock for request latency. */
  now?: () => number;
  version?: string;
  /**
   * Where the server listens: only this host and the loopback names, with its port, are
   * accepted in `Host` (else 421). Read per request, so the port can be the one bound after
   * listening on port 0. Without it (`app.request()` in tests) any Host is served.
   */
  listen?: () => ListenAddress;
  /** Live sessions and open event streams at once (429 over them); DEFAULT_LIMITS by default. */
  limits?: Partial<HttpLimits>;
  /** The console's sign-ins (login links, browser sessions); a fresh one by default. */
  ui?: UiAuth;
  /** The codex children, for health, and their rolling restart (`POST /v1/codex/restart`). */
  codex?: {
    children(): NonNullable<S.Health["codex"]["children"]>;
    /** Starts replacing every child; throws (a ConfigError) when the config cannot be read. */
    restart(): Promise<unknown>;
  };
}

export type CodexdApp = OpenAPIHono;

// ---------------------------------------------------------------------------------------------
// Errors

function errorResponse(
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
export function issueDetails(error: z.ZodError): S.ErrorDetail[] {
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
class TooManyRequests extends CodexdError {
  constructor(message: string) {
    super("too_many_requests", message);
  }
}

function checkMetadata(metadata: unknown): void {
  const problem = metadataProblem(metadata);
  if (problem) throw new InvalidInput(`metadata ${problem}`, "metadata");
}

/** Sessions running or idle: from health when the service counts them, else from the list. */
async function liveSessions(service: SessionService): Promise<number> {
  const live = (await service.health()).sessions?.live;
  if (live !== undefined) return live;
  return (await service.list()).filter((s) => s.status === "running" || s.status === "idle")
    .length;
}

// ---------------------------------------------------------------------------------------------
// Routes

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});
const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});
const errors = {
  400: json(S.ErrorBody, "Invalid input; `details` lists `{path, message}`"),
  401: json(S.ErrorBody, "Missing or wrong bearer token"),
  403: json(S.ErrorBody, "A cross-origin `Origin` header"),
  404: json(S.ErrorBody, "Unknown session or request"),
  409: json(S.ErrorBody, "Wrong state"),
  421: json(S.ErrorBody, "A `Host` that is not the listening address or a loopback name"),
  503: json(S.ErrorBody, "codex is down or the daemon is stopping"),
};
const limited = {
  429: json(S.ErrorBody, "Over limits.maxLiveSessions or limits.maxEventStreams; see Retry-After"),
};
/** What starts a turn: refused while a token budget is spent (and over the session limit). */
const budgeted = {
  429: json(
    z.union([S.BudgetErrorBody, S.ErrorBody]),
    "A token budget of the fleet or the session is spent (`budget_exceeded`: `details` gives " +
      "the budget, the spend and when the window reopens, also as Retry-After), or over " +
      "limits.maxLiveSessions",
  ),
};
const bodyErrors = {
  ...errors,
  413: json(S.ErrorBody, "Body over 1 MiB"),
  415: json(S.ErrorBody, "Not application/json"),
};

/** What `GET /v1/health` tells a caller without a token: up or not, nothing else. */
const PublicHealth = z.object({ status: S.HealthStatus }).openapi("PublicHealth");

const routes = {
  health: createRoute({
    method: "get",
    path: "/v1/health",
    security: [],
    responses: {
      200: json(
        z.union([S.Health, PublicHealth]),
        "Without a token only `{status}`; with the bearer token the details (codex's pid, " +
          "state and stderr while degraded, problems, sessions)",
      ),
      401: json(S.ErrorBody, "A wrong bearer token"),
    },
  }),
  capabilities: createRoute({
    method: "get",
    path: "/v1/capabilities",
    responses: { 200: json(S.CapabilitiesBody, "The capability matrix"), ...errors },
  }),
  spawn: createRoute({
    method: "post",
    path: "/v1/sessions",
    request: { body: body(S.Spec) },
    responses: { 201: json(S.SpawnResult, "Session spawned"), ...bodyErrors, ...budgeted },
  }),
  list: createRoute({
    method: "get",
    path: "/v1/sessions",
    responses: { 200: json(S.SessionList, "All sessions"), ...errors },
  }),
  get: createRoute({
    method: "get",
    path: "/v1/sessions/{id}",
    request: { params: S.SessionParams },
    responses: { 200: json(S.SessionInfo, "One session"), ...errors },
  }),
  stop: createRoute({
    method: "delete",
    path: "/v1/sessions/{id}",
    request: { params: S.SessionParams },
    responses: { 200: json(S.Accepted, "Stopped (idempotent)"), ...errors },
  }),
  send: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/turns",
    request: { params: S.SessionParams, body: body(S.TurnRequest) },
    responses: { 202: json(S.SendResult, "Turn started or queued"), ...bodyErrors, ...budgeted },
  }),
  resume: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/resume",
    request: { params: S.SessionParams, body: body(S.Spec) },
    responses: { 201: json(S.SpawnResult, "Session resumed"), ...bodyErrors, ...budgeted },
  }),
  inject: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/inject",
    request: { params: S.SessionParams, body: body(S.InjectRequest) },
    responses: { 202: json(S.InjectResult, "Steered the running turn"), ...bodyErrors },
  }),
  interrupt: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/interrupt",
    request: { params: S.SessionParams },
    responses: { 202: json(S.Accepted, "Interrupt requested"), ...errors },
  }),
  events: createRoute({
    method: "get",
    path: "/v1/sessions/{id}/events",
    request: { params: S.SessionParams, query: S.EventsQuery, headers: S.EventsHeaders },
    responses: {
      200: {
        description:
          "Server-sent events (`id:` seq, `event:` type, `data:` JSON), replayed after " +
          "Last-Event-ID or `after`, then live; or with format=json the stored events",
        content: {
          "text/event-stream": { schema: S.StoredEvent },
          "application/json": { schema: S.EventList },
        },
      },
      ...errors,
      ...limited,
    },
  }),
  approvals: createRoute({
    method: "get",
    path: "/v1/sessions/{id}/approvals",
    request: { params: S.SessionParams },
    responses: { 200: json(S.ApprovalsView, "Decisions and pending asks"), ...errors },
  }),
  answer: createRoute({
    method: "post",
    path: "/v1/sessions/{id}/approvals/{requestId}",
    request: { params: S.ApprovalParams, body: body(S.ApprovalAnswer) },
    responses: { 200: json(S.ApprovalAnswered, "Answer recorded"), ...bodyErrors },
  }),
  policies: createRoute({
    method: "get",
    path: "/v1/policies",
    responses: { 200: json(S.PolicyList, "Loaded policies with version hashes"), ...errors },
  }),
  reload: createRoute({
    method: "post",
    path: "/v1/policies/reload",
    responses: {
      200: json(S.ReloadReport, "Reloaded; files that failed keep their previous version"),
      ...errors,
    },
  }),
  evaluate: createRoute({
    method: "post",
    path: "/v1/policies/evaluate",
    request: { body: body(S.EvaluateRequest) },
    responses: { 200: json(S.EvaluateResult, "What the policy would decide"), ...bodyErrors },
  }),
  codexRestart: createRoute({
    method: "post",
    path: "/v1/codex/restart",
    responses: {
      202: json(
        S.CodexRestartAccepted,
        "Rolling restart started: the config's codex settings are read again and every codex " +
          "child is replaced, one at a time, its sessions moved between turns (no turn fails)",
      ),
      ...errors,
    },
  }),
  fleets: createRoute({
    method: "get",
    path: "/v1/fleets",
    responses: {
      200: json(
        S.FleetList,
        "Each fleet: policy version, live sessions, token caps and spend over the last hour " +
          "and the last 24 hours (rolling windows)",
      ),
      ...errors,
    },
  }),
  shutdown: createRoute({
    method: "post",
    path: "/v1/shutdown",
    responses: { 202: json(S.ShutdownAccepted, "Graceful shutdown started"), ...errors },
  }),
};

/** Every path and method the app serves, for 405 answers. */
const KNOWN_ROUTES: Array<{ method: string; pattern: RegExp }> = [
  ...Object.values(routes).map((r) => ({ method: r.method.toUpperCase(), path: r.path })),
  { method: "GET", path: "/v1/openapi.json" },
  { method: "GET", path: "/metrics" },
].map(({ method, path }) => ({
  method,
  pattern: new RegExp(`^${path.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`),
}));

function allowedMethods(path: string): string[] {
  return KNOWN_ROUTES.filter((r) => r.pattern.test(path)).map((r) => r.method);
}

// ---------------------------------------------------------------------------------------------

export function createApp(options: CreateAppOptions): CodexdApp {
  const { service } = options;
  const metrics = options.metrics ?? createDaemonMetrics();
  const now = options.now ?? (() => performance.now());
  const logger = options.logger ?? createLogger();
  const logError = (message: string, error: unknown) => logger.error(message, { error });
  const limits: HttpLimits = { ...DEFAULT_LIMITS, ...options.limits };
  let openStreams = 0;
  let openingSessions = 0;

  /** Runs a spawn or resume while a slot is free; sessions being opened hold one too. */
  const withSessionSlot = async <T>(open: () => Promise<T>): Promise<T> => {
    const live = await liveSessions(service);
    if (live + openingSessions >= limits.maxLiveSessions) {
      throw new TooManyRequests(
        `${live} sessions are live, the most this daemon runs at once (limits.maxLiveSessions); ` +
          `stop one or try again later`,
      );
    }
    openingSessions++;
    try {
      return await open();
    } finally {
      openingSessions--;
    }
  };

  /** A session's events over SSE after `after`, within limits.maxEventStreams (API and console). */
  const eventStream = async (c: Context, id: string, after: number): Promise<Response> => {
    // Unknown sessions get a 404 rather than an empty stream.
    await service.get(id);
    if (openStreams >= limits.maxEventStreams) {
      throw new TooManyRequests(
        `${openStreams} event streams are open, the most this daemon serves at once ` +
          `(limits.maxEventStreams); close one or try again later`,
      );
    }
    openStreams++;
    return sseResponse((signal) => service.events(id, { after, signal }), {
      requestSignal: c.req.raw.signal,
      keepAliveMs: options.keepAliveMs,
      timers: options.timers,
      onClose: () => openStreams--,
      onError: (error) => logError(`Event stream of session ${id} failed`, error),
    });
  };

  const app = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (result.success) return;
      const details = issueDetails(result.error);
      const where = result.target === "json" ? "body" : result.target;
      const first = details[0];
      const summary = first ? `${first.path || where}: ${first.message}` : "invalid";
      return errorResponse(
        c,
        400,
        "invalid_input",
        `Invalid request ${where}: ${summary}`,
        details,
      );
    },
  });

  app.use("*", async (c, next) => {
    const started = now();
    await next();
    const route = matchedRoutes(c).filter((r) => r.method !== "ALL").at(-1)?.path ?? "unmatched";
    metrics.requestSeconds.observe(
      { method: c.req.method, route, status: String(c.res.status) },
      (now() - started) / 1000,
    );
  });

  // Host and Origin before anything else: a page on another site, or a name rebound to this
  // address, gets nothing (not even the public health answer).
  const hostsFor = (() => {
    let cached: { key: string; hosts: Set<string> } | undefined;
    return (listen: ListenAddress) => {
      const key = JSON.stringify(listen);
      if (cached?.key !== key) cached = { key, hosts: allowedHosts(listen) };
      return cached.hosts;
    };
  })();
  app.use("*", async (c, next) => {
    const url = new URL(c.req.url);
    const host = (c.req.header("host") ?? url.host).toLowerCase();
    const listen = options.listen?.();
    if (listen && !hostsFor(listen).has(host)) {
      return errorResponse(
        c,
        421,
        "misdirected_request",
        `Host ${JSON.stringify(host)} is not served here; use the address codexd listens on ` +
          `or a loopback name with port ${listen.port}`,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !isSameOrigin(origin, url.protocol, host)) {
      return errorResponse(
        c,
        403,
        "cross_origin",
        `Origin ${JSON.stringify(origin)} is not allowed: codexd serves no other site`,
      );
    }
    await next();
  });

  app.use(
    "*",
    bearerAuth({
      token: options.token,
      // The console (/ui) signs browsers in with its own cookie instead (src/ui/auth.ts).
      isPublic: (method, path) =>
        (path === "/v1/health" && (method === "GET" || method === "HEAD")) || isUiPath(path),
      reject: (c) =>
        errorResponse(
          c,
          401,
          "unauthorized",
          "Missing or wrong token: send Authorization: Bearer <token>",
        ),
    }),
  );

  const limitBody = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: (c) =>
        errorResponse(c, 413, "body_too_large", `Request body is over ${maxSize} bytes`),
    });
  const defaultLimit = limitBody(MAX_BODY_BYTES);
  // A dry run of an oversized command gets a decision (declined, unanalysable), not a 413.
  const evaluateLimit = limitBody(MAX_EVALUATE_BODY_BYTES);
  app.use(
    "*",
    (c, next) =>
      c.req.path === "/v1/policies/evaluate" ? evaluateLimit(c, next) : defaultLimit(c, next),
  );

  // Any JSON body is scanned for its depth before a parser or validator recurses into it.
  app.use("*", async (c, next) => {
    if (c.req.raw.body === null || !/json/i.test(c.req.header("content-type") ?? "")) {
      return await next();
    }
    const deep = jsonTooDeep(await c.req.text(), MAX_JSON_DEPTH);
    if (deep) {
      const where = deep.path || "body";
      const message = `nests deeper than ${deep.limit} levels`;
      return errorResponse(c, 400, "invalid_input", `Invalid request body: ${where}: ${message}`, [
        { path: deep.path, message },
      ]);
    }
    await next();
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
  });

  app.onError((error, c) => {
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
      if (status === 500) logError(`${error.code} in ${c.req.method} ${c.req.path}`, error);
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
    logError(`Unexpected error in ${c.req.method} ${c.req.path}`, error);
    return errorResponse(c, 500, "internal", `Internal error: ${errorMessage(error)}`);
  });

  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path);
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return errorResponse(
        c,
        405,
        "method_not_allowed",
        `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(" or ")}`,
      );
    }
    return errorResponse(c, 404, "not_found", `No route ${c.req.method} ${c.req.path}`);
  });

  app.openapi(routes.health, async (c) => {
    const health = S.Health.parse(await service.health());
    if (!isAuthenticated(c)) return c.json({ status: health.status }, 200);
    const live = health.sessions?.live ?? 0;
    const max = limits.maxLiveSessions;
    const taking = health.status === "ok" || health.status === "degraded";
    return c.json({
      ...health,
      codex: {
        ...health.codex,
        ...(options.codex && { children: options.codex.children() }),
      },
      capacity: {
        liveSessions: live,
        maxLiveSessions: max,
        freeSlots: taking && health.codex.pid !== null ? Math.max(0, max - live) : 0,
      },
    }, 200);
  });

  app.openapi(routes.codexRestart, (c) => {
    if (!options.codex) {
      throw new CodexdError("service_unavailable", "This daemon has no codex pool to restart");
    }
    try {
      void options.codex.restart().catch((error) => logError("rolling restart failed", error));
    } catch (error) {
      throw new InvalidInput(`Cannot restart codex: ${errorMessage(error)}`, "config");
    }
    return c.json({ restarting: true as const }, 202);
  });

  app.openapi(routes.capabilities, (c) => c.json(service.capabilities(), 200));

  app.openapi(routes.spawn, async (c) => {
    const spec = c.req.valid("json");
    checkMetadata(spec.metadata);
    const fieldsSet = Object.keys(await c.req.json());
    const result = await withSessionSlot(() => service.spawn(spec, fieldsSet));
    return c.json(S.SpawnResult.parse(result), 201);
  });

  app.openapi(routes.list, async (c) => {
    // Parsing through the schema drops anything not on the wire shape (a spec's env above all).
    const sessions = (await service.list()).map((s) => S.SessionInfo.parse(s));
    return c.json({ sessions }, 200);
  });

  app.openapi(routes.get, async (c) => {
    const info = await service.get(c.req.valid("param").id);
    return c.json(S.SessionInfo.parse(info), 200);
  });

  app.openapi(routes.stop, async (c) => {
    const { id } = c.req.valid("param");
    await service.stop(id);
    return c.json({ sessionId: id, status: "stopped" }, 200);
  });

  app.openapi(routes.send, async (c) => {
    const result = await service.send(c.req.valid("param").id, c.req.valid("json").prompt);
    return c.json(S.SendResult.parse(result), 202);
  });

  app.openapi(routes.resume, async (c) => {
    const spec = c.req.valid("json");
    checkMetadata(spec.metadata);
    const id = c.req.valid("param").id;
    const fieldsSet = Object.keys(await c.req.json());
    const result = await withSessionSlot(() => service.resume(id, spec, fieldsSet));
    return c.json(S.SpawnResult.parse(result), 201);
  });

  app.openapi(routes.inject, async (c) => {
    const result = await service.inject(c.req.valid("param").id, c.req.valid("json").text);
    return c.json(S.InjectResult.parse(result), 202);
  });

  app.openapi(routes.interrupt, async (c) => {
    const { id } = c.req.valid("param");
    await service.interrupt(id);
    return c.json({ sessionId: id, status: "interrupting" }, 202);
  });

  app.openapi(routes.events, async (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const lastEventId = c.req.valid("header")["last-event-id"]?.trim();
    const after = lastEventId ? Number(lastEventId) : query.after ?? 0;
    if (query.format === "json") {
      const events = await service.storedEvents(id, { after, limit: query.limit });
      return c.json(events, 200);
    }
    return (await eventStream(c, id, after)) as never;
  });

  app.openapi(routes.approvals, async (c) => {
    const view = await service.approvals(c.req.valid("param").id);
    return c.json(S.ApprovalsView.parse(view), 200);
  });

  app.openapi(routes.answer, async (c) => {
    const { id, requestId } = c.req.valid("param");
    const { decision } = c.req.valid("json");
    await service.answerApproval(id, requestId, decision);
    return c.json({ requestId, decision }, 200);
  });

  app.openapi(
    routes.policies,
    async (c) => c.json({ policies: await service.listPolicies() }, 200),
  );

  app.openapi(routes.reload, async (c) => c.json(await service.reloadPolicies(), 200));

  app.openapi(routes.evaluate, async (c) => {
    const result = await service.evaluatePolicy(c.req.valid("json"));
    return c.json(S.EvaluateResult.parse(result), 200);
  });

  app.openapi(routes.fleets, async (c) => {
    const fleets = (await service.fleets?.() ?? []).map((f) => S.FleetInfo.parse(f));
    return c.json({ fleets }, 200);
  });

  app.openapi(routes.shutdown, (c) => {
    service.shutdown();
    return c.json({ status: "stopping" as const }, 202);
  });

  // The console: pages, its sign-in and POST /v1/ui/login-link (src/ui/routes.tsx).
  mountUi(app, {
    service,
    auth: options.ui ?? new UiAuth(),
    eventStream,
    logger,
  });

  // Generated once at construction, so a schema the generator cannot express fails at start-up
  // (and in tests), not on the first request.
  const openapi = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "codexd",
      version: options.version ?? "0.1.0",
      description: "Runs fleets of Codex agent sessions behind an approval bridge. " +
        "Every route except GET /v1/health needs `Authorization: Bearer <token>`.",
    },
    security: [{ bearer: [] }],
  });
  app.get("/v1/openapi.json", (c) => c.json(openapi, 200));

  app.get("/metrics", async (c) => {
    metrics.sessions.reset();
    for (const status of S.SessionStatus.options) metrics.sessions.set({ status }, 0);
    for (const session of await service.list()) metrics.sessions.inc({ status: session.status });
    const health = await service.health();
    metrics.pendingApprovals.set({}, health.sessions?.pendingApprovals ?? 0);
    metrics.fleetTokens.reset();
    metrics.fleetTokenBudget.reset();
    for (const fleet of await service.fleets?.() ?? []) {
      for (
        const [window, usage] of [
          ["hour", fleet.usage.lastHour],
          ["day", fleet.usage.lastDay],
        ] as const
      ) {
        metrics.fleetTokens.set({ fleet: fleet.name, window }, usage.tokens);
        if (usage.budget !== null) {
          metrics.fleetTokenBudget.set({ fleet: fleet.name, window }, usage.budget);
        }
      }
    }
    return c.body(metrics.registry.render(), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });

  return app;
}
