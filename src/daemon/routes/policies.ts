/** `/v1/policies`: list, reload and dry-run the fleet policies. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import type { RouteContext } from "./context.ts";
import { body, bodyErrors, errors, json } from "./responses.ts";

const list = createRoute({
  method: "get",
  path: "/v1/policies",
  responses: { 200: json(S.PolicyList, "Loaded policies with version hashes"), ...errors },
});

const reload = createRoute({
  method: "post",
  path: "/v1/policies/reload",
  responses: {
    200: json(S.ReloadReport, "Reloaded; files that failed keep their previous version"),
    ...errors,
  },
});

const evaluate = createRoute({
  method: "post",
  path: "/v1/policies/evaluate",
  request: { body: body(S.EvaluateRequest) },
  responses: { 200: json(S.EvaluateResult, "What the policy would decide"), ...bodyErrors },
});

export function mountPolicyRoutes(app: OpenAPIHono, { service }: RouteContext): void {
  app.openapi(list, async (c) => c.json({ policies: await service.listPolicies() }, 200));

  app.openapi(reload, async (c) => c.json(await service.reloadPolicies(), 200));

  app.openapi(evaluate, async (c) => {
    const result = await service.evaluatePolicy(c.req.valid("json"));
    return c.json(S.EvaluateResult.parse(result), 200);
  });
}
