/** The JSON log writes an Error whole (not `{}`), and the HTTP layer's 500s go to it. */
import { afterEach, expect, test } from "bun:test";
import { createApp } from "../src/daemon/app.ts";
import { createLogger, formatLogLine, serializeError } from "../src/log.ts";
import { createDaemonMetrics } from "../src/daemon/metrics.ts";
import { ConnectionClosed } from "../src/errors.ts";
import { FakeService } from "./daemon/fake-service.ts";

const realWrite = process.stderr.write;
afterEach(() => {
  process.stderr.write = realWrite;
});

/** Runs `fn` with stderr captured; returns what was written. */
async function captureStderr(fn: () => Promise<unknown>): Promise<string> {
  let written = "";
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = realWrite;
  }
  return written;
}

test("an Error in the data is written with name, message, stack, code and its cause", () => {
  const root = new Error("EPIPE: broken pipe");
  const error = new ConnectionClosed("codex closed its stdout", root);
  const line = JSON.parse(formatLogLine("error", "stopping sessions failed", { error }));
  expect(line).toMatchObject({
    level: "error",
    message: "stopping sessions failed",
    data: {
      error: {
        name: "ConnectionClosed",
        message: "codex closed its stdout",
        code: "connection_closed",
        stack: expect.stringContaining("ConnectionClosed: codex closed its stdout"),
        cause: {
          name: "Error",
          message: "EPIPE: broken pipe",
          stack: expect.stringContaining("EPIPE"),
        },
      },
    },
  });
  expect(typeof line.time).toBe("string");
  // What JSON.stringify alone makes of it: no message, no stack, no cause.
  expect(JSON.stringify({ error })).not.toContain("codex closed its stdout");
});

test("a cause that is no Error is kept as it is; a cycle of causes ends", () => {
  expect(serializeError(new Error("x", { cause: { status: 7 } })).cause).toEqual({ status: 7 });
  const a = new Error("a");
  const b = new Error("b", { cause: a });
  (a as { cause?: unknown }).cause = b;
  expect(() => formatLogLine("error", "cycle", { error: a })).not.toThrow();
});

test("an unexpected 500 goes to the JSON log with the whole error", async () => {
  const service = new FakeService();
  service.get = () => Promise.reject(new TypeError("x is not a function"));
  const app = createApp({ service, token: "t0ken-for-test", metrics: createDaemonMetrics() });
  let status = 0;
  const written = await captureStderr(async () => {
    const res = await app.request("/v1/sessions/ses_x", {
      headers: { authorization: "Bearer t0ken-for-test" },
    });
    status = res.status;
  });
  expect(status).toBe(500);
  const lines = written.trim().split("\n").map((l) => JSON.parse(l));
  expect(lines).toEqual([
    expect.objectContaining({
      level: "error",
      message: "Unexpected error in GET /v1/sessions/ses_x",
      data: {
        error: expect.objectContaining({
          name: "TypeError",
          message: "x is not a function",
          stack: expect.stringContaining("TypeError"),
        }),
      },
    }),
  ]);
});

test("a logger writes its level and above; a child adds its context to each line", () => {
  const lines: string[] = [];
  const time = new Date("2026-01-02T03:04:05.000Z");
  const logger = createLogger({ level: "info", write: (l) => lines.push(l), now: () => time });
  logger.debug("not written");
  logger.info("started", { port: 7420 });
  const turn = logger.child({ sessionId: "ses_1", threadId: "thr_1" }).child({ turnId: "t1" });
  turn.warn("slow");
  turn.log("error", "failed", { error: new Error("boom") });
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    { level: "info", time: time.toISOString(), message: "started", data: { port: 7420 } },
    {
      level: "warn",
      time: time.toISOString(),
      message: "slow",
      sessionId: "ses_1",
      threadId: "thr_1",
      turnId: "t1",
    },
    {
      level: "error",
      time: time.toISOString(),
      message: "failed",
      sessionId: "ses_1",
      threadId: "thr_1",
      turnId: "t1",
      data: { error: expect.objectContaining({ name: "Error", message: "boom" }) },
    },
  ]);
  // The fixed keys come first, so a line reads the same whatever the context.
  expect(lines[1]).toStartWith(`{"level":"warn","time":"${time.toISOString()}","message":"slow"`);
});

test("context never replaces a line's level, time or message", () => {
  const lines: string[] = [];
  const logger = createLogger({ write: (l) => lines.push(l) })
    .child({ level: "debug", message: "forged", time: "never", sessionId: "ses_2" });
  logger.error("real");
  expect(JSON.parse(lines[0]!)).toMatchObject({
    level: "error",
    message: "real",
    sessionId: "ses_2",
  });
  expect(JSON.parse(lines[0]!).time).not.toBe("never");
});
