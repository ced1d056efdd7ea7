/**
 * codexd's HTTP API as a Hono app, assembled: the middleware (middleware.ts), the routes by
 * concept (routes/*.ts), the console (src/ui/) and `/v1/openapi.json`. It never listens by
 * itself: the daemon serves `app.fetch`, tests call `app.request()`. Routes are declared with zod
 * schemas, which both validate and generate the OpenAPI document.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { createLogger, type Logger } from "../log.ts";
import { mountUi, UiAuth } from "../ui/routes.tsx";
import { apiErrorHandler, errorResponse, issueDetails } from "./api-errors.ts";
import type * as S from "../api/schemas.ts";
import { EventStreams } from "./event-streams.ts";
import { DEFAULT_LIMITS, type HttpLimits, type ListenAddress } from "./http-edge.ts";
import { createDaemonMetrics, type DaemonMetrics } from "./metrics.ts";
import { mountMiddleware } from "./middleware.ts";
import { mountApprovalRoutes } from "./routes/approvals.ts";
import { mountCodexRoutes } from "./routes/codex.ts";
import type { RouteContext } from "./routes/context.ts";
import { mountDaemonRoutes } from "./routes/daemon.ts";
import { mountEventRoutes } from "./routes/events.ts";
import { mountFleetRoutes } from "./routes/fleets.ts";
import { mountLoginLinkRoute } from "./routes/login-link.ts";
import { mountMetricsRoute } from "./routes/metrics.ts";
import { mountPolicyRoutes } from "./routes/policies.ts";
import { mountSessionRoutes } from "./routes/sessions.ts";
import type { SessionService } from "./service.ts";
import type { KeepAliveTimers } from "./sse.ts";

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

/** Every path and method the OpenAPI document declares, plus the two plain routes, for 405s. */
function knownRoutes(app: OpenAPIHono): Array<{ method: string; pattern: RegExp }> {
  const declared = app.openAPIRegistry.definitions.flatMap((d) =>
    d.type === "route" ? [{ method: d.route.method.toUpperCase(), path: d.route.path }] : []
  );
  return [
    ...declared,
    { method: "GET", path: "/v1/openapi.json" },
    { method: "GET", path: "/metrics" },
  ].map(({ method, path }) => ({
    method,
    pattern: new RegExp(`^${path.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
}

export function createApp(options: CreateAppOptions): CodexdApp {
  const logger = options.logger ?? createLogger();
  const context: RouteContext = {
    service: options.service,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    metrics: options.metrics ?? createDaemonMetrics(),
    logger,
  };
  const streams = new EventStreams({
    service: options.service,
    maxEventStreams: context.limits.maxEventStreams,
    logger,
    ...(options.keepAliveMs !== undefined && { keepAliveMs: options.keepAliveMs }),
    ...(options.timers && { timers: options.timers }),
  });
  const uiAuth = options.ui ?? new UiAuth();

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
  mountMiddleware(app, {
    token: options.token,
    metrics: context.metrics,
    now: options.now ?? (() => performance.now()),
    ...(options.listen && { listen: options.listen }),
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
  });
  app.onError(apiErrorHandler(logger));

  mountDaemonRoutes(app, context, {
    ...(options.codex && { children: () => options.codex!.children() }),
  });
  mountCodexRoutes(app, context, options.codex && (() => options.codex!.restart()));
  mountSessionRoutes(app, context);
  mountEventRoutes(app, context, streams);
  mountApprovalRoutes(app, context);
  mountPolicyRoutes(app, context);
  mountFleetRoutes(app, context);
  mountLoginLinkRoute(app, uiAuth);
  // The console's pages and sign-in (src/ui/routes.tsx), behind the same edge.
  mountUi(app, {
    service: options.service,
    auth: uiAuth,
    eventStream: (c, id, after) => streams.open(c, id, after),
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
  mountMetricsRoute(app, context);

  const known = knownRoutes(app);
  app.notFound((c) => {
    const allowed = known.filter((r) => r.pattern.test(c.req.path)).map((r) => r.method);
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

  return app;
}
