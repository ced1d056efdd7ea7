import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CodexdApiError, CodexdClient, parseSse, untimedFetch } from "../src/client.ts";
import { createApp } from "../src/daemon/app.ts";
import { BudgetExceeded } from "../src/daemon/budgets.ts";
import { FakeService } from "./daemon/fake-service.ts";

const CWD = mkdtempSync(join(tmpdir(), "codexd-client-"));

function setup(token = "tok") {
  const service = new FakeService();
  const app = createApp({ service, token: "tok" });
  const client = new CodexdClient({
    baseUrl: "http://codexd.test/",
    token,
    fetch: (input, init) => app.request(input, init),
  });
  return { service, app, client };
}

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("CodexdClient against the app", () => {
  test("every route", async () => {
    const { client, service } = setup();
    expect((await client.health()).status).toBe("ok");
    expect((await client.capabilities()).supportsSessionResume).toBe(true);
    const { sessionId } = await client.spawn({ prompt: "go", cwd: CWD, env: { K: "secret" } });
    expect((await client.list()).map((s) => s.sessionId)).toEqual([sessionId]);
    const info = await client.get(sessionId);
    expect(info).toMatchObject({ status: "running", envKeys: ["K"] });
    expect(await client.send(sessionId, "more")).toEqual({ queued: true });
    expect(await client.inject(sessionId, "steer")).toEqual({
      deliveredAs: "steer",
      turnId: "turn-1",
    });
    service.addPending(sessionId, "r/1");
    expect((await client.approvals(sessionId)).pending).toHaveLength(1);
    expect(await client.answerApproval(sessionId, "r/1", "deny")).toEqual({
      requestId: "r/1",
      decision: "deny",
    });
    await client.interrupt(sessionId);
    expect((await client.get(sessionId)).status).toBe("interrupted");
    const stored = await client.storedEvents(sessionId, { after: 1, limit: 1 });
    expect(stored.map((e) => e.seq)).toEqual([2]);
    await client.stop(sessionId);
    await client.stop(sessionId);
    expect((await client.resume(sessionId, { prompt: "again", cwd: CWD })).sessionId).toBe(
      sessionId,
    );
    expect((await client.policies())[0].name).toBe("default");
    expect((await client.reloadPolicies()).ok).toBe(false);
    expect((await client.evaluatePolicy({ policy: "default", command: "rm -rf /" })).decision)
      .toBe("deny");
    expect((await client.openapi()).openapi).toBe("3.1.0");
    const link = await client.loginLink();
    expect(link.url).toBe(`http://codexd.test${link.path}`);
    expect(link.path).toMatch(/^\/ui\/login\?nonce=/);
    expect(await client.metrics()).toContain("codexd_sessions");
    await client.shutdown();
    expect(service.shutdownCalls).toBe(1);
  });

  test("fleets, and a spawn a spent token budget refuses: 429 with its details and Retry-After", async () => {
    const { client, service, app } = setup();
    const hour = { tokens: 1200, budget: 1000, reopensAt: "2026-01-01T01:00:00.000Z" };
    service.fleetList = [{
      name: "default",
      policyVersion: "0123456789ab",
      liveSessions: 2,
      budgets: {
        sessionTokens: 5000,
        fleetTokensPerHour: 1000,
        fleetTokensPerDay: null,
        countCachedInput: false,
      },
      usage: { lastHour: hour, lastDay: { tokens: 1200, budget: null, reopensAt: null } },
    }];
    expect(await client.fleets()).toEqual(service.fleetList);
    const metrics = await client.metrics();
    expect(metrics).toContain('codexd_fleet_tokens{fleet="default",window="hour"} 1200');
    expect(metrics).toContain('codexd_fleet_tokens{fleet="default",window="day"} 1200');
    expect(metrics).toContain('codexd_fleet_token_budget{fleet="default",window="hour"} 1000');
    expect(metrics).not.toContain('codexd_fleet_token_budget{fleet="default",window="day"}');
    const paths = (await client.openapi()).paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths["/v1/fleets"] ?? {})).toEqual(["get"]);
    expect(JSON.stringify(paths["/v1/sessions"])).toContain("BudgetError");

    const now = Date.parse("2026-01-01T00:15:00.000Z");
    service.spawnRefusal = new BudgetExceeded("spawn session", {
      scope: "hour",
      fleet: "default",
      budget: 1000,
      spend: 1200,
      reopensAt: hour.reopensAt,
    }, now);
    const refused = await client.spawn({ prompt: "x", cwd: CWD }).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, code: "budget_exceeded" });
    expect(refused.message).toContain("fleet default spent 1200 tokens in the last hour");
    expect(refused.details).toEqual({
      scope: "hour",
      fleet: "default",
      budget: 1000,
      spend: 1200,
      reopensAt: hour.reopensAt,
      retryAfter: 2700,
    });
    const raw = await app.request("/v1/sessions", {
      method: "POST",
      headers: { authorization: "Bearer tok", "content-type": "application/json" },
      body: JSON.stringify({ prompt: "x", cwd: CWD }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("retry-after")).toBe("2700");
  });

  test("errors carry status, code and field details", async () => {
    const { client } = setup();
    const notFound = await client.get("nope").catch((e) => e);
    expect(notFound).toBeInstanceOf(CodexdApiError);
    expect(notFound).toMatchObject({ status: 404, code: "session_not_found" });
    const bad = await client.spawn({ prompt: "x", cwd: "/no/such/dir" }).catch((e) => e);
    expect(bad).toMatchObject({ status: 400, code: "invalid_input" });
    expect(bad.details).toEqual([
      { path: "cwd", message: "Cannot spawn session: cwd /no/such/dir does not exist" },
    ]);
    const unauthorized = await setup("wrong").client.list().catch((e) => e);
    expect(unauthorized).toMatchObject({ status: 401, code: "unauthorized" });
  });

  test("a body that does not match the schema is bad_response", async () => {
    const client = new CodexdClient({
      baseUrl: "http://x",
      token: "t",
      fetch: () => Response.json({ sessionId: 5 }, { status: 201 }),
    });
    const error = await client.spawn({ prompt: "x", cwd: CWD }).catch((e) => e);
    expect(error).toMatchObject({ code: "bad_response", status: 201 });
  });

  test("events: replay then live, ends when the session stops", async () => {
    const { client, service } = setup();
    const { sessionId } = await client.spawn({ prompt: "go", cwd: CWD });
    const seen: number[] = [];
    for await (const event of client.events(sessionId, { after: 1 })) {
      seen.push(event.seq);
      if (event.seq === 2) service.emit(sessionId, { type: "message", text: "live" });
      if (event.seq === 3) await service.stop(sessionId);
    }
    expect(seen).toEqual([2, 3, 4]);
  });

  test("events: abort ends the iteration", async () => {
    const { client, service } = setup();
    const { sessionId } = await client.spawn({ prompt: "go", cwd: CWD });
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const event of client.events(sessionId, { signal: controller.signal })) {
      seen.push(event.seq);
      if (event.seq === 2) controller.abort();
    }
    expect(seen).toEqual([1, 2]);
    for (let i = 0; i < 10 && service.readers.get(sessionId) !== 0; i++) await Bun.sleep(0);
    expect(service.readers.get(sessionId)).toBe(0);
  });

  test("events: reconnects with Last-Event-ID after a drop, nothing lost or repeated", async () => {
    const { client, service } = setup();
    const { sessionId } = await client.spawn({ prompt: "go", cwd: CWD });
    service.maxLag = 2;
    const sleeps: number[] = [];
    const seen: number[] = [];
    let dropped = false;
    const stream = client.events(sessionId, {
      reconnect: true,
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    });
    for await (const event of stream) {
      seen.push(event.seq);
      if (event.seq === 1 && !dropped) {
        dropped = true;
        // A burst while this reader is parked: the fake drops it, the client reconnects.
        for (let i = 0; i < 6; i++) service.emit(sessionId, { type: "message", text: `${i}` });
      }
      if (event.seq === 8) await service.stop(sessionId);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(sleeps).toEqual([]);
  });

  test("events: an unknown session is an error, not a reconnect loop", async () => {
    const { client } = setup();
    const error = await collect(client.events("nope", { reconnect: true })).catch((e) => e);
    expect(error).toMatchObject({ status: 404, code: "session_not_found" });
  });
});

