/**
 * `/v1/sessions`: spawn, list, show, stop, send a turn, resume, steer (inject) and interrupt.
 * Spawns and resumes run within limits.maxLiveSessions (429 over it).
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { InvalidInput } from "../../errors.ts";
import { TooManyRequests } from "../api-errors.ts";
import * as S from "../../api/schemas.ts";
import { metadataProblem } from "../http-edge.ts";
import type { SessionService } from "../service.ts";
import type { RouteContext } from "./context.ts";
import { body, bodyErrors, budgeted, errors, json } from "./responses.ts";

const spawn = createRoute({
  method: "post",
  path: "/v1/sessions",
  request: { body: body(S.Spec) },
  responses: { 201: json(S.SpawnResult, "Session spawned"), ...bodyErrors, ...budgeted },
});

const list = createRoute({
  method: "get",
  path: "/v1/sessions",
  responses: { 200: json(S.SessionList, "All sessions"), ...errors },
});

const get = createRoute({
  method: "get",
  path: "/v1/sessions/{id}",
  request: { params: S.SessionParams },
  responses: { 200: json(S.SessionInfo, "One session"), ...errors },
});

const stop = createRoute({
  method: "delete",
  path: "/v1/sessions/{id}",
  request: { params: S.SessionParams },
  responses: { 200: json(S.Accepted, "Stopped (idempotent)"), ...errors },
});

const send = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/turns",
  request: { params: S.SessionParams, body: body(S.TurnRequest) },
  responses: { 202: json(S.SendResult, "Turn started or queued"), ...bodyErrors, ...budgeted },
});

const resume = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/resume",
  request: { params: S.SessionParams, body: body(S.Spec) },
  responses: { 201: json(S.SpawnResult, "Session resumed"), ...bodyErrors, ...budgeted },
});

const inject = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/inject",
  request: { params: S.SessionParams, body: body(S.InjectRequest) },
  responses: { 202: json(S.InjectResult, "Steered the running turn"), ...bodyErrors },
});

const interrupt = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/interrupt",
  request: { params: S.SessionParams },
  responses: { 202: json(S.Accepted, "Interrupt requested"), ...errors },
});

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

export function mountSessionRoutes(app: OpenAPIHono, { service, limits }: RouteContext): void {
  let opening = 0;

  /** Runs a spawn or resume while a slot is free; sessions being opened hold one too. */
  const withSessionSlot = async <T>(open: () => Promise<T>): Promise<T> => {
    const live = await liveSessions(service);
    if (live + opening >= limits.maxLiveSessions) {
      throw new TooManyRequests(
        `${live} sessions are live, the most this daemon runs at once (limits.maxLiveSessions); ` +
          `stop one or try again later`,
      );
    }
    opening++;
    try {
      return await open();
    } finally {
      opening--;
    }
  };

  app.openapi(spawn, async (c) => {
    const spec = c.req.valid("json");
    checkMetadata(spec.metadata);
    const fieldsSet = Object.keys(await c.req.json());
    const result = await withSessionSlot(() => service.spawn(spec, fieldsSet));
    return c.json(S.SpawnResult.parse(result), 201);
  });

  app.openapi(list, async (c) => {
    // Parsing through the schema drops anything not on the wire shape (a spec's env above all).
    const sessions = (await service.list()).map((s) => S.SessionInfo.parse(s));
    return c.json({ sessions }, 200);
  });

  app.openapi(get, async (c) => {
    const info = await service.get(c.req.valid("param").id);
    return c.json(S.SessionInfo.parse(info), 200);
  });

  app.openapi(stop, async (c) => {
    const { id } = c.req.valid("param");
    await service.stop(id);
    return c.json({ sessionId: id, status: "stopped" }, 200);
  });

  app.openapi(send, async (c) => {
    const result = await service.send(c.req.valid("param").id, c.req.valid("json").prompt);
    return c.json(S.SendResult.parse(result), 202);
  });

  app.openapi(resume, async (c) => {
    const spec = c.req.valid("json");
    checkMetadata(spec.metadata);
    const id = c.req.valid("param").id;
    const fieldsSet = Object.keys(await c.req.json());
    const result = await withSessionSlot(() => service.resume(id, spec, fieldsSet));
    return c.json(S.SpawnResult.parse(result), 201);
  });

  app.openapi(inject, async (c) => {
    const result = await service.inject(c.req.valid("param").id, c.req.valid("json").text);
    return c.json(S.InjectResult.parse(result), 202);
  });

  app.openapi(interrupt, async (c) => {
    const { id } = c.req.valid("param");
    await service.interrupt(id);
    return c.json({ sessionId: id, status: "interrupting" }, 202);
  });
}
