import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/daemon/app.ts";
import { createDaemonMetrics } from "../../src/daemon/metrics.ts";
import type { KeepAliveTimers } from "../../src/daemon/sse.ts";
import { FakeService } from "./fake-service.ts";
import { memoryLogger } from "../support/memory-logger.ts";
import type { Logger } from "../../src/log.ts";

const TOKEN = "test-token-123";
const CWD = mkdtempSync(join(tmpdir(), "codexd-app-"));
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_AUTH = { ...AUTH, "content-type": "application/json" };

/** Manually fired keep-alive timers: no wall-clock waits. */
class ManualTimers implements KeepAliveTimers {
  readonly active = new Map<number, () => void>();
  readonly intervals: number[] = [];
  #next = 1;
  setInterval(fn: () => void, ms: number): unknown {
    this.intervals.push(ms);
    const id = this.#next++;
    this.active.set(id, fn);
    return id;
  }
  clearInterval(handle: unknown): void {
    this.active.delete(handle as number);
  }
  fire(): void {
    for (const fn of this.active.values()) fn();
  }
}

function setup(options: { logger?: Logger } = {}) {
  const service = new FakeService();
  const timers = new ManualTimers();
  const metrics = createDaemonMetrics();
  const app = createApp({ service, token: TOKEN, timers, metrics, logger: options.logger });
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = json === undefined
      ? { ...AUTH, ...rest.headers }
      : { ...JSON_AUTH, ...rest.headers };
    return app.request(path, {
      ...rest,
      headers,
      body: json === undefined ? rest.body : JSON.stringify(json),
    });
  };
  const spawn = async (extra: Record<string, unknown> = {}) => {
    const res = await call("/v1/sessions", {
      method: "POST",
      json: { prompt: "go", cwd: CWD, ...extra },
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { sessionId: string; threadId: string };
  };
  return { service, timers, metrics, app, call, spawn };
}

/** Reads an SSE body until `until` holds for the text so far, or the stream ends. */
async function readSse(
  body: ReadableStream<Uint8Array>,
  until: (text: string) => boolean = () => false,
): Promise<{ text: string; ended: boolean; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) return { text, ended: true, reader };
    text += decoder.decode(value, { stream: true });
  }
  return { text, ended: false, reader };
}

function frames(text: string): Array<{ id: string; event: string; data: Record<string, unknown> }> {
  return text.split("\n\n").filter((f) => f.startsWith("id:")).map((frame) => {
    const lines = Object.fromEntries(
      frame.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
    );
    return { id: lines.id, event: lines.event, data: JSON.parse(lines.data) };
  });
}

