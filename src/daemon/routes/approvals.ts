/** A session's approvals: what was decided, what waits for a person, and the answer to one. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import type { RouteContext } from "./context.ts";
import { body, bodyErrors, errors, json } from "./responses.ts";

const list = createRoute({
  method: "get",
  path: "/v1/sessions/{id}/approvals",
  request: { params: S.SessionParams },
  responses: { 200: json(S.ApprovalsView, "Decisions and pending asks"), ...errors },
});

const answer = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/approvals/{requestId}",
  request: { params: S.ApprovalParams, body: body(S.ApprovalAnswer) },
  responses: { 200: json(S.ApprovalAnswered, "Answer recorded"), ...bodyErrors },
});

export function mountApprovalRoutes(app: OpenAPIHono, { service }: RouteContext): void {
  app.openapi(list, async (c) => {
    const view = await service.approvals(c.req.valid("param").id);
    return c.json(S.ApprovalsView.parse(view), 200);
  });

  app.openapi(answer, async (c) => {
    const { id, requestId } = c.req.valid("param");
    const { decision } = c.req.valid("json");
    await service.answerApproval(id, requestId, decision);
    return c.json({ requestId, decision }, 200);
  });
}
