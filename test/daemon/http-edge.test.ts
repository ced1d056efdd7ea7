/**
 * The HTTP edge (issue 10, finding 11), through `app.request()`: Host (DNS rebinding) and Origin
 * checks, the public health answer, limits on live sessions and event streams, and JSON depth
 * and size limits that keep a deeply nested body from ever reaching a recursive parser.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type CreateAppOptions } from "../../src/daemon/app.ts";
import {
  allowedHosts,
  jsonTooDeep,
  type ListenAddress,
  MAX_JSON_DEPTH,
  MAX_METADATA_BYTES,
  MAX_METADATA_DEPTH,
  valueDepth,
} from "../../src/daemon/http-edge.ts";
import { FakeService } from "./fake-service.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const TOKEN = "edge-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const CWD = mkdtempSync(join(tmpdir(), "codexd-edge-"));
const LISTEN: ListenAddress = { hostname: "127.0.0.1", port: 7420, tls: false };

function setup(options: Partial<CreateAppOptions> & { listen?: () => ListenAddress } = {}) {
  const service = new FakeService();
  const { logger, lines: errors } = memoryLogger();
  const app = createApp({
    service,
    token: TOKEN,
    listen: () => LISTEN,
    logger,
    ...options,
  });
  /** A request as a client of 127.0.0.1:7420 sends it, with the token unless told otherwise. */
  const call = (
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string; json?: unknown } = {},
  ) => {
    const headers: Record<string, string> = { host: "127.0.0.1:7420", ...AUTH, ...init.headers };
    if (init.json !== undefined) headers["content-type"] = "application/json";
    return app.request(`http://127.0.0.1:7420${path}`, {
      method: init.method ?? (init.json !== undefined || init.body ? "POST" : "GET"),
      headers,
      body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
    });
  };
  return { service, app, call, errors };
}

async function errorOf(
  res: Response,
): Promise<{ code: string; message: string; details?: unknown }> {
  const body = await res.json();
  expect(res.headers.get("content-type")).toContain("application/json");
  return body.error;
}