describe("happy paths", () => {
  test("health needs no token, and then says only its status; with the token the details", async () => {
    const { app, call } = setup();
    const res = await app.request("/v1/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(await (await call("/v1/health")).json()).toMatchObject({
      status: "ok",
      codex: { pid: 4242, state: "running" },
    });
  });

  test("health reports drift problems and stderr while degraded (to the token holder)", async () => {
    const { app, call, service } = setup();
    service.down = true;
    expect(await (await app.request("/v1/health")).json()).toEqual({ status: "degraded" });
    const body = await (await call("/v1/health")).json();
    expect(body).toMatchObject({ status: "degraded", problems: ["codex exited with code 1"] });
    expect(body.stderr).toEqual(["panic: boom"]);
  });

  test("capabilities", async () => {
    const { call } = setup();
    const res = await call("/v1/capabilities");
    expect(res.status).toBe(200);
    expect((await res.json()).toolPermissionFormat).toBe("codex");
  });

  test("spawn, list, show: env values are never echoed", async () => {
    const { call, spawn } = setup();
    const { sessionId, threadId } = await spawn({
      env: { API_KEY: "s3cr3t-value" },
      metadata: { ticket: "T-1" },
    });
    expect(threadId).toBe("t-1");
    const list = await call("/v1/sessions");
    const listText = await list.text();
    expect(list.status).toBe(200);
    expect(listText).not.toContain("s3cr3t-value");
    expect(JSON.parse(listText).sessions).toHaveLength(1);
    const show = await call(`/v1/sessions/${sessionId}`);
    const info = await show.json();
    expect(info).toMatchObject({
      sessionId,
      status: "running",
      policy: "default",
      cwd: CWD,
      envKeys: ["API_KEY"],
      metadata: { ticket: "T-1" },
      currentTurn: { turnId: "turn-1" },
      usage: { inputTokens: 0 },
    });
    expect(JSON.stringify(info)).not.toContain("s3cr3t-value");
  });

  test("fields off the wire shape (a spec's env) are stripped even if the service leaks them", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn({ env: { API_KEY: "s3cr3t-value" } });
    const leaky = { ...(await service.get(sessionId)), env: { API_KEY: "s3cr3t-value" } };
    service.get = () => Promise.resolve(leaky);
    service.list = () => Promise.resolve([leaky]);
    for (const path of [`/v1/sessions/${sessionId}`, "/v1/sessions"]) {
      const text = await (await call(path)).text();
      expect(text).toContain(sessionId);
      expect(text).not.toContain("s3cr3t-value");
    }
  });

  test("follow-up turn is queued while one runs, started when idle", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    const queued = await call(`/v1/sessions/${sessionId}/turns`, {
      method: "POST",
      json: { prompt: "more" },
    });
    expect(queued.status).toBe(202);
    expect(await queued.json()).toEqual({ queued: true });
    service.finishTurn(sessionId);
    const started = await call(`/v1/sessions/${sessionId}/turns`, {
      method: "POST",
      json: { prompt: "more" },
    });
    expect(await started.json()).toMatchObject({ queued: false, turnId: expect.any(String) });
  });

  test("inject steers the running turn, 409 when none runs", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    const res = await call(`/v1/sessions/${sessionId}/inject`, {
      method: "POST",
      json: { text: "hurry" },
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ deliveredAs: "steer", turnId: "turn-1" });
    service.finishTurn(sessionId);
    const idle = await call(`/v1/sessions/${sessionId}/inject`, {
      method: "POST",
      json: { text: "x" },
    });
    expect(idle.status).toBe(409);
    expect((await idle.json()).error.code).toBe("no_active_turn");
  });

  test("interrupt, stop (idempotent), resume, send after stop is 409", async () => {
    const { call, spawn } = setup();
    const { sessionId } = await spawn();
    const interrupted = await call(`/v1/sessions/${sessionId}/interrupt`, { method: "POST" });
    expect(interrupted.status).toBe(202);
    expect((await (await call(`/v1/sessions/${sessionId}`)).json()).status).toBe("interrupted");
    for (let i = 0; i < 2; i++) {
      const stopped = await call(`/v1/sessions/${sessionId}`, { method: "DELETE" });
      expect(stopped.status).toBe(200);
      expect(await stopped.json()).toEqual({ sessionId, status: "stopped" });
    }
    const send = await call(`/v1/sessions/${sessionId}/turns`, {
      method: "POST",
      json: { prompt: "x" },
    });
    expect(send.status).toBe(409);
    expect((await send.json()).error.code).toBe("wrong_state");
    const resumed = await call(`/v1/sessions/${sessionId}/resume`, {
      method: "POST",
      json: { prompt: "again", cwd: CWD },
    });
    expect(resumed.status).toBe(201);
    expect(await resumed.json()).toEqual({ sessionId, threadId: "t-1", ignoredFields: [] });
  });

  test("events as JSON with after and limit; every event has seq and type", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    service.emit(sessionId, { type: "message", text: "a" });
    service.emit(sessionId, { type: "message", text: "b" });
    const all = await (await call(`/v1/sessions/${sessionId}/events?format=json`)).json();
    expect(all.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4]);
    for (const e of all) expect(typeof e.type).toBe("string");
    const some = await (await call(`/v1/sessions/${sessionId}/events?format=json&after=1&limit=2`))
      .json();
    expect(some.map((e: { seq: number }) => e.seq)).toEqual([2, 3]);
  });

  test("approvals: list pending, answer, 409 when decided, 404 unknown", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    service.addPending(sessionId, "req-1");
    const view = await (await call(`/v1/sessions/${sessionId}/approvals`)).json();
    expect(view.pending.map((p: { requestId: string }) => p.requestId)).toEqual(["req-1"]);
    const url = `/v1/sessions/${sessionId}/approvals/req-1`;
    const answered = await call(url, { method: "POST", json: { decision: "allow" } });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ requestId: "req-1", decision: "allow" });
    const again = await call(url, { method: "POST", json: { decision: "deny" } });
    expect(again.status).toBe(409);
    expect((await again.json()).error.code).toBe("approval_decided");
    const unknown = await call(`/v1/sessions/${sessionId}/approvals/nope`, {
      method: "POST",
      json: { decision: "deny" },
    });
    expect(unknown.status).toBe(404);
    const after = await (await call(`/v1/sessions/${sessionId}/approvals`)).json();
    expect(after).toMatchObject({
      pending: [],
      decisions: [{ requestId: "req-1", decision: "allow" }],
    });
  });

  test("policies: list, reload reports per-file issues with 200, evaluate", async () => {
    const { call } = setup();
    expect((await (await call("/v1/policies")).json()).policies[0]).toMatchObject({
      name: "default",
      version: "v1",
    });
    const reload = await call("/v1/policies/reload", { method: "POST" });
    expect(reload.status).toBe(200);
    expect(await reload.json()).toMatchObject({
      ok: false,
      issues: [{ file: "strict.yaml", line: 3 }],
    });
    const evalCmd = await call("/v1/policies/evaluate", {
      method: "POST",
      json: { policy: "default", command: "rm -rf /" },
    });
    expect(await evalCmd.json()).toMatchObject({ decision: "deny", ruleId: "builtin.rm-root" });
    const evalPaths = await call("/v1/policies/evaluate", {
      method: "POST",
      json: { policy: "default", paths: ["/w/a.ts"], cwd: "/w" },
    });
    expect(evalPaths.status).toBe(200);
    expect((await evalPaths.json()).decision).toBe("allow");
  });

  test("shutdown answers 202 and starts the service's shutdown", async () => {
    const { call, service } = setup();
    const res = await call("/v1/shutdown", { method: "POST" });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: "stopping" });
    expect(service.shutdownCalls).toBe(1);
  });

  test("openapi.json is OpenAPI 3.1 with every route and the bearer scheme", async () => {
    const { call, app } = setup();
    expect((await app.request("/v1/openapi.json")).status).toBe(401);
    const doc = JSON.parse(await (await call("/v1/openapi.json")).text());
    expect(doc.openapi).toBe("3.1.0");
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(ops.sort()).toEqual([
      "DELETE /v1/sessions/{id}",
      "GET /v1/capabilities",
      "GET /v1/fleets",
      "GET /v1/health",
      "GET /v1/policies",
      "GET /v1/sessions",
      "GET /v1/sessions/{id}",
      "GET /v1/sessions/{id}/approvals",
      "GET /v1/sessions/{id}/events",
      "POST /v1/codex/restart",
      "POST /v1/policies/evaluate",
      "POST /v1/policies/reload",
      "POST /v1/sessions",
      "POST /v1/sessions/{id}/approvals/{requestId}",
      "POST /v1/sessions/{id}/inject",
      "POST /v1/sessions/{id}/interrupt",
      "POST /v1/sessions/{id}/resume",
      "POST /v1/sessions/{id}/turns",
      "POST /v1/shutdown",
      "POST /v1/ui/login-link",
    ]);
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer" });
    expect(doc.paths["/v1/health"].get.security).toEqual([]);
    const spawnBody = doc.paths["/v1/sessions"].post.requestBody.content["application/json"].schema;
    expect(spawnBody.required).toEqual(expect.arrayContaining(["prompt", "cwd"]));
    const eventParams = doc.paths["/v1/sessions/{id}/events"].get.parameters
      .map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(eventParams.sort()).toEqual([
      "header:last-event-id",
      "path:id",
      "query:after",
      "query:format",
      "query:limit",
    ]);
    // Every $ref resolves inside the document.
    const refs = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string") refs.add(value);
          else walk(value);
        }
      }
    };
    walk(doc);
    expect(refs.size).toBeGreaterThan(10);
    for (const ref of refs) {
      const target = ref.replace(/^#\//, "").split("/").reduce<unknown>(
        (n, k) => (n as Record<string, unknown> | undefined)?.[k],
        doc,
      );
      expect(target, ref).toBeDefined();
    }
  });

  test("metrics: sessions by status, service counters, request latency by route", async () => {
    const { call, spawn, metrics } = setup();
    const { sessionId } = await spawn();
    await call(`/v1/sessions/${sessionId}`);
    metrics.approvals.inc({ decision: "deny", source: "builtin" });
    const res = await call("/metrics");
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await res.text();
    expect(text).toContain('codexd_sessions{status="running"} 1');
    expect(text).toContain('codexd_sessions{status="stopped"} 0');
    expect(text).toContain('codexd_approvals_total{decision="deny",source="builtin"} 1');
    expect(text).toContain(
      'codexd_http_request_duration_seconds_count{method="GET",route="/v1/sessions/:id",status="200"} 1',
    );
    expect(text).toContain('route="/v1/sessions",status="201"');
  });
});

