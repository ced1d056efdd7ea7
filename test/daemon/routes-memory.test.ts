/**
 * The HTTP routes over the real session service (SessionManager with its store, journal, policies
 * and bridge) and the in-memory provider: a session's whole life through the API, SSE included,
 * and a crash of the provider's backend as the API shows it. No codex.
 */
import { afterAll, expect, test } from "bun:test";
import { createApp } from "../../src/daemon/app.ts";
import { silentLogger } from "../../src/log.ts";
import type { TurnScript } from "../support/memory-provider.ts";
import { drained, type MemorySessions, memorySessions } from "../support/memory-sessions.ts";

const TOKEN = "memory-routes-token-0123";
const opened: MemorySessions[] = [];
afterAll(() => opened.forEach((h) => h[Symbol.dispose]()));

const ECHO: TurnScript = (prompt) => [
  { type: "text.delta", text: "e" },
  { type: "result", text: `echo: ${prompt}`, turnStatus: "completed" },
];

function setup() {
  const h = memorySessions({ script: ECHO });
  opened.push(h);
  const app = createApp({ service: h.sessions, token: TOKEN, logger: silentLogger });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) };
  };
  return { call, provider: h.provider, WT: h.worktree };
}

test("spawn, send, stop over HTTP; the SSE replay holds every event and then ends", async () => {
  const { call, WT } = setup();
  const spawned = await call("POST", "/v1/sessions", { prompt: "one", cwd: WT });
  expect(spawned.status).toBe(201);
  const { sessionId, ignoredFields } = spawned.json();
  expect(ignoredFields).toEqual([]);
  await drained();
  expect((await call("POST", `/v1/sessions/${sessionId}/turns`, { prompt: "two" })).json())
    .toEqual({ turnId: "turn_2", queued: false });
  await drained();
  expect((await call("GET", `/v1/sessions/${sessionId}`)).json()).toMatchObject({
    status: "idle",
    queuedTurns: 0,
  });
  expect((await call("DELETE", `/v1/sessions/${sessionId}`)).status).toBe(200);

  const sse = await call("GET", `/v1/sessions/${sessionId}/events`);
  expect(sse.status).toBe(200);
  const types = [...sse.text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  expect(types).toEqual([
    "system", // the prompt
    "session.started",
    "turn.started",
    "text.delta",
    "result",
    "system", // the second prompt
    "turn.started",
    "text.delta",
    "result",
    "system", // session_stopped
  ]);
  expect((await call("GET", `/v1/sessions/${sessionId}`)).json().status).toBe("stopped");
});

test("a crash shows as interrupted sessions and a degraded health; resume brings one back", async () => {
  const { call, provider, WT } = setup();
  const { sessionId } = (await call("POST", "/v1/sessions", { prompt: "one", cwd: WT })).json();
  await drained();
  provider.crash("SIGKILL");
  await drained();
  expect((await call("GET", `/v1/sessions/${sessionId}`)).json().status).toBe("interrupted");
  const health = (await call("GET", "/v1/health")).json();
  expect(health).toMatchObject({ status: "degraded", codex: { state: "degraded" } });
  const refused = await call("POST", `/v1/sessions/${sessionId}/resume`, {
    prompt: "again",
    cwd: WT,
  });
  expect(refused.status).toBe(503);
  expect(refused.json().error.code).toBe("service_unavailable");

  provider.recover();
  const resumed = await call("POST", `/v1/sessions/${sessionId}/resume`, {
    prompt: "again",
    cwd: WT,
  });
  expect(resumed.status).toBe(201);
  await drained();
  const events = (await call("GET", `/v1/sessions/${sessionId}/events?format=json`)).json();
  expect(
    events.filter((e: { type: string }) => e.type === "result").map((e: { text: string }) =>
      e.text
    ),
  )
    .toEqual(["echo: one", "echo: again"]);
  expect(events.find((e: { type: string }) => e.type === "error")).toMatchObject({
    code: "app_server_crashed",
  });
});
