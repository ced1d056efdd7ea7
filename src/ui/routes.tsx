/** @jsxImportSource hono/jsx */
/**
 * The console at `/ui`: server-rendered pages over the same SessionService the API uses and a
 * cookie session for browsers (see ./auth.ts), signed in through the one-time links that
 * `POST /v1/ui/login-link` mints (src/daemon/routes/login-link.ts; what `codexd ui` calls).
 *
 * The routes are added to the API's app after its edge (Host, Origin, body limits), so a page
 * from another site or a rebound name reaches none of them. `/ui` needs no bearer token: it
 * takes the console cookie instead, and only there; `/v1` never accepts the cookie.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { JSX } from "hono/jsx/jsx-runtime";
import { CodexdError, type ErrorCode, errorMessage } from "../errors.ts";
import type { Logger } from "../log.ts";
import * as S from "../api/schemas.ts";
import { STATUS_BY_CODE } from "../daemon/api-errors.ts";
import type { SessionService } from "../daemon/service.ts";
import { cookieName, csrfMatches, UiAuth, type UiSession } from "./auth.ts";
import {
  ApprovalsPage,
  BudgetsPage,
  ErrorPage,
  type FleetUsage,
  NOTICES,
  type Pending,
  PoliciesPage,
  type Session,
  SessionPage,
  SessionsPage,
  SignInPage,
} from "./pages.tsx";
import { SCRIPT, type StaticFile, STYLESHEET } from "./static.ts";

export { UiAuth };

/** True for the paths the console serves (they authenticate with its cookie, not the token). */
export function isUiPath(path: string): boolean {
  return path === "/ui" || path.startsWith("/ui/");
}

export interface UiOptions {
  service: SessionService;
  auth: UiAuth;
  /**
   * A session's events as server-sent events after `after`, with the API's own stream limits
   * (the same function serves `GET /v1/sessions/:id/events`).
   */
  eventStream: (c: Context, sessionId: string, after: number) => Promise<Response>;
  now?: () => number;
  /** Where a failed page or action goes, with the whole error. */
  logger: Logger;
}

/** Headers on every console answer: no framing (the allow button), no inline code, no cache. */
const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; " +
    "img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; " +
    "base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Not no-referrer: with it a browser sends `Origin: null` on a form post, which the edge
  // refuses. same-origin keeps our own origin on our own posts and tells no other site anything.
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** Refusals of a console request, with the status they answer. */
class UiRefusal extends Error {
  constructor(readonly status: number, readonly code: ErrorCode, message: string) {
    super(message);
  }
}

function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

function page(c: Context, element: JSX.Element, status = 200): Response {
  c.header("cache-control", "no-store");
  return c.html(`<!doctype html>${element}`, status as 200);
}

/** Where a form asks to come back to: a console path only (no open redirect). */
function safeBack(value: unknown, fallback: string): string {
  // Segments start with no dot (no `..`) and hold no `%` (no encoded one either).
  return typeof value === "string" && /^\/ui(\/[A-Za-z0-9_:-][A-Za-z0-9._:-]*)*\/?$/.test(value)
    ? value
    : fallback;
}

function stringField(form: Record<string, unknown>, key: string): string {
  const value = form[key];
  return typeof value === "string" ? value : "";
}

