import { expect, test } from "bun:test";
import { ProviderUnavailable } from "../../../src/errors.ts";
import { CodexSupervisor } from "../../../src/provider/codex/supervisor.ts";
import type { CodexProvider } from "../../../src/provider/codex/provider.ts";

/** A provider stand-in whose child can be "killed" by the test. */
class FakeProvider {
  state: "ready" | "crashed" | "stopped" = "ready";
  readonly version = "0.169.0";
  #listeners: Array<(reason: string) => void> = [];
  constructor(readonly pid: number) {}
  onCrashed(listener: (reason: string) => void) {
    this.#listeners.push(listener);
  }
  crash() {
    this.state = "crashed";
    for (const listener of this.#listeners) listener("SIGKILL");
  }
  stderrTail() {
    return [];
  }
  shutdown() {
    this.state = "stopped";
    return Promise.resolve();
  }
}

function harness(failFirst: number) {
  let clock = 0;
  const timers: Array<{ at: number; fn: () => void }> = [];
  const providers: FakeProvider[] = [];
  let attempts = 0;
  const supervisor = new CodexSupervisor({
    startProvider: () => {
      attempts++;
      if (attempts <= failFirst) {
        return Promise.reject(new ProviderUnavailable("Cannot start codex: exited with code 3"));
      }
      const provider = new FakeProvider(1000 + attempts);
      providers.push(provider);
      return Promise.resolve(provider as unknown as CodexProvider);
    },
    now: () => clock,
    setTimer: (fn, ms) => {
      const timer = { at: clock + ms, fn };
      timers.push(timer);
      return { cancel: () => timers.splice(timers.indexOf(timer), 1) };
    },
  });
  /** Advances the clock to the next timer and fires it; returns the delay it waited. */
  const fireNext = async () => {
    const timer = timers.shift()!;
    const waited = timer.at - clock;
    clock = timer.at;
    timer.fn();
    await Promise.resolve();
    await Promise.resolve();
    return waited;
  };
  return {
    supervisor,
    providers,
    fireNext,
    timers,
    advance: (ms: number) => (clock += ms),
    attempts: () => attempts,
  };
}

test("a binary that keeps failing backs off 0.5 s doubling to 30 s and reports degraded", async () => {
  const h = harness(Infinity);
  await h.supervisor.start();
  expect(h.supervisor.status()).toMatchObject({
    state: "degraded",
    lastError: "Cannot start codex: exited with code 3",
  });
  expect(h.supervisor.provider).toBeUndefined();
  const delays = [];
  for (let i = 0; i < 9; i++) delays.push(await h.fireNext());
  expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  expect(h.attempts()).toBe(10);
});

test("after a crash a new child starts; 60 s healthy resets the backoff", async () => {
  const h = harness(0);
  await h.supervisor.start();
  expect(h.supervisor.status()).toMatchObject({ state: "ready", pid: 1001, restarts: 0 });
  h.providers[0]!.crash();
  expect(h.supervisor.status().state).toBe("degraded");
  expect(await h.fireNext()).toBe(500);
  expect(h.supervisor.status()).toMatchObject({ state: "ready", pid: 1002, restarts: 1 });
  h.providers[1]!.crash(); // crashed again at once: the backoff grows
  expect(await h.fireNext()).toBe(1000);
  h.advance(60_000);
  h.providers[2]!.crash(); // this one was healthy for 60 s: back to 0.5 s
  expect(await h.fireNext()).toBe(500);
  expect(h.supervisor.status().restarts).toBe(3);
});

test("stop cancels a pending restart and shuts the provider down", async () => {
  const h = harness(0);
  await h.supervisor.start();
  h.providers[0]!.crash();
  expect(h.timers).toHaveLength(1);
  await h.supervisor.stop();
  expect(h.timers).toHaveLength(0);
  expect(h.supervisor.status().state).toBe("stopped");
});
