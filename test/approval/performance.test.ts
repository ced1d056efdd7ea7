// deno-lint-ignore-file no-console -- prints the measured rate (to become a benchmark)
/**
 * The hot path: the targets are ≥ 100,000 decisions/s on ordinary commands with the default
 * policy, and a 100 KB command against 500 regex rules in under 10 ms. The assertions leave
 * headroom for a loaded 2-core CI machine; the measured numbers are printed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cachingAnalyzer } from "../../src/approval/analyzer.ts";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import type { ApprovalContext } from "../../src/provider/types.ts";
import { adversarialPolicy } from "./support/policies.ts";
import { storeWith } from "./support/store.ts";
import { testAnalyzer } from "./support/test-analyzer.ts";
import { readFileSync } from "node:fs";

const analyzer = cachingAnalyzer(await testAnalyzer());
const ctx: ApprovalContext = {
  requestId: "r",
  sessionId: "s",
  threadId: "t",
  worktree: "/tmp",
  policy: "default",
  permissionMode: "default",
};
const ORDINARY = [
  "npm test",
  "git status",
  "git diff --stat",
  "ls -la src",
  "cat package.json",
  "npm run build && npm test",
  "grep -rn TODO src | head -20",
  "bun test test/approval",
  "git log --oneline -10",
  "tsc --noEmit",
];

describe("performance", () => {
  test("ordinary commands under the default policy", async () => {
    const text = readFileSync(
      join(import.meta.dir, "..", "..", "policies", "default.yaml"),
      "utf8",
    );
    using env = storeWith({ default: text }, analyzer);
    const bridge = new ApprovalBridge(env.store);
    const n = 50_000;
    for (let i = 0; i < 1000; i++) {
      await bridge.decide({ kind: "command", command: ORDINARY[i % 10], cwd: "/tmp" }, ctx);
    }
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      await bridge.decide({ kind: "command", command: ORDINARY[i % 10], cwd: "/tmp" }, ctx);
    }
    const perSecond = Math.round(n / ((performance.now() - start) / 1000));
    console.log(`decisions/s (default policy, ordinary commands): ${perSecond}`);
    expect(perSecond).toBeGreaterThan(30_000);
  });

  const timed = (bridge: ApprovalBridge, command: string) => {
    let best = Infinity;
    let verdict;
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      // decide() computes allow/deny synchronously; only the promise wrapping is async.
      verdict = bridge.decide({ kind: "command", command, cwd: "/tmp" }, {
        ...ctx,
        policy: "adversarial",
      });
      best = Math.min(best, performance.now() - start);
    }
    return { best, verdict: verdict! };
  };

  test("a 100 KB command against 500 regex rules is declined unparsed", async () => {
    using env = storeWith({ adversarial: adversarialPolicy() }, analyzer);
    const command = `echo ${"a b c d e f g h ".repeat(12_800)}`;
    expect(command.length).toBeGreaterThan(100_000);
    const { best, verdict } = timed(new ApprovalBridge(env.store), command);
    console.log(`100 KB command, 500 regex rules: ${best.toFixed(3)} ms`);
    expect(await verdict).toMatchObject({ decision: "deny", ruleId: "unanalyzable" });
    expect(best).toBeLessThan(10);
  });

  test("a command at maxCommandLength against 500 regex rules, matching the last", async () => {
    using env = storeWith({ adversarial: adversarialPolicy() }, analyzer);
    const tail = " host499.example.com";
    const command = `echo ${"a b c d e f g h ".repeat(1024)}`.slice(0, 16_384 - tail.length) + tail;
    const { best, verdict } = timed(new ApprovalBridge(env.store), command);
    console.log(`16 KB command, 500 regex rules, last one matches: ${best.toFixed(2)} ms`);
    expect(await verdict).toMatchObject({ decision: "deny", ruleId: "r499" });
    expect(best).toBeLessThan(100);
  });
});
