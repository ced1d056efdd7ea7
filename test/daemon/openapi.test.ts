/**
 * The OpenAPI document lists every API route with the answers it may give: moving routes between
 * modules (src/daemon/routes/) must not add, drop or change one unnoticed.
 */
import { expect, test } from "bun:test";
import { createApp } from "../../src/daemon/app.ts";
import { silentLogger } from "../../src/log.ts";
import { FakeService } from "./fake-service.ts";

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
}

async function openapi(): Promise<OpenApiDocument> {
  const app = createApp({ service: new FakeService(), token: "tok", logger: silentLogger });
  const res = await app.request("/v1/openapi.json", { headers: { authorization: "Bearer tok" } });
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApiDocument;
}

test("every route with its statuses, and the console's login link among them", async () => {
  const doc = await openapi();
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) =>
      `${method.toUpperCase()} ${path} ${Object.keys(operation.responses).sort().join(",")}`
    )
  ).sort();
  expect(routes).toEqual([
    "DELETE /v1/sessions/{id} 200,400,401,403,404,409,421,503",
    "GET /v1/capabilities 200,400,401,403,404,409,421,503",
    "GET /v1/fleets 200,400,401,403,404,409,421,503",
    "GET /v1/health 200,401",
    "GET /v1/policies 200,400,401,403,404,409,421,503",
    "GET /v1/sessions 200,400,401,403,404,409,421,503",
    "GET /v1/sessions/{id} 200,400,401,403,404,409,421,503",
    "GET /v1/sessions/{id}/approvals 200,400,401,403,404,409,421,503",
    "GET /v1/sessions/{id}/events 200,400,401,403,404,409,421,429,503",
    "POST /v1/codex/restart 202,400,401,403,404,409,421,503",
    "POST /v1/policies/evaluate 200,400,401,403,404,409,413,415,421,503",
    "POST /v1/policies/reload 200,400,401,403,404,409,421,503",
    "POST /v1/sessions 201,400,401,403,404,409,413,415,421,429,503",
    "POST /v1/sessions/{id}/approvals/{requestId} 200,400,401,403,404,409,413,415,421,503",
    "POST /v1/sessions/{id}/inject 202,400,401,403,404,409,413,415,421,503",
    "POST /v1/sessions/{id}/interrupt 202,400,401,403,404,409,421,503",
    "POST /v1/sessions/{id}/resume 201,400,401,403,404,409,413,415,421,429,503",
    "POST /v1/sessions/{id}/turns 202,400,401,403,404,409,413,415,421,429,503",
    "POST /v1/shutdown 202,400,401,403,404,409,421,503",
    "POST /v1/ui/login-link 201,400,401,403,404,409,421,503",
  ]);
});

test("the named schemas of the document", async () => {
  expect(Object.keys((await openapi()).components.schemas).sort()).toEqual([
    "Accepted",
    "ApprovalAnswer",
    "ApprovalAnswered",
    "ApprovalDecision",
    "Approvals",
    "BudgetError",
    "BudgetRefusal",
    "BudgetWindow",
    "Capabilities",
    "CodexRestartAccepted",
    "Error",
    "EvaluateRequest",
    "EvaluateResult",
    "Event",
    "EventList",
    "Fleet",
    "FleetBudgets",
    "FleetList",
    "Health",
    "InjectRequest",
    "InjectResult",
    "LoginLink",
    "PendingApproval",
    "Policy",
    "PolicyIssue",
    "PolicyList",
    "PublicHealth",
    "ReloadReport",
    "SendResult",
    "Session",
    "SessionList",
    "Shutdown",
    "SpawnResult",
    "TurnRequest",
    "Usage",
  ]);
});

test("a documented path with another method is 405 with Allow, an undocumented one 404", async () => {
  const app = createApp({ service: new FakeService(), token: "tok", logger: silentLogger });
  const auth = { authorization: "Bearer tok" };
  const wrong = await app.request("/v1/ui/login-link", { headers: auth });
  expect(wrong.status).toBe(405);
  expect(wrong.headers.get("allow")).toBe("POST");
  expect((await app.request("/v1/nothing", { headers: auth })).status).toBe(404);
});
