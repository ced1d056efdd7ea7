import { afterAll, describe, expect, test } from "bun:test";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import type { ApprovalContext } from "../../src/provider/types.ts";
import { ManualClock } from "./support/policies.ts";
import { fakeAnalyzer } from "./support/fake-analyzer.ts";
import { storeWith } from "./support/store.ts";

const env = storeWith({
  fleet: `
version: 1
name: fleet
default: allow
askTimeout: 30s
commands:
  deny: [{ id: no-publish, prefix: [npm, publish] }]
  ask: [{ id: ask-push, prefix: [git, push], reason: pushes leave the machine }]
`,
  candidate: `
version: 1
name: candidate
mode: shadow
shadows: fleet
extends: [fleet]
commands:
  deny: [{ id: no-curl, prefix: [curl] }]
`,
});
afterAll(() => env[Symbol.dispose]());

let next = 0;
const ctx = (over: Partial<ApprovalContext> = {}): ApprovalContext => ({
  requestId: `r${++next}`,
  sessionId: "s1",
  threadId: "t1",
  worktree: "/tmp",
  policy: "fleet",
  permissionMode: "default",
  ...over,
});
const cmd = (command: string) => ({ kind: "command" as const, command, cwd: "/tmp" });

describe("ApprovalBridge", () => {
  test("allow and deny carry source, rule and policy version", async () => {
    const bridge = new ApprovalBridge(env.store);
    const version = env.store.get("fleet").version;
    expect(await bridge.decide(cmd("ls"), ctx())).toMatchObject({
      decision: "allow",
      source: "default",
      policyVersion: version,
    });
    expect(await bridge.decide(cmd("npm publish"), ctx())).toMatchObject({
      decision: "deny",
      ruleId: "no-publish",
      source: "policy:fleet",
    });
  });

  test("an ask is held, listed, and declined when its timeout runs out", async () => {
    const clock = new ManualClock();
    const bridge = new ApprovalBridge(env.store, { clock });
    const context = ctx();
    let settled = false;
    const verdict = bridge.decide(cmd("git push origin main"), context).finally(() => {
      settled = true;
    });
    const [pending] = bridge.pending("s1");
    expect(pending).toMatchObject({
      requestId: context.requestId,
      sessionId: "s1",
      request: { kind: "command", command: "git push origin main" },
      ruleId: "ask-push",
      since: "2026-01-01T00:00:00.000Z",
      deadline: "2026-01-01T00:00:30.000Z",
    });
    expect(bridge.pending("other")).toEqual([]);
    clock.advance(29_999);
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advance(1);
    expect(await verdict).toMatchObject({
      decision: "deny",
      source: "timeout",
      ruleId: "ask-push",
    });
    expect(bridge.pending()).toEqual([]);
    expect(bridge.answer(context.requestId, "allow")).toBe(false);
  });

  test("a person answers a held ask", async () => {
    const clock = new ManualClock();
    const bridge = new ApprovalBridge(env.store, { clock });
    const context = ctx();
    const verdict = bridge.decide(cmd("git push"), context);
    expect(bridge.answer(context.requestId, "allow", { by: "alice" })).toBe(true);
    const v = await verdict;
    expect(v).toMatchObject({ decision: "allow", source: "person", ruleId: "ask-push" });
    expect(v.reason).toStartWith("allowed by alice");
    expect(clock.activeTimers).toBe(0);
    expect(bridge.answer(context.requestId, "deny")).toBe(false);
  });

  test("a person can deny", async () => {
    const bridge = new ApprovalBridge(env.store, { clock: new ManualClock() });
    const context = ctx();
    const verdict = bridge.decide(cmd("git push"), context);
    bridge.answer(context.requestId, "deny");
    expect(await verdict).toMatchObject({ decision: "deny", source: "person" });
  });

  test("the request's AbortSignal declines a held ask", async () => {
    const clock = new ManualClock();
    const bridge = new ApprovalBridge(env.store, { clock });
    const abort = new AbortController();
    const verdict = bridge.decide(cmd("git push"), ctx({ signal: abort.signal }));
    abort.abort();
    expect(await verdict).toMatchObject({ decision: "deny", source: "cancelled" });
    expect(bridge.pending()).toEqual([]);
    expect(clock.activeTimers).toBe(0);
  });

  test("an already aborted signal declines at once", async () => {
    const bridge = new ApprovalBridge(env.store, { clock: new ManualClock() });
    const verdict = await bridge.decide(cmd("git push"), ctx({ signal: AbortSignal.abort() }));
    expect(verdict).toMatchObject({ decision: "deny", source: "cancelled" });
  });

  test("an unknown policy declines with a clear reason", async () => {
    const bridge = new ApprovalBridge(env.store);
    const v = await bridge.decide(cmd("ls"), ctx({ policy: "nope" }));
    expect(v.decision).toBe("deny");
    expect(v.reason).toStartWith("Unknown policy nope");
  });

  test("a shadow policy adds a policy.shadow event where it would decide differently", async () => {
    const bridge = new ApprovalBridge(env.store);
    const differs = await bridge.decide(cmd("curl https://x"), ctx());
    expect(differs.decision).toBe("allow");
    expect(differs.extraEvents).toEqual([
      expect.objectContaining({
        type: "policy.shadow",
        policy: "candidate",
        shadow: expect.objectContaining({ decision: "deny", ruleId: "no-curl" }),
        actual: expect.objectContaining({ policy: "fleet", decision: "allow" }),
      }),
    ]);
    const same = await bridge.decide(cmd("npm publish"), ctx());
    expect(same.extraEvents).toBeUndefined();
  });

  test("a shadow policy decides nothing for sessions", async () => {
    const bridge = new ApprovalBridge(env.store);
    const v = await bridge.decide(cmd("ls"), ctx({ policy: "candidate" }));
    expect(v).toMatchObject({ decision: "deny" });
    expect(v.reason).toContain("shadow of fleet");
  });
});

