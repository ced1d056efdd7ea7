/**
 * How a browser signs in to the console without the API token ever reaching it.
 *
 * 1. A holder of the API token (`codexd ui`, i.e. `POST /v1/ui/login-link` with the bearer token)
 *    gets a one-time link `/ui/login?nonce=…`: 32 random bytes, single use, valid for a minute.
 * 2. Opening it exchanges the nonce for a console session: an `HttpOnly`, `SameSite=Strict`,
 *    `Path=/` cookie holding a random session id (never the API token), then redirects to `/ui`
 *    so the nonce leaves the address bar (and, with `Referrer-Policy: no-referrer`, any header).
 * 3. Every state change from the console is a POST that must carry the session's CSRF token
 *    (form field `_csrf` or header `x-csrf-token`) and an `Origin` naming the served origin; the
 *    HTTP edge already refuses any other `Origin` and any other `Host`.
 *
 * Nonces and sessions live in memory only (a restart signs everyone out) and are stored by their
 * SHA-256 digest, so neither a lookup's timing nor a heap dump gives a usable value away.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** How long a login link stays valid. */
export const LOGIN_LINK_TTL_MS = 60_000;
/** How long a console session lasts (not extended by use). */
export const UI_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** At most this many unused links and signed-in browsers are kept; the oldest go first. */
const MAX_NONCES = 100;
const MAX_SESSIONS = 100;

/** The cookie's name; with TLS the `__Host-` prefix pins it to this host, Secure and Path=/. */
export function cookieName(secure: boolean): string {
  return secure ? "__Host-codexd_ui" : "codexd_ui";
}

export interface UiSession {
  /** Random per session; forms and fetches echo it back. */
  csrf: string;
  expiresAt: number;
}

export interface UiAuthOptions {
  now?: () => number;
  loginLinkTtlMs?: number;
  sessionTtlMs?: number;
}

function digest(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("base64url");
}

function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Evicts expired entries, then the oldest ones beyond `max` (Maps keep insertion order). */
function prune<T extends { expiresAt: number }>(map: Map<string, T>, now: number, max: number) {
  for (const [key, value] of map) if (value.expiresAt <= now) map.delete(key);
  while (map.size > max) map.delete(map.keys().next().value!);
}

export class UiAuth {
  readonly #now: () => number;
  readonly #linkTtl: number;
  readonly #sessionTtl: number;
  readonly #nonces = new Map<string, { expiresAt: number }>();
  readonly #sessions = new Map<string, UiSession>();

  constructor(options: UiAuthOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#linkTtl = options.loginLinkTtlMs ?? LOGIN_LINK_TTL_MS;
    this.#sessionTtl = options.sessionTtlMs ?? UI_SESSION_TTL_MS;
  }

  /** A fresh single-use nonce for a login link, and when it expires. */
  mintNonce(): { nonce: string; expiresAt: number } {
    const now = this.#now();
    const nonce = randomToken();
    const expiresAt = now + this.#linkTtl;
    this.#nonces.set(digest(nonce), { expiresAt });
    prune(this.#nonces, now, MAX_NONCES);
    return { nonce, expiresAt };
  }

  /**
   * Spends a nonce: the first use of a live one opens a session (its id is the cookie's value);
   * a second use, an expired or an unknown nonce gets undefined. A nonce is gone once tried.
   */
  redeem(nonce: string): { sessionId: string; session: UiSession } | undefined {
    const now = this.#now();
    const key = digest(nonce);
    const entry = this.#nonces.get(key);
    this.#nonces.delete(key);
    if (!entry || entry.expiresAt <= now) return undefined;
    const sessionId = randomToken();
    const session = { csrf: randomToken(), expiresAt: now + this.#sessionTtl };
    this.#sessions.set(digest(sessionId), session);
    prune(this.#sessions, now, MAX_SESSIONS);
    return { sessionId, session };
  }

  /** The live session a cookie value names, if any. */
  session(sessionId: string | undefined): UiSession | undefined {
    if (!sessionId) return undefined;
    const key = digest(sessionId);
    const session = this.#sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** Signs a browser out. */
  end(sessionId: string | undefined): void {
    if (sessionId) this.#sessions.delete(digest(sessionId));
  }

  /** Seconds a session cookie lives (its Max-Age). */
  get sessionTtlSeconds(): number {
    return Math.floor(this.#sessionTtl / 1000);
  }
}

/** True when `presented` is exactly the session's CSRF token (constant time). */
export function csrfMatches(session: UiSession, presented: string | undefined): boolean {
  const a = createHash("sha256").update(presented ?? "", "utf8").digest();
  const b = createHash("sha256").update(session.csrf, "utf8").digest();
  return timingSafeEqual(a, b) && presented !== undefined;
}