describe("parseSse", () => {
  const event = (seq: number) => JSON.stringify({ seq, type: "message", sessionId: "s", ts: "t" });

  test("handles CRLF split across chunks, comments, multi-line data and ids", async () => {
    const chunks = [
      ": hello\r",
      "\n\r\nid: 1\r\nevent: message\r",
      `\ndata: ${event(1)}\r\n\r\n`,
      `id:2\ndata:{"seq":2,\ndata: "type":"x","sessionId":"s","ts":"t"}\n\n`,
      `data: ${event(3)}\r\r`,
      'data: {"incomplete":',
    ];
    const events = await collect(parseSse(streamOf(chunks)));
    expect(events.map((e) => [e.seq, e.type])).toEqual([[1, "message"], [2, "x"], [3, "message"]]);
  });

  test("every split point of a stream gives the same events", async () => {
    const text = `: c\n\nid: 1\nevent: message\ndata: ${event(1)}\r\n\r\nid: 2\ndata: ${
      event(2)
    }\n\n`;
    for (let i = 0; i <= text.length; i++) {
      const events = await collect(parseSse(streamOf([text.slice(0, i), text.slice(i)])));
      expect(events.map((e) => e.seq)).toEqual([1, 2]);
    }
  });

  test("a character split across chunks is decoded whole", async () => {
    const bytes = new TextEncoder().encode(
      `data: ${
        JSON.stringify({ seq: 1, type: "text.delta", sessionId: "s", ts: "t", text: "é€😀" })
      }\n\n`,
    );
    const at = bytes.indexOf(0xe2) + 1; // inside "€"
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, at));
        controller.enqueue(bytes.slice(at));
        controller.close();
      },
    });
    const [event] = await collect(parseSse(stream));
    expect(event?.text).toBe("é€😀");
  });

  test("a malformed event is a bad_response error", async () => {
    const error = await collect(parseSse(streamOf(['data: {"seq":0}\n\n']))).catch((e) => e);
    expect(error).toMatchObject({ code: "bad_response" });
    const notJson = await collect(parseSse(streamOf(["data: nope\n\n"]))).catch((e) => e);
    expect(notJson).toMatchObject({ code: "bad_response" });
  });
});

