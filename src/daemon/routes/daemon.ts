/** The daemon itself: `GET /v1/health`, `GET /v1/capabilities`, `POST /v1/shutdown`. */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import { isAuthenticated } from "../auth.ts";
import type { RouteContext } from "./context.ts";
import { errors, json } from "./responses.ts";

/** What `GET /v1/health` tells a caller without a token: up or not, nothing else. */
const PublicHealth = z.object({ status: S.HealthStatus }).meta({ id: "PublicHealth" });

const health = createRoute({
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
});

const capabilities = createRoute({
  method: "get",
  path: "/v1/capabilities",
  responses: { 200: json(S.CapabilitiesBody, "The capability matrix"), ...errors },
});

const shutdown = createRoute({
  method: "post",
  path: "/v1/shutdown",
  responses: { 202: json(S.ShutdownAccepted, "Graceful shutdown started"), ...errors },
});

export interface DaemonRouteOptions {
  /** The pool's codex children, shown in health with the token. */
  children?: () => NonNullable<S.Health["codex"]["children"]>;
}

export function mountDaemonRoutes(
  app: OpenAPIHono,
  { service, limits }: RouteContext,
  options: DaemonRouteOptions,
): void {
  app.openapi(health, async (c) => {
    const health = S.Health.parse(await service.health());
    if (!isAuthenticated(c)) return c.json({ status: health.status }, 200);
    const live = health.sessions?.live ?? 0;
    const max = limits.maxLiveSessions;
    const taking = health.status === "ok" || health.status === "degraded";
    return c.json({
      ...health,
      codex: {
        ...health.codex,
        ...(options.children && { children: options.children() }),
      },
      capacity: {
        liveSessions: live,
        maxLiveSessions: max,
        freeSlots: taking && health.codex.pid !== null ? Math.max(0, max - live) : 0,
      },
    }, 200);
  });

  app.openapi(capabilities, (c) => c.json(service.capabilities(), 200));

  app.openapi(shutdown, (c) => {
    service.shutdown();
    return c.json({ status: "stopping" as const }, 202);
  });
}
