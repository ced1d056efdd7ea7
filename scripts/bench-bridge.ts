// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * `bun scripts/bench-bridge.ts [--quick]`: the approval bridge's hot path, timed (the tests only
 * check what it decides: test/approval/hot-path.test.ts). Targets: ≥ 100,000 decisions/s on
 * ordinary commands under the default policy; a 100 KB command against 500 regex rules declined in
 * under 10 ms; a 16 KB command matching the last of 500 regex rules in under 100 ms. Prints a
 * summary and, on its last line, JSON; exits 1 when a target is missed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cachingAnalyzer } from "../src/approval/analyzer.ts";
import { ApprovalBridge } from "../src/approval/bridge.ts";
import {
  ADVERSARIAL_LAST_MATCH,
  HOT_PATH_CONTEXT,
  ORDINARY_COMMANDS,
} from "../test/approval/support/hot-path.ts";
import { adversarialPolicy } from "../test/approval/support/policies.ts";
import { storeWith } from "../test/approval/support/store.ts";
import { testAnalyzer } from "../test/approval/support/test-analyzer.ts";

const quick = process.argv.includes("--quick");
const analyzer = cachingAnalyzer(await testAnalyzer());
const ctx = HOT_PATH_CONTEXT;

async function ordinaryPerSecond(): Promise<number> {
  const text = readFileSync(join(import.meta.dir, "..", "policies", "default.yaml"), "utf8");
  using env = storeWith({ default: text }, analyzer);
  const bridge = new ApprovalBridge(env.store);
  const n = quick ? 10_000 : 50_000;
  const next = (i: number) => ORDINARY_COMMANDS[i % ORDINARY_COMMANDS.length];
  for (let i = 0; i < 1000; i++) {
    await bridge.decide({ kind: "command", command: next(i), cwd: "/tmp" }, ctx);
  }
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    await bridge.decide({ kind: "command", command: next(i), cwd: "/tmp" }, ctx);
  }
  return Math.round(n / ((performance.now() - start) / 1000));
}

/** The best of 5 runs, in ms, of one decision under the adversarial policy. */
function bestMs(command: string): number {
  using env = storeWith({ adversarial: adversarialPolicy() }, analyzer);
  const bridge = new ApprovalBridge(env.store);
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    // decide() computes allow/deny synchronously; only the promise wrapping is async.
    void bridge.decide({ kind: "command", command, cwd: "/tmp" }, {
      ...ctx,
      policy: "adversarial",
    });
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const figures = {
  ordinaryDecisionsPerSecond: await ordinaryPerSecond(),
  adversarial100KbMs: bestMs(`echo ${"a b c d e f g h ".repeat(12_800)}`),
  adversarialLastMatchMs: bestMs(ADVERSARIAL_LAST_MATCH),
};
const targets = {
  ordinaryDecisionsPerSecond: figures.ordinaryDecisionsPerSecond >= 100_000,
  adversarial100KbMs: figures.adversarial100KbMs < 10,
  adversarialLastMatchMs: figures.adversarialLastMatchMs < 100,
};
console.log(
  `decisions/s (default policy, ordinary commands): ${figures.ordinaryDecisionsPerSecond}` +
    ` (target ≥ 100000: ${targets.ordinaryDecisionsPerSecond ? "met" : "MISSED"})`,
);
console.log(
  `100 KB command, 500 regex rules: ${figures.adversarial100KbMs.toFixed(3)} ms` +
    ` (target < 10: ${targets.adversarial100KbMs ? "met" : "MISSED"})`,
);
console.log(
  `16 KB command, 500 regex rules, last one matches: ${
    figures.adversarialLastMatchMs.toFixed(2)
  } ms (target < 100: ${targets.adversarialLastMatchMs ? "met" : "MISSED"})`,
);
console.log(JSON.stringify({ ...figures, targets }));
process.exit(Object.values(targets).every(Boolean) ? 0 : 1);
