/**
 * Bearer-token authentication. Tokens are compared as SHA-256 digests with timingSafeEqual, so
 * neither the comparison time nor a length mismatch tells an attacker anything about the token.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** True when `header` is `Bearer <token>` with exactly the expected token. */
export function tokenMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  // Always hash and compare, even without a token, to keep timing uniform.
  const presented = digest(match?.[1] ?? "");
  return timingSafeEqual(presented, expected) && match !== null;
}

/** Requests that presented the right token (public routes answer more to them). */
const authenticated = new WeakSet<Context>();

/** True when this request presented the right token. */
export function isAuthenticated(c: Context): boolean {
  return authenticated.has(c);
}

export interface BearerAuthOptions {
  token: string;
  /**
   * Requests that need no token (`GET /v1/health`). One that sends a token anyway has it
   * checked: a wrong one is refused, the right one marks the request authenticated.
   */
  isPublic: (method: string, path: string) => boolean;
  /** Builds the 401 answer. */
  reject: (c: Parameters<MiddlewareHandler>[0]) => Response;
}

export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler {
  if (options.token.length === 0) throw new Error("Cannot build auth: the token is empty");
  const expected = digest(options.token);
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!header && options.isPublic(c.req.method, c.req.path)) return await next();
    if (!tokenMatches(header, expected)) {
      c.header("WWW-Authenticate", 'Bearer realm="codexd"');
      return options.reject(c);
    }
    authenticated.add(c);
    await next();
  };
}
