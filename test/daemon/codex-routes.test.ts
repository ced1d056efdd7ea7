/**
 * The pool's HTTP surface on a fake service (no codex): `POST /v1/codex/restart` through the typed
 * client and raw, and what authenticated health adds (children, capacity). The real rolling
 * restart is in pool.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { CodexdApiError, CodexdClient } from "../../src/client.ts";
import { createApp } from "../../src/daemon/app.ts";
import { ConfigError } from "../../src/daemon/config.ts";
import type { ChildInfo } from "../../src/provider/codex/pool.ts";
import { FakeService } from "./fake-service.ts";
import { silentLogger } from "../../src/log.ts";

const CHILDREN: ChildInfo[] = [
  {
    id: 0,
    pid: 101,
    state: "ready",
    sessions: 2,
    rssBytes: 80 << 20,
    version: "0.169.0",
    restarts: 0,
  },
  {
    id: 3,
    pid: 102,
    state: "draining",
    sessions: 1,
    rssBytes: null,
    version: "0.169.0",
    restarts: 1,
  },
];

function setup(restart: () => Promise<unknown> = () => Promise.resolve()) {
  const service = new FakeService();
  const restarts: number[] = [];
  const app = createApp({
    service,
    token: "tok",
    limits: { maxLiveSessions: 10 },
    logger: silentLogger,
    codex: {
      children: () => CHILDREN,
      restart: () => {
        restarts.push(restarts.length);
        return restart();
      },
    },
  });
  const client = new CodexdClient({
    baseUrl: "http://codexd.test/",
    token: "tok",
    fetch: (input, init) => app.request(input, init),
  });
  return { service, app, client, restarts };
}

describe("POST /v1/codex/restart", () => {
  test("starts a rolling restart and answers 202 at once (the client's restartCodex)", async () => {
    let finish!: () => void;
    const { client, restarts } = setup(() => new Promise<void>((resolve) => (finish = resolve)));
    await client.restartCodex(); // answered while the restart still runs
    expect(restarts).toEqual([0]);
    finish();
  });

  test("needs the token", async () => {
    const { app, restarts } = setup();
    const res = await app.request("/v1/codex/restart", { method: "POST" });
    expect(res.status).toBe(401);
    expect(restarts).toEqual([]);
  });

  test("a config that does not load is a 400 naming it; nothing is restarted", async () => {
    const { client } = setup(() => {
      throw new ConfigError("codexd.jsonc:3:13: codex.bin: Invalid input");
    });
    const error = await client.restartCodex().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CodexdApiError);
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toContain("codex.bin: Invalid input");
  });

  test("without a pool it is 503", async () => {
    const app = createApp({ service: new FakeService(), token: "tok", logger: silentLogger });
    const res = await app.request("/v1/codex/restart", {
      method: "POST",
      headers: { authorization: "Bearer tok" },
    });
    expect(res.status).toBe(503);
  });

  test("is in the OpenAPI document, with its 202 body", async () => {
    const { client } = setup();
    const paths = (await client.openapi()).paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths["/v1/codex/restart"] ?? {})).toEqual(["post"]);
    expect(JSON.stringify(paths["/v1/codex/restart"])).toContain("CodexRestartAccepted");
  });
});

describe("GET /v1/health with the token", () => {
  test("reports the children and the capacity; without the token only {status}", async () => {
    const { app, client } = setup();
    const health = await client.health();
    expect(health.codex.children).toEqual(CHILDREN);
    expect(health.capacity).toEqual({ liveSessions: 0, maxLiveSessions: 10, freeSlots: 10 });
    const open = await (await app.request("/v1/health")).json();
    expect(open).toEqual({ status: "ok" });
  });

  test("no free slots while codex is down", async () => {
    const { service, client } = setup();
    service.down = true;
    expect((await client.health()).capacity).toMatchObject({ freeSlots: 0 });
  });
});
