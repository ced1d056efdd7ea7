/**
 * What runs before any route, in this order: request metrics, the edge (Host, then Origin),
 * the bearer token, body size limits, and the JSON depth scan. The checks themselves are pure
 * functions in http-edge.ts and auth.ts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { matchedRoutes } from "hono/route";
import { isUiPath } from "../ui/routes.tsx";
import { errorResponse, MAX_BODY_BYTES } from "./api-errors.ts";
import { bearerAuth } from "./auth.ts";
import {
  allowedHosts,
  isSameOrigin,
  jsonTooDeep,
  type ListenAddress,
  MAX_JSON_DEPTH,
} from "./http-edge.ts";
import type { DaemonMetrics } from "./metrics.ts";

/** `POST /v1/policies/evaluate` takes commands of a few MiB, to decline them like codex's. */
export const MAX_EVALUATE_BODY_BYTES = 8 * 1024 * 1024;

export interface MiddlewareOptions {
  token: string;
  metrics: DaemonMetrics;
  /** Milliseconds clock for request latency. */
  now: () => number;
  /** Where the server listens (see CreateAppOptions.listen); any Host without it. */
  listen?: () => ListenAddress;
}

export function mountMiddleware(app: OpenAPIHono, options: MiddlewareOptions): void {
  const { metrics, now } = options;
  app.use("*", async (c, next) => {
    const started = now();
    await next();
    const route = matchedRoutes(c).filter((r) => r.method !== "ALL").at(-1)?.path ?? "unmatched";
    metrics.requestSeconds.observe(
      { method: c.req.method, route, status: String(c.res.status) },
      (now() - started) / 1000,
    );
  });

  // Host and Origin before anything else: a page on another site, or a name rebound to this
  // address, gets nothing (not even the public health answer).
  const hostsFor = (() => {
    let cached: { key: string; hosts: Set<string> } | undefined;
    return (listen: ListenAddress) => {
      const key = JSON.stringify(listen);
      if (cached?.key !== key) cached = { key, hosts: allowedHosts(listen) };
      return cached.hosts;
    };
  })();
  app.use("*", async (c, next) => {
    const url = new URL(c.req.url);
    const host = (c.req.header("host") ?? url.host).toLowerCase();
    const listen = options.listen?.();
    if (listen && !hostsFor(listen).has(host)) {
      return errorResponse(
        c,
        421,
        "misdirected_request",
        `Host ${JSON.stringify(host)} is not served here; use the address codexd listens on ` +
          `or a loopback name with port ${listen.port}`,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !isSameOrigin(origin, url.protocol, host)) {
      return errorResponse(
        c,
        403,
        "cross_origin",
        `Origin ${JSON.stringify(origin)} is not allowed: codexd serves no other site`,
      );
    }
    await next();
  });

  app.use(
    "*",
    bearerAuth({
      token: options.token,
      // The console (/ui) signs browsers in with its own cookie instead (src/ui/auth.ts).
      isPublic: (method, path) =>
        (path === "/v1/health" && (method === "GET" || method === "HEAD")) || isUiPath(path),
      reject: (c) =>
        errorResponse(
          c,
          401,
          "unauthorized",
          "Missing or wrong token: send Authorization: Bearer <token>",
        ),
    }),
  );

  const limitBody = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: (c) =>
        errorResponse(c, 413, "body_too_large", `Request body is over ${maxSize} bytes`),
    });
  const defaultLimit = limitBody(MAX_BODY_BYTES);
  // A dry run of an oversized command gets a decision (declined, unanalysable), not a 413.
  const evaluateLimit = limitBody(MAX_EVALUATE_BODY_BYTES);
  app.use(
    "*",
    (c, next) =>
      c.req.path === "/v1/policies/evaluate" ? evaluateLimit(c, next) : defaultLimit(c, next),
  );

  // Any JSON body is scanned for its depth before a parser or validator recurses into it.
  app.use("*", async (c, next) => {
    if (c.req.raw.body === null || !/json/i.test(c.req.header("content-type") ?? "")) {
      return await next();
    }
    const deep = jsonTooDeep(await c.req.text(), MAX_JSON_DEPTH);
    if (deep) {
      const where = deep.path || "body";
      const message = `nests deeper than ${deep.limit} levels`;
      return errorResponse(c, 400, "invalid_input", `Invalid request body: ${where}: ${message}`, [
        { path: deep.path, message },
      ]);
    }
    await next();
  });
}