describe("metrics registry", () => {
  test("renders counters, labelled gauges and cumulative histograms in Prometheus text", () => {
    const m = createDaemonMetrics();
    m.codexRestarts.inc();
    m.events.inc({ type: 'we"ird\\\n' }, 2);
    m.requestSeconds.observe({ method: "GET", route: "/x", status: "200" }, 0.02);
    m.requestSeconds.observe({ method: "GET", route: "/x", status: "200" }, 20);
    const text = m.registry.render();
    expect(text).toContain(
      "# TYPE codexd_codex_restarts_total counter\ncodexd_codex_restarts_total 1",
    );
    expect(text).toContain('codexd_events_total{type="we\\"ird\\\\\\n"} 2');
    const bucket = (le: string) =>
      `codexd_http_request_duration_seconds_bucket{method="GET",route="/x",status="200",le="${le}"}`;
    expect(text).toContain(`${bucket("0.01")} 0\n`);
    expect(text).toContain(`${bucket("0.025")} 1\n`);
    expect(text).toContain(`${bucket("10")} 1\n`);
    expect(text).toContain(`${bucket("+Inf")} 2\n`);
    expect(text).toContain(
      'codexd_http_request_duration_seconds_sum{method="GET",route="/x",status="200"} 20.02',
    );
    expect(() => m.turns.inc({}, -1)).toThrow("cannot decrease");
    expect(() => m.registry.counter("codexd_turns_total", "again")).toThrow("already exists");
  });

  test("unauthorized and unknown requests are labelled by matched route or unmatched", async () => {
    const { app, metrics } = setup();
    await app.request("/v1/sessions/abc");
    await app.request("/v1/nowhere", { headers: AUTH });
    const count = (labels: Record<string, string>) => metrics.requestSeconds.count(labels);
    expect(count({ method: "GET", route: "/v1/sessions/:id", status: "401" })).toBe(1);
    expect(count({ method: "GET", route: "unmatched", status: "404" })).toBe(1);
  });
});