describe("CodexdClient over a real Bun.serve listener (port 0)", () => {
  test("events stream, abort releases the server-side reader, stop ends the stream", async () => {
    const service = new FakeService();
    const app = createApp({ service, token: "tok" });
    // idleTimeout 0: Bun's default 10 s would cut SSE streams between 15 s keep-alives.
    using server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch, idleTimeout: 0 });
    const client = new CodexdClient({ baseUrl: `http://127.0.0.1:${server.port}`, token: "tok" });
    const { sessionId } = await client.spawn({ prompt: "go", cwd: CWD });

    const controller = new AbortController();
    const seen: number[] = [];
    for await (const event of client.events(sessionId, { signal: controller.signal })) {
      seen.push(event.seq);
      if (event.seq === 2) controller.abort();
    }
    expect(seen).toEqual([1, 2]);
    for (let i = 0; i < 100 && service.readers.get(sessionId) !== 0; i++) await Bun.sleep(5);
    expect(service.readers.get(sessionId)).toBe(0);

    const untilStop: number[] = [];
    for await (const event of client.events(sessionId)) {
      untilStop.push(event.seq);
      if (event.seq === 2) await service.stop(sessionId);
    }
    expect(untilStop).toEqual([1, 2, 3]);
    expect((await client.get(sessionId)).status).toBe("stopped");
  });
});

describe("untimedFetch (the client's default)", () => {
  test("turns Bun's own fetch timeout off and keeps the caller's signal", async () => {
    const original = globalThis.fetch;
    const seen: unknown[] = [];
    globalThis.fetch = ((_input: unknown, init?: RequestInit) => {
      seen.push(init);
      return Promise.resolve(Response.json({ ok: true }));
    }) as typeof fetch;
    try {
      const signal = new AbortController().signal;
      await untimedFetch("http://127.0.0.1:9/v1/health", { method: "GET", signal });
      expect(seen).toEqual([{ method: "GET", signal, timeout: false }]);
    } finally {
      globalThis.fetch = original;
    }
  });
});