export function mountUi(app: OpenAPIHono, options: UiOptions): void {
  const { service, auth } = options;
  const now = options.now ?? Date.now;
  const logError = (message: string, error: unknown) => options.logger.error(message, { error });
  const sessions = new WeakMap<Context, UiSession>();

  const signedIn = (c: Context): UiSession | undefined =>
    auth.session(getCookie(c, cookieName(isSecure(c))));

  // -- every console answer gets the security headers ------------------------------------------
  app.use("/ui/*", async (c, next) => {
    await next();
    for (const [key, value] of Object.entries(SECURITY_HEADERS)) {
      if (!c.res.headers.has(key)) c.res.headers.set(key, value);
    }
  });
  app.use("/ui", async (c, next) => {
    await next();
    for (const [key, value] of Object.entries(SECURITY_HEADERS)) {
      if (!c.res.headers.has(key)) c.res.headers.set(key, value);
    }
  });

  // -- public: the stylesheet, the script and the login exchange -------------------------------
  const serveStatic = (file: StaticFile) => (c: Context) =>
    c.body(file.body, 200, {
      "content-type": file.type,
      "cache-control": "public, max-age=31536000, immutable",
    });
  app.get(STYLESHEET.path, serveStatic(STYLESHEET));
  app.get(SCRIPT.path, serveStatic(SCRIPT));

  app.get("/ui/login", (c) => {
    const nonce = c.req.query("nonce");
    const redeemed = nonce ? auth.redeem(nonce) : undefined;
    if (!redeemed) {
      if (!nonce && signedIn(c)) return c.redirect("/ui", 303);
      return page(c, <SignInPage reason="used" />, 401);
    }
    const secure = isSecure(c);
    setCookie(c, cookieName(secure), redeemed.sessionId, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure,
      maxAge: auth.sessionTtlSeconds,
    });
    c.header("cache-control", "no-store");
    // The link's nonce is spent, but no page it came from or goes to needs to see it.
    c.header("referrer-policy", "no-referrer");
    // 303 to /ui: the nonce leaves the address bar (and history keeps only a spent link).
    return c.redirect("/ui", 303);
  });

  // -- everything else needs the cookie; a state change also the CSRF token and our Origin -----
  const guard = async (c: Context, next: () => Promise<void>) => {
    const session = signedIn(c);
    if (!session) {
      if (c.req.method === "GET" || c.req.method === "HEAD") {
        const accept = c.req.header("accept") ?? "";
        if (accept.includes("text/event-stream")) return c.text("sign in first", 401);
        return page(c, <SignInPage reason="none" />, 401);
      }
      return c.json({ error: { code: "unauthorized", message: "Sign in to the console" } }, 401);
    }
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      const refusal = await crossSiteRefusal(c, session);
      if (refusal) return c.json({ error: { code: refusal.code, message: refusal.message } }, 403);
    }
    sessions.set(c, session);
    await next();
  };
  app.use("/ui", guard);
  app.use("/ui/*", async (c, next) => {
    if (c.req.path === "/ui/login" || c.req.path.startsWith("/ui/static/")) return await next();
    return await guard(c, next);
  });

  /** Why a state-changing request is refused as possibly cross-site, if it is. */
  async function crossSiteRefusal(
    c: Context,
    session: UiSession,
  ): Promise<UiRefusal | undefined> {
    // The edge already refused an Origin naming another site; here one must be present.
    const origin = c.req.header("origin");
    if (origin === undefined || origin !== new URL(c.req.url).origin) {
      return new UiRefusal(
        403,
        "cross_site",
        "Refused: the request names no origin of this console",
      );
    }
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && site !== "same-origin") {
      return new UiRefusal(403, "cross_site", `Refused: a ${site} request`);
    }
    let presented = c.req.header("x-csrf-token");
    if (presented === undefined) {
      const type = c.req.header("content-type") ?? "";
      if (/application\/x-www-form-urlencoded|multipart\/form-data/i.test(type)) {
        const form = await c.req.parseBody();
        presented = typeof form._csrf === "string" ? form._csrf : undefined;
      }
    }
    if (!csrfMatches(session, presented)) {
      return new UiRefusal(403, "csrf", "Refused: missing or wrong CSRF token; reload the page");
    }
    return undefined;
  }

  const csrfOf = (c: Context): string => sessions.get(c)!.csrf;
  const notice = (c: Context): string | undefined => NOTICES[c.req.query("done") ?? ""];

  /** Renders a failure of a page as an HTML error page with the right status. */
  const failedPage = (c: Context, error: unknown): Response => {
    const { status, message } = describe(error);
    if (status >= 500) logError(`Console page ${c.req.path} failed`, error);
    return page(c, <ErrorPage status={status} message={message} csrf={csrfOf(c)} />, status);
  };
  const describe = (error: unknown): { status: number; code: string; message: string } => {
    if (error instanceof UiRefusal) {
      return { status: error.status, code: error.code, message: error.message };
    }
    // The API's status of each code (a 429 for a spent budget, a 500 for a corrupt store, …).
    if (error instanceof CodexdError) {
      return { status: STATUS_BY_CODE[error.code], code: error.code, message: error.message };
    }
    return { status: 500, code: "internal", message: `Internal error: ${errorMessage(error)}` };
  };

  const sessionIdOf = (c: Context): string => {
    const parsed = S.SessionId.safeParse(c.req.param("id"));
    if (!parsed.success) throw new UiRefusal(404, "session_not_found", "No such session");
    return parsed.data;
  };

  /** Every ask waiting across the sessions, oldest first. */
  async function allPending(): Promise<Pending[]> {
    const health = await service.health();
    if (health.sessions && health.sessions.pendingApprovals === 0) return [];
    // An ask holds a running turn: only running sessions can have one.
    const live = (await service.list()).filter((s) => s.status === "running");
    const views = await Promise.all(
      live.map((s) => service.approvals(s.sessionId).catch(() => undefined)),
    );
    return views.flatMap((v) => v?.pending ?? [])
      .map((p) => S.PendingApproval.parse(p))
      .sort((a, b) => a.since.localeCompare(b.since));
  }
  /** For the navigation's badge: health's count, so a page costs no look at every session. */
  async function pendingCount(): Promise<number> {
    return (await service.health()).sessions?.pendingApprovals ?? 0;
  }
  async function listSessions(): Promise<Session[]> {
    // Through the wire schema, as the API does: nothing off its shape (a spec's env) renders.
    return (await service.list()).map((s) => S.SessionInfo.parse(s));
  }

  // -- pages -----------------------------------------------------------------------------------
  const sessionsPage = async (c: Context) => {
    try {
      const all = await listSessions();
      const statusQuery = c.req.query("status") ?? "";
      const status = (S.SessionStatus.options as readonly string[]).includes(statusQuery)
        ? statusQuery
        : "";
      const fleet = c.req.query("fleet") ?? "";
      const shown = all
        .filter((s) =>
          (status === "" || s.status === status) && (fleet === "" || s.policy === fleet)
        )
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const fleets = [...new Set(all.map((s) => s.policy))].sort();
      if (fleet !== "" && !fleets.includes(fleet)) fleets.push(fleet);
      return page(
        c,
        <SessionsPage
          csrf={csrfOf(c)}
          pendingCount={await pendingCount()}
          notice={notice(c)}
          sessions={shown}
          total={all.length}
          filter={{ status, fleet }}
          statuses={S.SessionStatus.options}
          fleets={fleets}
        />,
      );
    } catch (error) {
      return failedPage(c, error);
    }
  };
  app.get("/ui", sessionsPage);
  app.get("/ui/", sessionsPage);

  app.get("/ui/sessions/:id", async (c) => {
    try {
      const id = sessionIdOf(c);
      const session = S.SessionInfo.parse(await service.get(id));
      const view = S.ApprovalsView.parse(await service.approvals(id));
      return page(
        c,
        <SessionPage
          csrf={csrfOf(c)}
          pendingCount={await pendingCount()}
          notice={notice(c)}
          session={session}
          pending={view.pending}
          decisions={view.decisions}
          now={now()}
        />,
      );
    } catch (error) {
      return failedPage(c, error);
    }
  });

  app.get("/ui/sessions/:id/events", async (c) => {
    try {
      const id = sessionIdOf(c);
      const last = c.req.header("last-event-id")?.trim();
      const query = c.req.query("after");
      const after = last && /^\d{1,15}$/.test(last)
        ? Number(last)
        : query && /^\d{1,15}$/.test(query)
        ? Number(query)
        : 0;
      return await options.eventStream(c, id, after);
    } catch (error) {
      const { status, code, message } = describe(error);
      return c.json({ error: { code, message } }, status as 404);
    }
  });

  app.get("/ui/approvals", async (c) => {
    try {
      return page(
        c,
        <ApprovalsPage
          csrf={csrfOf(c)}
          notice={notice(c)}
          pending={await allPending()}
          now={now()}
        />,
      );
    } catch (error) {
      return failedPage(c, error);
    }
  });

  const policiesPage = async (
    c: Context,
    extra: {
      form?: { policy: string; command: string; paths: string; cwd: string };
      result?: S.EvaluateResult;
      formError?: string;
    } = {},
    status = 200,
  ) => {
    const policies = (await service.listPolicies()).map((p) => S.PolicySummary.parse(p));
    return page(
      c,
      <PoliciesPage
        csrf={csrfOf(c)}
        pendingCount={await pendingCount()}
        notice={notice(c)}
        policies={policies}
        form={extra.form ?? { policy: "default", command: "", paths: "", cwd: "" }}
        result={extra.result}
        formError={extra.formError}
      />,
      status,
    );
  };
  app.get("/ui/policies", async (c) => {
    try {
      return await policiesPage(c);
    } catch (error) {
      return failedPage(c, error);
    }
  });
  app.post("/ui/policies/evaluate", async (c) => {
    try {
      const body = await c.req.parseBody();
      const form = {
        policy: stringField(body, "policy"),
        command: stringField(body, "command"),
        paths: stringField(body, "paths"),
        cwd: stringField(body, "cwd"),
      };
      const paths = form.paths.split(/\r?\n/).map((p) => p.trim()).filter(Boolean);
      const request = S.EvaluateRequest.safeParse({
        policy: form.policy,
        ...(form.command.trim() !== "" && { command: form.command.trim() }),
        ...(paths.length > 0 && { paths }),
        ...(form.cwd.trim() !== "" && { cwd: form.cwd.trim() }),
      });
      if (!request.success) {
        const problem = request.error.issues[0];
        const where = problem?.path.join(".") || "input";
        return await policiesPage(c, {
          form,
          formError: `Cannot evaluate: ${where} ${problem?.message ?? "is invalid"}`,
        }, 400);
      }
      try {
        const result = S.EvaluateResult.parse(await service.evaluatePolicy(request.data));
        return await policiesPage(c, { form, result });
      } catch (error) {
        const { status, message } = describe(error);
        if (status >= 500) throw error;
        return await policiesPage(c, { form, formError: message }, status);
      }
    } catch (error) {
      return failedPage(c, error);
    }
  });

  app.get("/ui/budgets", async (c) => {
    try {
      const byFleet = new Map<string, FleetUsage>();
      for (const s of await listSessions()) {
        const f = byFleet.get(s.policy) ?? {
          fleet: s.policy,
          sessions: 0,
          live: 0,
          inputTokens: 0,
          cachedInputTokens: 0,
          outputTokens: 0,
          reasoningTokens: 0,
        };
        f.sessions++;
        if (s.status === "running" || s.status === "idle") f.live++;
        f.inputTokens += s.usage.inputTokens;
        f.cachedInputTokens += s.usage.cachedInputTokens;
        f.outputTokens += s.usage.outputTokens;
        f.reasoningTokens += s.usage.reasoningTokens;
        byFleet.set(s.policy, f);
      }
      const fleets = [...byFleet.values()].sort((a, b) => a.fleet.localeCompare(b.fleet));
      const budgets = service.fleets
        ? (await service.fleets()).map((f) => S.FleetInfo.parse(f))
        : undefined;
      return page(
        c,
        <BudgetsPage
          csrf={csrfOf(c)}
          pendingCount={await pendingCount()}
          budgets={budgets}
          fleets={fleets}
        />,
      );
    } catch (error) {
      return failedPage(c, error);
    }
  });

  // -- actions ---------------------------------------------------------------------------------
  /**
   * A state change: runs `act`, then answers a script (`accept: application/json`) with JSON, or
   * a plain form with a 303 back to the page it came from, carrying a notice code.
   */
  const action = (
    act: (c: Context, form: Record<string, unknown>) => Promise<string>,
  ) =>
  async (c: Context) => {
    const wantsJson = (c.req.header("accept") ?? "").includes("application/json");
    let form: Record<string, unknown> = {};
    try {
      form = await c.req.parseBody();
      const done = await act(c, form);
      if (wantsJson) return c.json({ ok: true, message: NOTICES[done] ?? "Done." }, 200);
      const back = safeBack(form.back, "/ui");
      return c.redirect(`${back}?done=${done}`, 303);
    } catch (error) {
      const { status, code, message } = describe(error);
      if (status >= 500) logError(`Console action ${c.req.path} failed`, error);
      if (wantsJson) return c.json({ error: { code, message } }, status as 400);
      return page(c, <ErrorPage status={status} message={message} csrf={csrfOf(c)} />, status);
    }
  };
  const required = (form: Record<string, unknown>, key: string, what: string): string => {
    const value = stringField(form, key).trim();
    if (value === "") throw new UiRefusal(400, "invalid_input", `${what} is empty`);
    return value;
  };

  app.post(
    "/ui/sessions/:id/approvals/:requestId",
    action(async (c, form) => {
      const decision = stringField(form, "decision");
      if (decision !== "allow" && decision !== "deny") {
        throw new UiRefusal(400, "invalid_input", "decision must be allow or deny");
      }
      await service.answerApproval(sessionIdOf(c), c.req.param("requestId") ?? "", decision);
      return decision;
    }),
  );
  app.post(
    "/ui/sessions/:id/interrupt",
    action(async (c) => {
      await service.interrupt(sessionIdOf(c));
      return "interrupt";
    }),
  );
  app.post(
    "/ui/sessions/:id/inject",
    action(async (c, form) => {
      await service.inject(sessionIdOf(c), required(form, "text", "The steering message"));
      return "steer";
    }),
  );
  app.post(
    "/ui/sessions/:id/turns",
    action(async (c, form) => {
      await service.send(sessionIdOf(c), required(form, "prompt", "The prompt"));
      return "turn";
    }),
  );
  app.post(
    "/ui/sessions/:id/stop",
    action(async (c) => {
      await service.stop(sessionIdOf(c));
      return "stop";
    }),
  );
  app.post(
    "/ui/policies/reload",
    action(async () => {
      const report = await service.reloadPolicies();
      if (!report.ok) {
        const first = report.issues[0];
        throw new UiRefusal(
          422,
          "policy_invalid",
          `Reload kept the previous version of failing files: ${first?.file}:${first?.line}: ${first?.message}`,
        );
      }
      return "reload";
    }),
  );

  app.post("/ui/logout", (c) => {
    const secure = isSecure(c);
    auth.end(getCookie(c, cookieName(secure)));
    setCookie(c, cookieName(secure), "", {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      secure,
      maxAge: 0,
    });
    return c.redirect("/ui", 303);
  });

  app.get(
    "/ui/*",
    (c) => page(c, <ErrorPage status={404} message="No such page." csrf={csrfOf(c)} />, 404),
  );
}
