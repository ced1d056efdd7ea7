/**
 * Every error code codexd raises answers with its own status and code (src/daemon/app.ts
 * `STATUS_BY_CODE`, typed on `ErrorCode`): none falls through to a 500 `internal`.
 */
import { expect, test } from "bun:test";
import { createApp } from "../../src/daemon/app.ts";
import { STATUS_BY_CODE } from "../../src/daemon/api-errors.ts";
import { createDaemonMetrics } from "../../src/daemon/metrics.ts";
import { StoreCorrupt } from "../../src/daemon/store.ts";
import { CodexdError, type ErrorCode } from "../../src/errors.ts";
import { FakeService } from "./fake-service.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const TOKEN = "test-token-123";

/** The app over a service whose `get` throws `error`; what was logged as unexpected. */
function appThrowing(error: unknown) {
  const service = new FakeService();
  service.get = () => Promise.reject(error);
  const { logger, lines: logged } = memoryLogger();
  const app = createApp({ service, token: TOKEN, metrics: createDaemonMetrics(), logger });
  const get = () =>
    app.request("/v1/sessions/ses_x", { headers: { authorization: `Bearer ${TOKEN}` } });
  return { get, logged };
}

test("each code answers with its mapped status and itself as the code", async () => {
  const codes = Object.keys(STATUS_BY_CODE) as ErrorCode[];
  expect(codes.length).toBeGreaterThan(30);
  for (const code of codes) {
    const { get } = appThrowing(new CodexdError(code, `boom: ${code}`));
    const res = await get();
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect({ code, status: res.status, answered: body.error.code }).toEqual({
      code,
      status: STATUS_BY_CODE[code],
      answered: code,
    });
    expect(body.error.message).toBe(`boom: ${code}`);
  }
});

test("a corrupt store is a 500 that says store_corrupt, not internal", async () => {
  const corrupt = new StoreCorrupt("Cannot read a session row: bad");
  const { get, logged } = appThrowing(corrupt);
  const res = await get();
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({
    error: { code: "store_corrupt", message: "Cannot read a session row: bad" },
  });
  // codexd's own fault: logged with the error itself, like an unexpected one.
  expect(logged).toEqual([expect.objectContaining({
    level: "error",
    message: "store_corrupt in GET /v1/sessions/ses_x",
    data: {
      error: {
        name: "StoreCorrupt",
        message: "Cannot read a session row: bad",
        code: "store_corrupt",
        stack: expect.stringContaining("StoreCorrupt: Cannot read a session row: bad"),
      },
    },
  })]);
});

test("only an error codexd does not know is internal", async () => {
  const { get, logged } = appThrowing(new TypeError("x is not a function"));
  const res = await get();
  expect(res.status).toBe(500);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("internal");
  expect(logged).toHaveLength(1);
  expect(logged[0]!.data!.error).toMatchObject({
    name: "TypeError",
    message: "x is not a function",
  });
});