describe("ApprovalBridge and reloads", () => {
  test("a reload applies to the next decision at once", async () => {
    using local = storeWith({ f: "version: 1\nname: f\ndefault: allow\n" });
    const bridge = new ApprovalBridge(local.store);
    const context = { ...ctx(), policy: "f" };
    expect((await bridge.decide(cmd("make"), context)).decision).toBe("allow");
    local.tmp.write("f.yaml", "version: 1\nname: f\ndefault: deny\n");
    local.store.reload();
    const after = await bridge.decide(cmd("make"), { ...context, requestId: "r-after" });
    expect(after).toMatchObject({ decision: "deny", policyVersion: local.store.get("f").version });
  });

  test("spec defaultDecision ask holds the request like an ask rule", async () => {
    const clock = new ManualClock();
    const bridge = new ApprovalBridge(env.store, { clock });
    const context = ctx({
      permissionConfig: { allowPatterns: [], disallowPatterns: [], defaultDecision: "ask" },
    });
    const verdict = bridge.decide(cmd("make build"), context);
    expect(bridge.pending().map((p) => p.ruleId)).toEqual(["spec.defaultDecision"]);
    clock.advance(30_000);
    expect(await verdict).toMatchObject({ decision: "deny", source: "timeout" });
  });
});

describe("ApprovalBridge fails closed", () => {
  test("an analyzer that throws declines the request", async () => {
    const throwing = {
      ...fakeAnalyzer,
      analyze(): never {
        throw new Error("parser crashed");
      },
    };
    using local = storeWith({ f: "version: 1\nname: f\ndefault: allow\n" }, throwing);
    const v = await new ApprovalBridge(local.store).decide(cmd("ls"), { ...ctx(), policy: "f" });
    expect(v).toMatchObject({ decision: "deny", ruleId: "engine-error" });
    expect(v.reason).toBe("Cannot judge the request: parser crashed");
  });
});
