/**
 * CodexPool with stand-in providers (no codex; an injected clock and timers): status with one
 * child is that child's supervisor's, placement, a rolling restart whose new child does not
 * start, recycling by memory, a draining child that dies, and nesting sessions that start at
 * once. The real codex: pool.test.ts.
 */
import { expect, test } from "bun:test";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { InvalidInput, ProviderUnavailable } from "../../../src/errors.ts";
import { CodexPool } from "../../../src/provider/codex/pool.ts";
import { CodexSupervisor } from "../../../src/provider/codex/supervisor.ts";
import type { CodexProvider } from "../../../src/provider/codex/provider.ts";
import type { Spec } from "../../../src/provider/spec.ts";

class FakeProvider {
  state: "ready" | "crashed" | "stopped" = "ready";
  readonly version = "0.169.0";
  readonly handles = new Map<string, { sessionId: string; threadId: string; spec: Spec }>();
  readonly #crash: Array<(reason: string) => void> = [];
  readonly #empty: Array<() => void> = [];
  /** While set, a spawn waits for it before its session exists (codex starting the thread). */
  gate: Promise<void> | undefined;
  constructor(readonly pid: number) {}
  get sessions() {
    return this.handles.size;
  }
  onCrashed(listener: (reason: string) => void) {
    this.#crash.push(listener);
  }
  onSessionIdle() {}
  opened(threadId: string) {
    return [...this.handles.values()].some((h) => h.threadId === threadId);
  }
  loadedThreads() {
    return Promise.resolve([...this.handles.values()].map((h) => h.threadId));
  }
  whenEmpty() {
    if (this.handles.size === 0 || this.state !== "ready") return Promise.resolve();
    return new Promise<void>((resolve) => this.#empty.push(resolve));
  }
  capabilities() {
    return {};
  }
  plan() {
    return Promise.resolve({ codex: {}, ignoredFields: [] });
  }
  liveHandles() {
    return this.handles.values();
  }
  async spawnPlanned(spec: Spec, _plan: unknown, options: { sessionId?: string } = {}) {
    await this.gate;
    const id = options.sessionId ?? `s${this.handles.size}`;
    const handle = { sessionId: id, threadId: `t-${id}`, spec };
    this.handles.set(id, handle);
    return handle;
  }
  crash() {
    this.state = "crashed";
    for (const listener of this.#crash) listener("SIGKILL");
    for (const resolve of this.#empty.splice(0)) resolve();
  }
  stderrTail() {
    return [];
  }
  shutdown() {
    this.state = "stopped";
    return Promise.resolve();
  }
}

function harness(size: number, options: { rss?: number } = {}) {
  const timers: Array<() => void> = [];
  const providers: FakeProvider[] = [];
  let failNext = 0;
  const pool = new CodexPool({
    size,
    startProvider: () => {
      if (failNext > 0) {
        failNext--;
        return Promise.reject(new ProviderUnavailable("Cannot start codex: bad binary"));
      }
      const provider = new FakeProvider(1000 + providers.length);
      providers.push(provider);
      return Promise.resolve(provider as unknown as CodexProvider);
    },
    now: () => 0,
    setTimer: (fn) => {
      timers.push(fn);
      return { cancel: () => void timers.splice(timers.indexOf(fn), 1) };
    },
    recycle: { maxRssBytes: 100, intervalMs: 0 },
    readRss: (pid) => pid === 1000 ? options.rss : 10,
  });
  return { pool, providers, timers, failNextStarts: (n: number) => (failNext = n) };
}

const SPEC = { cwd: "/w", prompt: "p", policy: "default" } as unknown as Spec;

test("with one child, status is that child's supervisor's, plus the children", async () => {
  const h = harness(1);
  await h.pool.start();
  const alone = new CodexSupervisor({
    startProvider: () => Promise.resolve(new FakeProvider(1000) as unknown as CodexProvider),
  });
  await alone.start();
  const { children, ...status } = h.pool.status();
  expect(status).toEqual(alone.status());
  expect(children).toEqual([
    {
      id: 0,
      pid: 1000,
      state: "ready",
      sessions: 0,
      rssBytes: null,
      version: "0.169.0",
      restarts: 0,
    },
  ]);
});

test("sessions go to the least-loaded child", async () => {
  const h = harness(3);
  await h.pool.start();
  for (let i = 0; i < 7; i++) await (await h.pool.plan(SPEC)).spawn({ sessionId: `s${i}` });
  expect(h.providers.map((p) => p.sessions).sort()).toEqual([2, 2, 3]);
  expect(h.pool.status()).toMatchObject({ state: "ready", restarts: 0 });
});

test("spawns arriving together spread too: a child counts the spawns still starting on it", async () => {
  const h = harness(3);
  await h.pool.start();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  for (const provider of h.providers) provider.gate = gate;
  const plans = await Promise.all(Array.from({ length: 6 }, () => h.pool.plan(SPEC)));
  const spawns = plans.map((plan, i) => plan.spawn({ sessionId: `s${i}` }));
  release();
  await Promise.all(spawns);
  expect(h.providers.map((p) => p.sessions)).toEqual([2, 2, 2]);
});

test("of two sessions planned at once whose cwds nest in different repositories, the second to start is refused", async () => {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), "codexd-pool-nest-")));
  try {
    const repo = path.join(base, "repo");
    await mkdir(path.join(repo, ".git"), { recursive: true });
    const h = harness(1);
    await h.pool.start();
    let release!: () => void;
    h.providers[0]!.gate = new Promise<void>((resolve) => (release = resolve));
    // Neither is live when both are planned: the planning checks pass.
    const outer = await h.pool.plan({ ...SPEC, cwd: base } as Spec);
    const inner = await h.pool.plan({ ...SPEC, cwd: repo } as Spec);
    const first = outer.spawn({ sessionId: "s-outer" });
    const second = inner.spawn({ sessionId: "s-inner" });
    release();
    await expect(second).rejects.toThrow(
      `Cannot start session: ${repo} and the cwd of live session s-outer (${base}) nest`,
    );
    await first;
    expect([...h.providers[0]!.handles.keys()]).toEqual(["s-outer"]);
    // Once live, planning refuses it at once.
    await expect(h.pool.plan({ ...SPEC, cwd: repo } as Spec)).rejects.toBeInstanceOf(InvalidInput);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test("a rolling restart whose new child does not start leaves the old one serving", async () => {
  const h = harness(1);
  await h.pool.start();
  h.failNextStarts(1);
  const report = await h.pool.restart();
  expect(report).toEqual({
    replaced: 0,
    failed: [{ child: 0, error: "Cannot start codex: bad binary" }],
  });
  expect(h.pool.children()).toMatchObject([{ id: 0, pid: 1000, state: "ready" }]);
  expect(h.providers[0].state).toBe("ready");
  expect(() => h.pool.assertAvailable("spawn session")).not.toThrow();
});

test("a child over the memory limit is replaced; new sessions go to the new one", async () => {
  const h = harness(1, { rss: 500 });
  await h.pool.start();
  expect(await h.pool.checkRecycle()).toEqual([0]);
  await Promise.resolve();
  const children = await (async () => {
    for (let i = 0; i < 20 && h.pool.children().some((c) => c.id === 0); i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    return h.pool.children();
  })();
  expect(children).toMatchObject([{ id: 1, pid: 1001, state: "ready" }]);
  expect(h.providers[0].state).toBe("stopped");
  await (await h.pool.plan(SPEC)).spawn({ sessionId: "after" });
  expect(h.providers[1].sessions).toBe(1);
  expect(await h.pool.checkRecycle()).toEqual([]); // the new one is under the limit
});

test("a draining child that dies is not restarted: its replacement already serves", async () => {
  const h = harness(1);
  await h.pool.start();
  await (await h.pool.plan(SPEC)).spawn({ sessionId: "busy" }); // never idle: holds the drain
  const restarting = h.pool.restart();
  for (let i = 0; i < 20 && h.pool.children().length < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(h.pool.children().map((c) => [c.id, c.state])).toEqual([[1, "ready"], [0, "draining"]]);
  h.providers[0].crash();
  expect(await restarting).toEqual({ replaced: 1, failed: [] });
  expect(h.timers).toEqual([]); // no restart scheduled for the dead, draining child
  expect(h.pool.children()).toMatchObject([{ id: 1, state: "ready" }]);
});

test("disposing of the pool stops every child; a second shutdown does nothing more", async () => {
  const h = harness(2);
  await h.pool.start();
  await h.pool[Symbol.asyncDispose]();
  expect(h.providers.map((p) => p.state)).toEqual(["stopped", "stopped"]);
  expect(h.pool.status().state).toBe("stopped");
  await h.pool.shutdown();
  expect(() => h.pool.assertAvailable("spawn session")).toThrow(
    "Cannot spawn session: codex app-server is stopped",
  );
});
