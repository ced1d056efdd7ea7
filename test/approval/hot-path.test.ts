/**
 * The hot path decides right: ordinary commands under the default policy the same way every
 * time (the analyzer's cache changes nothing), a 100 KB command against 500 regex rules declined
 * unparsed, a 16 KB one caught by the last rule. How fast is a benchmark's question:
 * `bun scripts/bench-bridge.ts` (timing on a shared CI machine proves nothing either way).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cachingAnalyzer } from "../../src/approval/analyzer.ts";
import { ApprovalBridge } from "../../src/approval/bridge.ts";
import { ADVERSARIAL_LAST_MATCH, HOT_PATH_CONTEXT, ORDINARY_COMMANDS } from "./support/hot-path.ts";
import { adversarialPolicy } from "./support/policies.ts";
import { storeWith } from "./support/store.ts";
import { testAnalyzer } from "./support/test-analyzer.ts";

const analyzer = cachingAnalyzer(await testAnalyzer());
const ctx = HOT_PATH_CONTEXT;

describe("the approval hot path", () => {
  test("ordinary commands under the default policy: one decision each, the same every time", async () => {
    const text = readFileSync(
      join(import.meta.dir, "..", "..", "policies", "default.yaml"),
      "utf8",
    );
    using env = storeWith({ default: text }, analyzer);
    const bridge = new ApprovalBridge(env.store);
    const decide = async (command: string) => {
      const v = await bridge.decide({ kind: "command", command, cwd: "/tmp" }, ctx);
      return { decision: v.decision, ruleId: v.ruleId };
    };
    const first = new Map<string, unknown>();
    for (const command of ORDINARY_COMMANDS) first.set(command, await decide(command));
    // None is declined as unanalysable or by a built-in rule: they are what agents run.
    for (const [command, verdict] of first) {
      expect({ command, verdict }).toEqual({
        command,
        verdict: expect.objectContaining({ decision: expect.stringMatching(/^(allow|ask)$/) }),
      });
    }
    // Many rounds later (cached analyses), every command still gets its first decision.
    for (let round = 0; round < 200; round++) {
      for (const command of ORDINARY_COMMANDS) {
        if (round % 50 === 0) expect(await decide(command)).toEqual(first.get(command) as never);
        else await decide(command);
      }
    }
  });

  test("a 100 KB command against 500 regex rules is declined unparsed", async () => {
    using env = storeWith({ adversarial: adversarialPolicy() }, analyzer);
    const command = `echo ${"a b c d e f g h ".repeat(12_800)}`;
    expect(command.length).toBeGreaterThan(100_000);
    const verdict = await new ApprovalBridge(env.store).decide(
      { kind: "command", command, cwd: "/tmp" },
      { ...ctx, policy: "adversarial" },
    );
    expect(verdict).toMatchObject({ decision: "deny", ruleId: "unanalyzable" });
  });

  test("a command at maxCommandLength against 500 regex rules is caught by the last", async () => {
    using env = storeWith({ adversarial: adversarialPolicy() }, analyzer);
    expect(ADVERSARIAL_LAST_MATCH.length).toBe(16_384);
    const verdict = await new ApprovalBridge(env.store).decide(
      { kind: "command", command: ADVERSARIAL_LAST_MATCH, cwd: "/tmp" },
      { ...ctx, policy: "adversarial" },
    );
    expect(verdict).toMatchObject({ decision: "deny", ruleId: "r499" });
  });
});
