/** `GET /metrics`: Prometheus text; the gauges are read from the service at each scrape. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import type { RouteContext } from "./context.ts";

export function mountMetricsRoute(app: OpenAPIHono, { service, metrics }: RouteContext): void {
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
}
