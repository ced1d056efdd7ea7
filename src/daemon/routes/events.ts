/** `GET /v1/sessions/{id}/events`: a session's events as SSE (replay, then live) or as JSON. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import * as S from "../../api/schemas.ts";
import type { EventStreams } from "../event-streams.ts";
import type { RouteContext } from "./context.ts";
import { errors, limited } from "./responses.ts";

const events = createRoute({
  method: "get",
  path: "/v1/sessions/{id}/events",
  request: { params: S.SessionParams, query: S.EventsQuery, headers: S.EventsHeaders },
  responses: {
    200: {
      description: "Server-sent events (`id:` seq, `event:` type, `data:` JSON), replayed after " +
        "Last-Event-ID or `after`, then live; or with format=json the stored events",
      content: {
        "text/event-stream": { schema: S.StoredEvent },
        "application/json": { schema: S.EventList },
      },
    },
    ...errors,
    ...limited,
  },
});

export function mountEventRoutes(
  app: OpenAPIHono,
  { service }: RouteContext,
  streams: EventStreams,
): void {
  app.openapi(events, async (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const lastEventId = c.req.valid("header")["last-event-id"]?.trim();
    const after = lastEventId ? Number(lastEventId) : query.after ?? 0;
    if (query.format === "json") {
      const events = await service.storedEvents(id, { after, limit: query.limit });
      return c.json(events, 200);
    }
    return (await streams.open(c, id, after)) as never;
  });
}
