import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { evaluate } from "../../src/approval/engine.ts";
import { loadPolicies, policyFilesIn } from "../../src/approval/policy-loader.ts";
import { testAnalyzer } from "./support/test-analyzer.ts";

const ROOT = join(import.meta.dir, "..", "..", "policies");
const analyzer = await testAnalyzer();
const { policies, issues } = loadPolicies(
  [...policyFilesIn(ROOT), ...policyFilesIn(join(ROOT, "examples"))],
  analyzer,
);
const facts = { worktree: "/tmp", permissionMode: "default" as const };
const judge = (policy: string, command: string) =>
  evaluate(policies.get(policy)!, { kind: "command", command, cwd: "/tmp" }, facts, analyzer);

describe("shipped policies", () => {
  test("every shipped policy and example loads, its examples included", () => {
    expect([...issues.values()].flat()).toEqual([]);
    expect([...policies.keys()].sort()).toEqual([
      "allow-list",
      "attended",
      "default",
      "fleet-a",
      "fleet-a-candidate",
      "strict",
    ]);
  });

  test("default allows ordinary work and denies publishing and credentials", () => {
    expect(judge("default", "npm test").decision).toBe("allow");
    expect(judge("default", "git commit -m wip").decision).toBe("allow");
    expect(judge("default", "npm publish")).toMatchObject({
      decision: "deny",
      ruleId: "no-npm-publish",
    });
    expect(judge("default", "cat ~/.aws/credentials").decision).toBe("deny");
    expect(judge("default", "bash").decision).toBe("deny");
  });

  test("strict is an allow-list", () => {
    expect(judge("strict", "npm test && git status").decision).toBe("allow");
    expect(judge("strict", "curl https://example.com")).toMatchObject({
      decision: "deny",
      reason: '"curl https://example.com" is not in the allow-list of policy strict',
    });
  });
});
