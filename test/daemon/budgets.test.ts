/**
 * Token budgets without codex: the rolling-window arithmetic, the counting of a response's
 * usage, the thresholds (80 % once per crossing, 100 %), persistence through the store, and
 * the policy's `budgets:` validation with file:line:col errors.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { formatIssue } from "../../src/approval/policy-errors.ts";
import { loadPolicies } from "../../src/approval/policy-loader.ts";
import { POLICY_DEFAULTS } from "../../src/approval/policy-schema.ts";
import {
  BudgetExceeded,
  type BudgetLimits,
  Budgets,
  checkSpecBudget,
  countedTokens,
  DAY_MS,
  HOUR_MS,
  RollingWindow,
  sessionCap,
} from "../../src/daemon/budgets.ts";
import { Store } from "../../src/daemon/store.ts";
import { Spec } from "../../src/provider/spec.ts";
import { fakeAnalyzer } from "../approval/support/fake-analyzer.ts";
import { tempDir } from "../approval/support/policies.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const MIN = 60_000;

const limits = (over: Partial<BudgetLimits> = {}): BudgetLimits => ({
  ...POLICY_DEFAULTS.budgets,
  ...over,
});

describe("RollingWindow", () => {
  test("holds what was spent in (now - span, now], and forgets it exactly a span later", () => {
    const w = new RollingWindow(HOUR_MS);
    w.add(T0, 100);
    w.add(T0 + 10 * MIN, 50);
    expect(w.total(T0 + 10 * MIN)).toBe(150);
    expect(w.total(T0 + HOUR_MS - 1)).toBe(150);
    expect(w.total(T0 + HOUR_MS)).toBe(50); // the first entry is now exactly an hour old
    expect(w.total(T0 + 70 * MIN)).toBe(0);
    w.add(T0 + 80 * MIN, 7);
    expect(w.total(T0 + 80 * MIN)).toBe(7);
  });

  test("reopensAt: when enough of the oldest spend has left for the total to be under the cap", () => {
    const w = new RollingWindow(HOUR_MS);
    w.add(T0, 600);
    w.add(T0 + 5 * MIN, 300);
    w.add(T0 + 20 * MIN, 300); // 1200 in all
    const now = T0 + 30 * MIN;
    // Under 1000 once the 600 left (T0 + 1 h): 600 remain.
    expect(w.reopensAt(1000, now)).toBe(T0 + HOUR_MS);
    // Under 400 only once the 300 of T0+5m left too: 300 remain.
    expect(w.reopensAt(400, now)).toBe(T0 + 5 * MIN + HOUR_MS);
    // Under 100: everything must leave.
    expect(w.reopensAt(100, now)).toBe(T0 + 20 * MIN + HOUR_MS);
    // Room now: now.
    expect(w.reopensAt(5000, now)).toBe(now);
    // A cap of exactly the total is spent (spend >= cap), not room.
    expect(w.reopensAt(1200, now)).toBe(T0 + HOUR_MS);
  });

  test("a clock that went back keeps spend in the window longer, never shorter", () => {
    const w = new RollingWindow(HOUR_MS);
    w.add(T0 + 10 * MIN, 100);
    w.add(T0, 50); // taken as T0 + 10 min
    expect(w.total(T0 + HOUR_MS + 5 * MIN)).toBe(150);
    expect(w.total(T0 + HOUR_MS + 10 * MIN)).toBe(0);
  });

  test("many entries: compaction keeps the sums right", () => {
    const w = new RollingWindow(HOUR_MS);
    for (let i = 0; i < 10_000; i++) w.add(T0 + i * 1000, 1);
    // At T0 + 10000 s the window holds the entries of the last 3600 s.
    const now = T0 + 10_000 * 1000;
    expect(w.total(now)).toBe(3599);
    expect(w.total(now + HOUR_MS)).toBe(0);
    w.add(now + HOUR_MS, 5);
    expect(w.total(now + HOUR_MS)).toBe(5);
  });
});

describe("counting and caps", () => {
  const usage = {
    inputTokens: 1000,
    cachedInputTokens: 800,
    outputTokens: 50,
    reasoningTokens: 30,
  };

  test("input + output; cached input as the policy says; reasoning is inside output", () => {
    expect(countedTokens(usage, true)).toBe(1050);
    expect(countedTokens(usage, false)).toBe(250);
  });

  test("a session's cap: the spec's budget within the policy's, else the policy's", () => {
    expect(sessionCap(limits(), undefined)).toBeNull();
    expect(sessionCap(limits(), 500)).toBe(500);
    expect(sessionCap(limits({ sessionTokens: 1000 }), undefined)).toBe(1000);
    expect(sessionCap(limits({ sessionTokens: 1000 }), 500)).toBe(500);
  });

  test("a spec's budget.tokens above the policy's sessionTokens is a 400 naming budget.tokens", () => {
    const spec = Spec.parse({
      prompt: "x",
      cwd: "/tmp",
      policy: "capped",
      budget: { tokens: 5000 },
    });
    expect(() => checkSpecBudget("spawn session", spec, limits({ sessionTokens: 5000 }))).not
      .toThrow();
    expect(() => checkSpecBudget("spawn session", spec, limits())).not.toThrow();
    let error: unknown;
    try {
      checkSpecBudget("spawn session", spec, limits({ sessionTokens: 4000 }));
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      code: "invalid_input",
      field: "budget.tokens",
      issues: [{ path: "budget.tokens", rule: "budget.max" }],
    });
    expect(() => Spec.parse({ prompt: "x", cwd: "/tmp", budget: { tokens: 0 } })).toThrow();
    expect(() => Spec.parse({ prompt: "x", cwd: "/tmp", budget: { tokens: 10, x: 1 } })).toThrow();
  });
});

describe("Budgets", () => {
  function budgets(store: Store, clock: { now: number }) {
    return new Budgets({ store, now: () => clock.now });
  }

  test("80 % warns once per crossing, 100 % exhausts; a window that rolls under warns again", () => {
    using store = Store.open(":memory:");
    const clock = { now: T0 };
    const b = budgets(store, clock);
    const caps = limits({ fleetTokensPerHour: 1000 });
    expect(b.record("f", "s1", 700, caps).warnings).toEqual([]);
    clock.now += 10 * MIN;
    const warned = b.record("f", "s1", 150, caps); // 850: crosses 800
    expect(warned.warnings).toEqual([
      { scope: "hour", fleet: "f", budget: 1000, spend: 850, reopensAt: null },
    ]);
    expect(warned.exhausted).toEqual([]);
    expect(b.record("f", "s2", 100, caps).warnings).toEqual([]); // 950: already past 80 %
    const over = b.record("f", "s2", 100, caps); // 1050
    expect(over.crossed.map((r) => r.scope)).toEqual(["hour"]);
    expect(over.exhausted).toEqual([{
      scope: "hour",
      fleet: "f",
      budget: 1000,
      spend: 1050,
      reopensAt: new Date(T0 + HOUR_MS).toISOString(), // the 700 leaves: 350 remain
    }]);
    // Later spend while spent: exhausted again, but no new crossing.
    const more = b.record("f", "s2", 10, caps);
    expect(more.crossed).toEqual([]);
    expect(more.exhausted).toHaveLength(1);
    // A new session of the fleet is refused until the window reopens.
    expect(b.exhausted("f", undefined, caps).map((r) => r.scope)).toEqual(["hour"]);
    clock.now = T0 + HOUR_MS;
    expect(b.exhausted("f", undefined, caps)).toEqual([]);
    expect(b.usage("f", caps).lastHour).toEqual({ tokens: 360, budget: 1000, reopensAt: null });
    // 360 → 850 crosses 80 % again: a new warning for the new window.
    expect(b.record("f", "s3", 490, caps).warnings).toHaveLength(1);
  });

  test("a session's cap counts its whole life; other fleets and sessions are apart", () => {
    using store = Store.open(":memory:");
    const clock = { now: T0 };
    const b = budgets(store, clock);
    const caps = limits({ sessionTokens: 100 });
    b.record("f", "s1", 60, caps);
    b.record("g", "s2", 500, caps);
    clock.now += 2 * DAY_MS; // no window for a session's cap
    const out = b.record("f", "s1", 50, caps);
    expect(out.exhausted).toEqual([
      { scope: "session", fleet: "f", budget: 100, spend: 110, reopensAt: null },
    ]);
    expect(b.exhausted("f", "s1", caps)).toHaveLength(1);
    // A spec may not go above the policy's cap; under a policy without one, its own cap holds.
    expect(b.exhausted("f", "s1", caps, 200)).toHaveLength(1);
    expect(b.exhausted("f", "s1", limits(), 100)).toHaveLength(1);
    expect(b.exhausted("f", "s1", limits(), 200)).toEqual([]); // a larger budget: room again
    expect(b.exhausted("f", "other", caps)).toEqual([]);
  });

  test("the binding refusal: a session's own cap first, then the window reopening last", () => {
    using store = Store.open(":memory:");
    const clock = { now: T0 };
    const b = budgets(store, clock);
    const caps = limits({ fleetTokensPerHour: 100, fleetTokensPerDay: 150 });
    b.record("f", "s1", 90, caps);
    clock.now += 2 * HOUR_MS;
    b.record("f", "s1", 100, caps); // hour: 100 (spent), day: 190 (spent)
    const [binding] = b.exhausted("f", undefined, caps);
    expect(binding).toMatchObject({ scope: "day", reopensAt: new Date(T0 + DAY_MS).toISOString() });
    const refusal = new BudgetExceeded("spawn session", binding!, clock.now);
    expect(refusal.retryAfter).toBe((DAY_MS - 2 * HOUR_MS) / 1000);
    expect(refusal.details).toMatchObject({ scope: "day", budget: 150, spend: 190 });
    expect(refusal.message).toContain("fleet f spent 190 tokens in the last 24 hours");
    const withSession = b.exhausted("f", "s1", { ...caps, sessionTokens: 150 });
    expect(withSession.map((r) => r.scope)).toEqual(["session", "day", "hour"]);
    expect(new BudgetExceeded("send a turn", withSession[0]!, clock.now, "s1").retryAfter)
      .toBeNull();
  });

  test("a report counts what its thread's total grew by: repeats and resume replays add nothing", () => {
    using dir = tempDir("codexd-budgets-");
    const file = `${dir.dir}/codexd.db`;
    const u = (input: number, output: number, cached = 0) => ({
      inputTokens: input,
      cachedInputTokens: cached,
      outputTokens: output,
      reasoningTokens: 0,
    });
    const report = (last: ReturnType<typeof u>, total: ReturnType<typeof u>) => ({
      ...last,
      total,
    });
    const clock = { now: T0 };
    {
      using store = Store.open(file);
      const b = budgets(store, clock);
      // The thread's first report: its response.
      expect(b.newTokens("s", "th1", report(u(300, 100), u(300, 100)), true)).toBe(400);
      expect(b.newTokens("s", "th1", report(u(500, 50, 200), u(800, 150, 200)), true)).toBe(550);
      // Cached input left out: the growth of input - cached + output.
      expect(b.newTokens("s", "th1", report(u(100, 10, 60), u(900, 160, 260)), false)).toBe(50);
      // codex repeats the report (only rate limits changed): nothing new.
      expect(b.newTokens("s", "th1", report(u(100, 10, 60), u(900, 160, 260)), true)).toBe(0);
      // Without a total (an older codex): the response as reported.
      expect(b.newTokens("s", "th1", u(7, 3), true)).toBe(10);
      store.flush();
    }
    {
      // After a restart, the resumed thread's replayed last report adds nothing; the next does.
      using store = Store.open(file);
      const b = budgets(store, clock);
      expect(b.newTokens("s", "th1", report(u(100, 10, 60), u(900, 160, 260)), true)).toBe(0);
      expect(b.newTokens("s", "th1", report(u(40, 5), u(940, 165, 260)), true)).toBe(45);
      // A re-seeded session runs on a new thread: its first report counts its response.
      expect(b.newTokens("s", "th2", report(u(20, 2), u(20, 2)), true)).toBe(22);
      // A total that went down: codex counts afresh; the response is what is known.
      expect(b.newTokens("s", "th2", report(u(6, 1), u(6, 1)), true)).toBe(7);
      // Other sessions are apart.
      expect(b.newTokens("t", "th2", report(u(20, 2), u(20, 2)), true)).toBe(22);
    }
  });

  test("spend survives reopening the database; the ledger keeps only the last 24 hours", () => {
    using dir = tempDir("codexd-budgets-");
    const file = `${dir.dir}/codexd.db`;
    const clock = { now: T0 };
    const caps = limits({ fleetTokensPerHour: 1000, fleetTokensPerDay: 5000 });
    {
      using store = Store.open(file);
      const b = budgets(store, clock);
      b.record("f", "s1", 400, caps);
      clock.now += 30 * MIN;
      b.record("f", "s1", 300, caps);
      store.flush();
    }
    {
      using store = Store.open(file);
      const b = budgets(store, clock);
      expect(b.usage("f", caps)).toEqual({
        lastHour: { tokens: 700, budget: 1000, reopensAt: null },
        lastDay: { tokens: 700, budget: 5000, reopensAt: null },
      });
      expect(b.sessionSpend("s1")).toBe(700);
      expect(b.fleetsWithSpend()).toEqual(["f"]);
    }
    clock.now += DAY_MS;
    {
      using store = Store.open(file);
      const b = budgets(store, clock);
      expect(b.usage("f", caps).lastDay.tokens).toBe(0);
      expect(store.spendSince(0)).toEqual([]); // pruned
      expect(b.sessionSpend("s1")).toBe(700); // a session's total is kept
    }
  });
});

describe("policy budgets", () => {
  const tmp = tempDir();
  afterAll(() => tmp[Symbol.dispose]());

  function load(name: string, text: string, siblings: Record<string, string> = {}) {
    for (const [n, t] of Object.entries(siblings)) tmp.write(`${n}.yaml`, t);
    const file = tmp.write(`${name}.yaml`, text);
    const { policies, issues } = loadPolicies([file], fakeAnalyzer);
    return {
      budgets: policies.get(name)?.merged.budgets,
      problems: (issues.get(name) ?? []).map((i) => formatIssue(i).slice(tmp.dir.length + 1)),
    };
  }

  test("absent: no caps, cached input counted", () => {
    expect(load("plain", "version: 1\nname: plain\n").budgets).toEqual({
      sessionTokens: null,
      fleetTokensPerHour: null,
      fleetTokensPerDay: null,
      countCachedInput: true,
    });
  });

  test("set, unlimited, and merged along extends (unlimited overrides a base's cap)", () => {
    const base = "version: 1\nname: base\nbudgets:\n  sessionTokens: 1000\n" +
      "  fleetTokensPerHour: 5000\n  fleetTokensPerDay: 20000\n  countCachedInput: false\n";
    const child = "version: 1\nname: child\nextends: [base]\nbudgets:\n" +
      "  fleetTokensPerHour: unlimited\n  sessionTokens: 2000\n";
    expect(load("child", child, { base }).budgets).toEqual({
      sessionTokens: 2000,
      fleetTokensPerHour: null,
      fleetTokensPerDay: 20000,
      countCachedInput: false,
    });
  });

  test("errors name file:line:col and the key", () => {
    expect(load("neg", "version: 1\nname: neg\nbudgets:\n  sessionTokens: -5\n").problems).toEqual([
      "neg.yaml:4:18: budgets.sessionTokens: must be a positive whole number of tokens or unlimited",
    ]);
    expect(
      load("frac", "version: 1\nname: frac\nbudgets:\n  fleetTokensPerDay: 1.5\n").problems,
    ).toEqual([
      "frac.yaml:4:22: budgets.fleetTokensPerDay: must be a positive whole number of tokens or unlimited",
    ]);
    expect(load("typo", "version: 1\nname: typo\nbudgets:\n  sessionToken: 5\n").problems)
      .toEqual(["typo.yaml:4:3: budgets.sessionToken: unknown key sessionToken"]);
    expect(
      load("flag", "version: 1\nname: flag\nbudgets:\n  countCachedInput: sometimes\n").problems[0],
    ).toStartWith("flag.yaml:4:21: budgets.countCachedInput:");
    expect(
      load(
        "upside",
        "version: 1\nname: upside\nbudgets:\n  fleetTokensPerHour: 500\n  fleetTokensPerDay: 100\n",
      ).problems,
    ).toEqual([
      "upside.yaml:4:23: budgets.fleetTokensPerHour: 500 is more than fleetTokensPerDay 100: " +
      "the hourly cap could never bind",
    ]);
  });
});
