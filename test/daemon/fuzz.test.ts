/**
 * Random and mutated requests across every route (seeded, so a failure reproduces): bad input
 * must never produce a 5xx, an error body is always `{error:{code,message}}`, env values are never
 * echoed, and the app stays healthy afterwards.
 */
import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/daemon/app.ts";
import { FakeService } from "./fake-service.ts";
import {
  checkFuzzResponse,
  CWD,
  fuzzRequest,
  Gen,
  prng,
  VALID_BODIES,
} from "../support/fuzz-requests.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const RUNS = 2500;
const TOKEN = "fuzz-token";

describe("fuzz", () => {
  test(`${RUNS} random and mutated requests: no 5xx, well-formed errors, no secret echoed (seed ${SEED})`, async () => {
    const service = new FakeService();
    const { logger, lines: unexpected } = memoryLogger();
    const app = createApp({ service, token: TOKEN, logger });
    // Two sessions to aim at, so requests reach the service, not only the 404 path.
    for (let i = 0; i < 2; i++) {
      await service.spawn(
        {
          ...VALID_BODIES.spec(),
          permissionMode: "default",
          policy: "default",
          onBusy: "queue",
        } as never,
      );
    }
    service.addPending("s-1", "r-1");
    const g = new Gen(prng(SEED));
    const statuses = new Map<number, number>();
    for (let i = 0; i < RUNS; i++) {
      const { url, init, label } = fuzzRequest(g, {
        base: "http://codexd.test",
        token: TOKEN,
        sessionId: "s-1",
        requestId: "r-1",
      });
      const res = await app.request(url, init);
      await checkFuzzResponse(res, statuses, i, label);
      // Keep sessions around to aim at.
      if (service.sessions.get("s-1")?.info.status === "stopped") {
        await service.resume("s-1", VALID_BODIES.spec() as never);
      }
    }
    expect(unexpected).toEqual([]);
    // The mix reached the handlers, not only the validators.
    for (const status of [200, 201, 202, 400, 401, 404, 405, 409, 415]) {
      expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
    }

    const health = await app.request("/v1/health");
    expect(await health.json()).toMatchObject({ status: "ok" });
    const spawned = await app.request("/v1/sessions", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "after the storm", cwd: CWD }),
    });
    expect(spawned.status).toBe(201);
  });
});
