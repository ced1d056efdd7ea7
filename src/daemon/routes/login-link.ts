/**
 * `POST /v1/ui/login-link`: a one-time link that signs a browser into the console (what
 * `codexd ui` prints). An API route for the token holder; the console itself is src/ui/.
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { UiAuth } from "../../ui/auth.ts";
import * as S from "../../api/schemas.ts";
import { errors, json } from "./responses.ts";

const loginLink = createRoute({
  method: "post",
  path: "/v1/ui/login-link",
  responses: {
    201: json(
      S.LoginLink,
      "A one-time login link to the web console (/ui); it signs in once, until `expiresAt`",
    ),
    ...errors,
  },
});

export function mountLoginLinkRoute(app: OpenAPIHono, auth: UiAuth): void {
  app.openapi(loginLink, (c) => {
    const { nonce, expiresAt } = auth.mintNonce();
    const path = `/ui/login?nonce=${nonce}`;
    c.header("cache-control", "no-store");
    return c.json({
      url: `${new URL(c.req.url).origin}${path}`,
      path,
      expiresAt: new Date(expiresAt).toISOString(),
    }, 201);
  });
}
