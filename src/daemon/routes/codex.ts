/** `POST /v1/codex/restart`: a rolling restart of the codex children. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { CodexdError, errorMessage, InvalidInput } from "../../errors.ts";
import * as S from "../../api/schemas.ts";
import type { RouteContext } from "./context.ts";
import { errors, json } from "./responses.ts";

const restart = createRoute({
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
});

export function mountCodexRoutes(
  app: OpenAPIHono,
  { logger }: RouteContext,
  /** Starts replacing every child; throws (a ConfigError) when the config cannot be read. */
  restartCodex: (() => Promise<unknown>) | undefined,
): void {
  app.openapi(restart, (c) => {
    if (!restartCodex) {
      throw new CodexdError("service_unavailable", "This daemon has no codex pool to restart");
    }
    try {
      void restartCodex().catch((error) => logger.error("rolling restart failed", { error }));
    } catch (error) {
      throw new InvalidInput(`Cannot restart codex: ${errorMessage(error)}`, "config");
    }
    return c.json({ restarting: true as const }, 202);
  });
}