describe("errors", () => {
  test("401 without a token, with a wrong one, or a wrong scheme", async () => {
    const { app } = setup();
    for (
      const authorization of [
        undefined,
        "Bearer wrong",
        `Basic ${TOKEN}`,
        `Bearer ${TOKEN}x`,
        "Bearer",
      ]
    ) {
      const res = await app.request("/v1/sessions", {
        headers: authorization ? { authorization } : {},
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect((await res.json()).error.code).toBe("unauthorized");
    }
    for (const path of ["/metrics", "/v1/shutdown", "/v1/nope"]) {
      expect((await app.request(path, { method: "POST" })).status).toBe(401);
    }
  });

  test("413 for a body over 1 MiB", async () => {
    const { call } = setup();
    const res = await call("/v1/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x".repeat(1024 * 1024), cwd: CWD }),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("body_too_large");
  });

  test("413 for a streamed body without Content-Length; 1 MiB exactly passes the limit", async () => {
    const { app, service } = setup();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await app.request("/v1/sessions", {
      method: "POST",
      headers: JSON_AUTH,
      body: streamed,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(service.sessions.size).toBe(0);
    const prompt = "x".repeat(1024 * 1024 - JSON.stringify({ prompt: "", cwd: CWD }).length);
    const exact = await app.request("/v1/sessions", {
      method: "POST",
      headers: JSON_AUTH,
      body: JSON.stringify({ prompt, cwd: CWD }),
    });
    expect(exact.status).toBe(201);
  });

  test("405 with Allow where the path exists with another method; 404 otherwise", async () => {
    const { call } = setup();
    const res = await call("/v1/sessions/abc/turns", { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect((await call("/v1/health", { method: "DELETE" })).status).toBe(405);
    const missing = await call("/v1/sessions/abc/nothing");
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("not_found");
  });

  test("503 with a clear message while codex is down", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    service.down = true;
    const res = await call(`/v1/sessions/${sessionId}`);
    expect(res.status).toBe(503);
    expect((await res.json()).error.message).toContain("codex");
    const spawnRes = await call("/v1/sessions", {
      method: "POST",
      json: { prompt: "a", cwd: CWD },
    });
    expect(spawnRes.status).toBe(503);
  });

  test("an unexpected service failure is a logged 500 JSON body", async () => {
    const { logger, lines } = memoryLogger();
    const { call, service } = setup({ logger });
    service.list = () => Promise.reject(new TypeError("kaboom"));
    const res = await call("/v1/sessions");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: { code: "internal", message: "Internal error: kaboom" },
    });
    expect(lines.map((l) => l.message)).toEqual(["Unexpected error in GET /v1/sessions"]);
  });

  const S = "/v1/sessions/s-1";
  const cases: Array<{
    name: string;
    method: string;
    path: string;
    body?: string;
    type?: string;
    headers?: Record<string, string>;
    status: number;
    code: string;
    field?: string;
  }> = [
    {
      name: "spawn: no body",
      method: "POST",
      path: "/v1/sessions",
      type: "",
      status: 400,
      code: "invalid_input",
      field: "prompt",
    },
    {
      name: "spawn: malformed JSON",
      method: "POST",
      path: "/v1/sessions",
      body: "{",
      status: 400,
      code: "malformed_json",
    },
    {
      name: "spawn: empty JSON body",
      method: "POST",
      path: "/v1/sessions",
      body: "",
      status: 400,
      code: "malformed_json",
    },
    {
      name: "spawn: text/plain",
      method: "POST",
      path: "/v1/sessions",
      body: "{}",
      type: "text/plain",
      status: 415,
      code: "unsupported_media_type",
    },
    {
      name: "spawn: form",
      method: "POST",
      path: "/v1/sessions",
      body: "a=1",
      type: "application/x-www-form-urlencoded",
      status: 415,
      code: "unsupported_media_type",
    },
    {
      name: "spawn: array body",
      method: "POST",
      path: "/v1/sessions",
      body: "[]",
      status: 400,
      code: "invalid_input",
      field: "",
    },
    {
      name: "spawn: missing cwd",
      method: "POST",
      path: "/v1/sessions",
      body: '{"prompt":"x"}',
      status: 400,
      code: "invalid_input",
      field: "cwd",
    },
    {
      name: "spawn: relative cwd",
      method: "POST",
      path: "/v1/sessions",
      body: '{"prompt":"x","cwd":"rel"}',
      status: 400,
      code: "invalid_input",
      field: "cwd",
    },
    {
      name: "spawn: missing cwd dir",
      method: "POST",
      path: "/v1/sessions",
      body: '{"prompt":"x","cwd":"/no/such/dir/x"}',
      status: 400,
      code: "invalid_input",
      field: "cwd",
    },
    {
      name: "spawn: empty prompt",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"","cwd":"${CWD}"}`,
      status: 400,
      code: "invalid_input",
      field: "prompt",
    },
    {
      name: "spawn: unknown field",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"x","cwd":"${CWD}","bogus":1}`,
      status: 400,
      code: "invalid_input",
      field: "bogus",
    },
    {
      name: "spawn: bad env key",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"x","cwd":"${CWD}","env":{"1BAD":"v"}}`,
      status: 400,
      code: "invalid_input",
      field: "env.1BAD",
    },
    {
      name: "spawn: bad timeout",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"x","cwd":"${CWD}","timeoutMs":-5}`,
      status: 400,
      code: "invalid_input",
      field: "timeoutMs",
    },
    {
      name: "spawn: bad enum",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"x","cwd":"${CWD}","sandbox":"yolo"}`,
      status: 400,
      code: "invalid_input",
      field: "sandbox",
    },
    {
      name: "spawn: unknown policy",
      method: "POST",
      path: "/v1/sessions",
      body: `{"prompt":"x","cwd":"${CWD}","policy":"nope"}`,
      status: 400,
      code: "unknown_policy",
      field: "policy",
    },
    {
      name: "show: unknown session",
      method: "GET",
      path: "/v1/sessions/nope",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "show: bad id",
      method: "GET",
      path: "/v1/sessions/a%20b",
      status: 400,
      code: "invalid_input",
      field: "id",
    },
    {
      name: "turns: no prompt",
      method: "POST",
      path: `${S}/turns`,
      body: "{}",
      status: 400,
      code: "invalid_input",
      field: "prompt",
    },
    {
      name: "turns: prompt number",
      method: "POST",
      path: `${S}/turns`,
      body: '{"prompt":5}',
      status: 400,
      code: "invalid_input",
      field: "prompt",
    },
    {
      name: "turns: unknown session",
      method: "POST",
      path: "/v1/sessions/nope/turns",
      body: '{"prompt":"x"}',
      status: 404,
      code: "session_not_found",
    },
    {
      name: "turns: malformed",
      method: "POST",
      path: `${S}/turns`,
      body: '{"prompt":',
      status: 400,
      code: "malformed_json",
    },
    {
      name: "resume: no cwd",
      method: "POST",
      path: `${S}/resume`,
      body: '{"prompt":"x"}',
      status: 400,
      code: "invalid_input",
      field: "cwd",
    },
    {
      name: "resume: unknown session",
      method: "POST",
      path: "/v1/sessions/nope/resume",
      body: `{"prompt":"x","cwd":"${CWD}"}`,
      status: 404,
      code: "session_not_found",
    },
    {
      name: "inject: no text",
      method: "POST",
      path: `${S}/inject`,
      body: '{"prompt":"x"}',
      status: 400,
      code: "invalid_input",
      field: "text",
    },
    {
      name: "inject: xml",
      method: "POST",
      path: `${S}/inject`,
      body: "<a/>",
      type: "application/xml",
      status: 415,
      code: "unsupported_media_type",
    },
    {
      name: "interrupt: unknown",
      method: "POST",
      path: "/v1/sessions/nope/interrupt",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "stop: unknown",
      method: "DELETE",
      path: "/v1/sessions/nope",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "events: negative after",
      method: "GET",
      path: `${S}/events?after=-1`,
      status: 400,
      code: "invalid_input",
      field: "after",
    },
    {
      name: "events: after NaN",
      method: "GET",
      path: `${S}/events?after=abc`,
      status: 400,
      code: "invalid_input",
      field: "after",
    },
    {
      name: "events: bad format",
      method: "GET",
      path: `${S}/events?format=xml`,
      status: 400,
      code: "invalid_input",
      field: "format",
    },
    {
      name: "events: limit 0",
      method: "GET",
      path: `${S}/events?format=json&limit=0`,
      status: 400,
      code: "invalid_input",
      field: "limit",
    },
    {
      name: "events: bad Last-Event-ID",
      method: "GET",
      path: `${S}/events`,
      headers: { "last-event-id": "x1" },
      status: 400,
      code: "invalid_input",
      field: "last-event-id",
    },
    {
      name: "events: unknown session",
      method: "GET",
      path: "/v1/sessions/nope/events",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "events json: unknown session",
      method: "GET",
      path: "/v1/sessions/nope/events?format=json",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "approvals: unknown session",
      method: "GET",
      path: "/v1/sessions/nope/approvals",
      status: 404,
      code: "session_not_found",
    },
    {
      name: "answer: bad decision",
      method: "POST",
      path: `${S}/approvals/r1`,
      body: '{"decision":"ask"}',
      status: 400,
      code: "invalid_input",
      field: "decision",
    },
    {
      name: "answer: unknown request",
      method: "POST",
      path: `${S}/approvals/r1`,
      body: '{"decision":"deny"}',
      status: 404,
      code: "approval_not_found",
    },
    {
      name: "evaluate: neither",
      method: "POST",
      path: "/v1/policies/evaluate",
      body: '{"policy":"default"}',
      status: 400,
      code: "invalid_input",
      field: "command",
    },
    {
      name: "evaluate: paths without cwd",
      method: "POST",
      path: "/v1/policies/evaluate",
      body: '{"policy":"default","paths":["/a"]}',
      status: 400,
      code: "invalid_input",
      field: "cwd",
    },
    {
      name: "evaluate: relative path",
      method: "POST",
      path: "/v1/policies/evaluate",
      body: '{"policy":"default","paths":["a"],"cwd":"/"}',
      status: 400,
      code: "invalid_input",
      field: "paths.0",
    },
    {
      name: "evaluate: bad policy name",
      method: "POST",
      path: "/v1/policies/evaluate",
      body: '{"policy":"../x","command":"ls"}',
      status: 400,
      code: "invalid_input",
      field: "policy",
    },
    {
      name: "evaluate: unknown policy",
      method: "POST",
      path: "/v1/policies/evaluate",
      body: '{"policy":"zzz","command":"ls"}',
      status: 400,
      code: "unknown_policy",
      field: "policy",
    },
  ];

  test.each(cases)("$name → $status $code", async (c) => {
    const { app, spawn } = setup();
    await spawn();
    const headers: Record<string, string> = { ...AUTH, ...c.headers };
    if (c.body !== undefined || c.type !== undefined) {
      const type = c.type ?? "application/json";
      if (type) headers["content-type"] = type;
    }
    const res = await app.request(c.path, { method: c.method, headers, body: c.body });
    expect(res.status).toBe(c.status);
    const body = await res.json();
    expect(body.error.code).toBe(c.code);
    expect(typeof body.error.message).toBe("string");
    if (c.field !== undefined) {
      expect(body.error.details.map((d: { path: string }) => d.path)).toContain(c.field);
    }
  });
});

describe("server-sent events", () => {
  test("framing: id is seq, event is type, data is the JSON; ends when the session stops", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    const res = await call(`/v1/sessions/${sessionId}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    service.emit(sessionId, { type: "message", text: "line\nbreak" });
    await service.stop(sessionId);
    const { text, ended } = await readSse(res.body!);
    expect(ended).toBe(true);
    const got = frames(text);
    expect(got.map((f) => [f.id, f.event])).toEqual([
      ["1", "session.started"],
      ["2", "turn.started"],
      ["3", "message"],
      ["4", "system"],
    ]);
    expect(got[2].data).toMatchObject({ seq: 3, type: "message", text: "line\nbreak", sessionId });
  });

  test("replay after Last-Event-ID returns exactly the later events, header wins over ?after", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    for (let i = 0; i < 5; i++) service.emit(sessionId, { type: "message", text: `m${i}` });
    await service.stop(sessionId);
    const res = await call(`/v1/sessions/${sessionId}/events?after=1`, {
      headers: { "last-event-id": "4" },
    });
    const { text } = await readSse(res.body!);
    expect(frames(text).map((f) => Number(f.id))).toEqual([5, 6, 7, 8]);
    const viaQuery = await call(`/v1/sessions/${sessionId}/events?after=6`);
    expect(frames((await readSse(viaQuery.body!)).text).map((f) => Number(f.id))).toEqual([7, 8]);
  });

  test("live events arrive after the replay; keep-alive comments on the injected timer", async () => {
    const { call, spawn, service, timers } = setup();
    const { sessionId } = await spawn();
    const res = await call(`/v1/sessions/${sessionId}/events`);
    const first = await readSse(res.body!, (t) => t.includes("id: 2\n"));
    timers.fire();
    service.emit(sessionId, { type: "message", text: "live" });
    const decoder = new TextDecoder();
    let text = first.text;
    while (!text.includes("id: 3\n")) {
      const { value } = await first.reader.read();
      text += decoder.decode(value);
    }
    expect(text).toContain(": keep-alive\n\n");
    expect(timers.intervals).toEqual([15_000]);
    expect(frames(text).at(-1)?.data).toMatchObject({ seq: 3, text: "live" });
    await first.reader.cancel();
  });

  test("a client that leaves is cleaned up: reader released, timer cleared", async () => {
    const { call, spawn, service, timers } = setup();
    const { sessionId } = await spawn();
    const controller = new AbortController();
    const res = await call(`/v1/sessions/${sessionId}/events`, { signal: controller.signal });
    const { reader } = await readSse(res.body!, (t) => t.includes("id: 2\n"));
    expect(service.readers.get(sessionId)).toBe(1);
    expect(timers.active.size).toBe(1);
    await reader.cancel();
    // The fake's generator wakes on the abort signal and runs its finally.
    for (let i = 0; i < 10 && service.readers.get(sessionId) !== 0; i++) await Bun.sleep(0);
    expect(service.readers.get(sessionId)).toBe(0);
    expect(timers.active.size).toBe(0);
  });

  test("a request abort also ends the stream", async () => {
    const { call, spawn, service, timers } = setup();
    const { sessionId } = await spawn();
    const controller = new AbortController();
    const res = await call(`/v1/sessions/${sessionId}/events`, { signal: controller.signal });
    await readSse(res.body!, (t) => t.includes("id: 2\n")).then(({ reader }) =>
      reader.releaseLock()
    );
    controller.abort();
    for (let i = 0; i < 10 && service.readers.get(sessionId) !== 0; i++) await Bun.sleep(0);
    expect(service.readers.get(sessionId)).toBe(0);
    expect(timers.active.size).toBe(0);
  });

  test("a slow reader dropped by the service's bounded buffer just ends", async () => {
    const { call, spawn, service } = setup();
    const { sessionId } = await spawn();
    service.maxLag = 3;
    const res = await call(`/v1/sessions/${sessionId}/events`);
    const { reader } = await readSse(res.body!, (t) => t.includes("id: 1\n"));
    for (let i = 0; i < 10; i++) service.emit(sessionId, { type: "message", text: `${i}` });
    const rest = await readSse(
      new ReadableStream({
        pull: async (c) => {
          const r = await reader.read();
          if (r.done) c.close();
          else c.enqueue(r.value);
        },
      }),
    );
    expect(rest.ended).toBe(true);
    expect(service.readers.get(sessionId)).toBe(0);
  });
});