/** `{"a":{"a":…{}}}`, `depth` objects deep, built as text (no recursion anywhere). */
function nestedText(depth: number): string {
  return '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}

describe("Host", () => {
  test("the listening address and the loopback names, with the port, are served", async () => {
    const { call } = setup();
    for (const host of ["127.0.0.1:7420", "localhost:7420", "LOCALHOST:7420", "[::1]:7420"]) {
      const res = await call("/v1/capabilities", { headers: { host } });
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
  });

  test("any other Host gets 421 with a JSON error, before the token is even looked at", async () => {
    const { call } = setup();
    for (
      const host of [
        "evil.example:7420", // DNS rebinding: a name of the attacker's resolving to 127.0.0.1
        "evil.example",
        "127.0.0.1:7421", // another port
        "127.0.0.1", // no port: port 80
        "localhost.:7420",
        "127.0.0.2:7420",
        "0.0.0.0:7420",
      ]
    ) {
      for (const path of ["/v1/health", "/v1/sessions"]) {
        const res = await call(path, { headers: { host } });
        expect({ host, path, status: res.status }).toEqual({ host, path, status: 421 });
        const error = await errorOf(res);
        expect(error.code).toBe("misdirected_request");
        // The public health route gives a rebinding page nothing either.
        expect(JSON.stringify(error)).not.toContain("4242");
      }
    }
    // Without a token as well: 421, not 401.
    const res = await call("/v1/sessions", {
      headers: { host: "evil.example:7420", authorization: "" },
    });
    expect(res.status).toBe(421);
  });

  test("the port is read per request (port 0 binds later), IPv6 and wildcard addresses", async () => {
    let listen: ListenAddress = { hostname: "127.0.0.1", port: 0, tls: false };
    const { app } = setup({ listen: () => listen });
    const status = async (host: string) =>
      (await app.request("http://x/v1/health", { headers: { host } })).status;
    listen = { ...listen, port: 45678 };
    expect(await status("127.0.0.1:45678")).toBe(200);
    expect(await status("127.0.0.1:7420")).toBe(421);
    listen = { hostname: "::1", port: 45678, tls: false };
    expect(await status("[::1]:45678")).toBe(200);
    listen = { hostname: "0.0.0.0", port: 8443, tls: true, extraHosts: ["codexd.internal"] };
    expect(await status("codexd.internal:8443")).toBe(200);
    expect(await status("localhost:8443")).toBe(200);
    expect(await status("0.0.0.0:8443")).toBe(421);
    expect(await status("other.internal:8443")).toBe(421);
  });

  test("allowedHosts: a bare name only on the scheme's default port", () => {
    expect([...allowedHosts({ hostname: "codexd.example", port: 443, tls: true })]).toContain(
      "codexd.example",
    );
    expect([...allowedHosts({ hostname: "codexd.example", port: 80, tls: true })]).not.toContain(
      "codexd.example",
    );
    expect([...allowedHosts(LISTEN)].sort()).toEqual(
      ["127.0.0.1:7420", "[::1]:7420", "localhost:7420"].sort(),
    );
  });

  test("without a listen address (tests, embedding) any Host is served", async () => {
    const { app } = setup({ listen: undefined });
    const res = await app.request("http://anything.test/v1/health");
    expect(res.status).toBe(200);
  });
});

describe("Origin", () => {
  test("a same-origin Origin is fine; any other is refused with 403", async () => {
    const { call } = setup();
    expect(
      (await call("/v1/capabilities", { headers: { origin: "http://127.0.0.1:7420" } })).status,
    )
      .toBe(200);
    expect(
      (await call("/v1/capabilities", {
        headers: { host: "localhost:7420", origin: "http://localhost:7420" },
      })).status,
    ).toBe(200);
    for (
      const origin of [
        "http://evil.example",
        "http://127.0.0.1:7421",
        "https://127.0.0.1:7420", // another scheme is another origin
        "http://localhost:7420", // Host says 127.0.0.1
        "null",
        "not a url",
      ]
    ) {
      const res = await call("/v1/sessions", {
        method: "POST",
        headers: { origin },
        json: { prompt: "go", cwd: CWD },
      });
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
      expect((await errorOf(res)).code).toBe("cross_origin");
    }
  });

  test("the public health route refuses a cross-origin read too", async () => {
    const { call } = setup();
    const res = await call("/v1/health", {
      headers: { origin: "http://evil.example", authorization: "" },
    });
    expect(res.status).toBe(403);
  });
});

describe("health", () => {
  test("without a token only {status}: no pid, no stderr, even while degraded", async () => {
    const { call, service } = setup();
    const res = await call("/v1/health", { headers: { authorization: "" } });
    expect(await res.json()).toEqual({ status: "ok" });
    service.down = true;
    const down = await call("/v1/health", { headers: { authorization: "" } });
    const text = await down.text();
    expect(JSON.parse(text)).toEqual({ status: "degraded" });
    expect(text).not.toContain("panic");
  });

  test("with the token the details; a wrong token is 401", async () => {
    const { call, service } = setup();
    service.down = true;
    expect(await (await call("/v1/health")).json()).toMatchObject({
      status: "degraded",
      codex: { state: "restarting" },
      stderr: ["panic: boom"],
    });
    const wrong = await call("/v1/health", { headers: { authorization: "Bearer nope-nope" } });
    expect(wrong.status).toBe(401);
  });
});

describe("limits", () => {
  test("live sessions: over maxLiveSessions a spawn or resume gets 429 with retry-after", async () => {
    const { call } = setup({ limits: { maxLiveSessions: 2 } });
    const spawn = () => call("/v1/sessions", { json: { prompt: "go", cwd: CWD } });
    const first = (await (await spawn()).json()).sessionId as string;
    expect((await spawn()).status).toBe(201);
    const over = await spawn();
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("5");
    const error = await errorOf(over);
    expect(error.code).toBe("too_many_requests");
    expect(error.message).toContain("limits.maxLiveSessions");
    // A stopped session frees its slot; resuming it takes one again.
    expect((await call(`/v1/sessions/${first}`, { method: "DELETE" })).status).toBe(200);
    expect((await spawn()).status).toBe(201);
    const resume = await call(`/v1/sessions/${first}/resume`, {
      json: { prompt: "again", cwd: CWD },
    });
    expect(resume.status).toBe(429);
    expect(resume.headers.get("retry-after")).toBe("5");
  });

  test("event streams: over maxEventStreams 429; a closed stream frees its slot", async () => {
    const { call } = setup({ limits: { maxEventStreams: 2 } });
    const { sessionId } = await (await call("/v1/sessions", {
      json: { prompt: "go", cwd: CWD },
    })).json();
    const open = async () => {
      const res = await call(`/v1/sessions/${sessionId}/events`);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read(); // ": connected"
      return reader;
    };
    const a = await open();
    await open();
    const over = await call(`/v1/sessions/${sessionId}/events`);
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toBe("5");
    expect((await errorOf(over)).message).toContain("limits.maxEventStreams");
    // The stored-events read is no stream and stays available.
    expect((await call(`/v1/sessions/${sessionId}/events?format=json`)).status).toBe(200);
    await a.cancel();
    const again = await open();
    await again.cancel();
  });
});

describe("JSON depth and metadata", () => {
  test("metadata nested 40,000 deep is a 400 naming metadata (no 500, nothing stored)", async () => {
    const { call, service, errors } = setup();
    const body = `{"prompt":"go","cwd":${JSON.stringify(CWD)},"metadata":${nestedText(40_000)}}`;
    const res = await call("/v1/sessions", {
      body,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe("invalid_input");
    expect(error.message).toContain("metadata");
    expect(error.details).toEqual([{
      path: "metadata",
      message: expect.stringContaining("deeper"),
    }]);
    expect(service.sessions.size).toBe(0);
    expect(errors).toEqual([]);
  });

  test(`metadata: ${MAX_METADATA_DEPTH} levels are fine, one more is a 400`, async () => {
    const { call } = setup();
    const spawn = (metadata: string) =>
      call("/v1/sessions", {
        body: `{"prompt":"go","cwd":${JSON.stringify(CWD)},"metadata":${metadata}}`,
        headers: { "content-type": "application/json" },
      });
    expect((await spawn(nestedText(MAX_METADATA_DEPTH))).status).toBe(201);
    const deeper = await spawn(nestedText(MAX_METADATA_DEPTH + 1));
    expect(deeper.status).toBe(400);
    expect((await errorOf(deeper)).details).toEqual([
      { path: "metadata", message: `metadata nests deeper than ${MAX_METADATA_DEPTH} levels` },
    ]);
  });

  test("metadata over the size limit is a 400 naming metadata; resume checks it too", async () => {
    const { call } = setup();
    const big = { blob: "x".repeat(MAX_METADATA_BYTES) };
    const res = await call("/v1/sessions", { json: { prompt: "go", cwd: CWD, metadata: big } });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).details).toEqual([
      { path: "metadata", message: expect.stringContaining("bytes") },
    ]);
    const { sessionId } = await (await call("/v1/sessions", {
      json: { prompt: "go", cwd: CWD, metadata: { ticket: "T-1" } },
    })).json();
    const resume = await call(`/v1/sessions/${sessionId}/resume`, {
      json: { prompt: "go", cwd: CWD, metadata: big },
    });
    expect(resume.status).toBe(400);
  });

  test("no body anywhere can blow the stack: every route answers 400, naming the key", async () => {
    const { call, errors } = setup();
    const deep = nestedText(100_000);
    const cases: Array<[string, string, string]> = [
      ["/v1/sessions", `{"prompt":"go","env":${deep}}`, "env"],
      ["/v1/sessions", `[${"[".repeat(100_000)}${"]".repeat(100_000)}]`, ""],
      ["/v1/sessions/ses_x/turns", `{"prompt":${deep}}`, "prompt"],
      ["/v1/sessions/ses_x/inject", deep, "a"],
      ["/v1/policies/evaluate", `{"policy":"default","command":${deep}}`, "command"],
      ["/v1/sessions/ses_x/approvals/r1", `{"decision":${deep}}`, "decision"],
    ];
    for (const [path, body, key] of cases) {
      const res = await call(path, { body, headers: { "content-type": "application/json" } });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      const error = await errorOf(res);
      expect(error.details).toEqual([
        { path: key, message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    expect(errors).toEqual([]);
  });

  test("brackets inside strings do not count; escaped quotes do not end a string", async () => {
    const { call } = setup();
    const prompt = '[{"\\'.repeat(5_000) + '"' + "{[".repeat(5_000);
    const res = await call("/v1/sessions", { json: { prompt, cwd: CWD } });
    expect(res.status).toBe(201);
    expect(jsonTooDeep(JSON.stringify({ k: prompt }), 2)).toBeUndefined();
    expect(jsonTooDeep('{"a\\"b":[[[]]]}', 3)).toEqual({ path: 'a"b', limit: 3 });
    expect(jsonTooDeep('{"x":1,"y":{"z":[1]}}', 2)).toEqual({ path: "y", limit: 2 });
    expect(jsonTooDeep("not json {{{", 2)).toEqual({ path: "", limit: 2 });
  });

  test("valueDepth is iterative and stops early", () => {
    let value: unknown = {};
    for (let i = 1; i < 50_000; i++) value = [value];
    expect(valueDepth(value, 10)).toBe(11);
    expect(valueDepth({ a: [1, { b: null }] }, 10)).toBe(3);
    expect(valueDepth("scalar", 10)).toBe(0);
  });
});
