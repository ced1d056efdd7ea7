/** `GET /v1/fleets`: each fleet's policy, live sessions and token spend against its caps. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import type { RouteContext } from "./context.ts";
import { errors, json } from "./responses.ts";

const fleets = createRoute({
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
});

export function mountFleetRoutes(app: OpenAPIHono, { service }: RouteContext): void {
  app.openapi(fleets, async (c) => {
    const fleets = (await service.fleets?.() ?? []).map((f) => S.FleetInfo.parse(f));
    return c.json({ fleets }, 200);
  });
}
