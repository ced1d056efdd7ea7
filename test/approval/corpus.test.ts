// deno-lint-ignore-file no-console -- prints the corpus scores beside the assertions
/**
 * The command corpus through the real engine, the real analyzer and the shipped default
 * policy: every case bare and wrapped as codex and people wrap commands. Rates and timings
 * are printed; only the rates are asserted. No corpus command is ever executed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { evaluate } from "../../src/approval/engine.ts";
import { loadPolicies } from "../../src/approval/policy-loader.ts";
import { defaultShellAnalyzer } from "../../src/approval/shell-analyzer.ts";
import { type CorpusCase, type CorpusName, loadCorpus, wrappings } from "../corpus/cases.ts";

const analyzer = await defaultShellAnalyzer();
const { policies, issues } = loadPolicies(
  [join(import.meta.dir, "..", "..", "policies", "default.yaml")],
  analyzer,
);
const policy = policies.get("default")!;
const facts = { worktree: "/work/wt", permissionMode: "default" as const };

interface Outcome {
  case: CorpusCase;
  wrapper: string;
  command: string;
  decision: string;
  ruleId?: string;
  unanalyzable: boolean;
  ms: number;
}

function judgeAll(name: CorpusName): Outcome[] {
  const out: Outcome[] = [];
  for (const c of loadCorpus(name)) {
    for (const w of wrappings(c.command)) {
      const start = performance.now();
      const d = evaluate(
        policy,
        { kind: "command", command: w.command, cwd: "/work/wt" },
        facts,
        analyzer,
      );
      const ms = performance.now() - start;
      out.push({
        case: c,
        wrapper: w.wrapper,
        command: w.command,
        decision: d.decision,
        ruleId: d.ruleId,
        unanalyzable: analyzer.analyze(w.command).unanalyzable !== undefined,
        ms,
      });
    }
  }
  return out;
}

const rate = (part: number, all: number) => `${(100 * part / all).toFixed(2)} %`;
const describeMiss = (o: Outcome) =>
  `${o.wrapper}: ${
    JSON.stringify(o.case.command)
  } → ${o.decision} (${o.ruleId}), expected ${o.case.decision} (${o.case.rule})`;

function report(name: CorpusName, outcomes: Outcome[]): { declined: number; total: number } {
  const declined = outcomes.filter((o) => o.decision === "deny").length;
  const unanalyzable = outcomes.filter((o) => o.unanalyzable).length;
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const p99 = times[Math.min(times.length - 1, Math.floor(times.length * 0.99))];
  console.log(
    `corpus ${name}: ${outcomes.length / 4} cases × 4 wrappings = ${outcomes.length}; declined ${
      rate(declined, outcomes.length)
    }; unanalysable ${rate(unanalyzable, outcomes.length)}; p99 decision ${p99.toFixed(3)} ms`,
  );
  return { declined, total: outcomes.length };
}

describe("command corpus under the default policy", () => {
  test("the default policy loads with the real analyzer", () => {
    expect([...issues.values()].flat()).toEqual([]);
  });

  test("corpora have the required sizes", () => {
    expect(loadCorpus("dangerous").length).toBeGreaterThanOrEqual(200);
    expect(loadCorpus("disguised").length).toBeGreaterThanOrEqual(250);
    expect(loadCorpus("benign").length).toBeGreaterThanOrEqual(300);
    expect(loadCorpus("benign").filter((c) => c.nearMiss).length).toBeGreaterThanOrEqual(50);
  });

  test("every canonical dangerous command is declined by its rule, bare and wrapped", () => {
    const outcomes = judgeAll("dangerous");
    report("dangerous", outcomes);
    const misses = outcomes.filter((o) => o.decision !== "deny" || o.ruleId !== o.case.rule);
    expect(misses.map(describeMiss)).toEqual([]);
  });

  test("at least 95 % of disguised commands are declined, each by its expected rule", () => {
    const outcomes = judgeAll("disguised");
    const { declined, total } = report("disguised", outcomes);
    const slipped = outcomes.filter((o) => o.decision !== "deny");
    if (slipped.length > 0) {
      console.log(`disguised, not declined:\n${slipped.map(describeMiss).join("\n")}`);
    }
    expect(declined / total).toBeGreaterThanOrEqual(0.95);
    const wrongRule = outcomes.filter((o) => o.decision === "deny" && o.ruleId !== o.case.rule);
    expect(wrongRule.map(describeMiss)).toEqual([]);
  });

  test("at most 1 % of benign commands are declined and no near miss is", () => {
    const outcomes = judgeAll("benign");
    const { declined, total } = report("benign", outcomes);
    const denied = outcomes.filter((o) => o.decision === "deny");
    if (denied.length > 0) console.log(`benign, declined:\n${denied.map(describeMiss).join("\n")}`);
    expect(declined / total).toBeLessThanOrEqual(0.01);
    expect(denied.filter((o) => o.case.nearMiss).map(describeMiss)).toEqual([]);
    const unexpected = outcomes.filter((o) =>
      o.decision !== "deny" && o.decision !== o.case.decision
    );
    expect(unexpected.map(describeMiss)).toEqual([]);
  });
});

// The family-tagged corpora (issue #11), written by attacking the analyzer; every evasion is
// proven harmful by `bun scripts/prove-corpus.ts`. `bun scripts/score-corpus.ts` prints per family.
const ISSUE_FAMILIES = new Set([
  "parser",
  "dynamic",
  "targets",
  "git",
  "launchers",
  "inline-code",
  "strings",
  "download",
]);

describe("family-tagged corpora", () => {
  test("evasions and benign-agent load, are family-tagged and have the required sizes", () => {
    const evasions = loadCorpus("evasions");
    const benign = loadCorpus("benign-agent");
    expect(evasions.length).toBeGreaterThanOrEqual(250);
    expect(benign.length).toBeGreaterThanOrEqual(200);
    expect([...evasions, ...benign].filter((c) => c.family === undefined)).toEqual([]);
    expect(evasions.filter((c) => c.decision !== "deny" || c.proof === undefined)).toEqual([]);
    expect(benign.filter((c) => c.decision !== "allow")).toEqual([]);
  });

  test("evasions: ≥ 98 % of the issue's eight families and ≥ 93 % of all declined", () => {
    const outcomes = judgeAll("evasions");
    report("evasions", outcomes);
    const allowed = outcomes.filter((o) => o.decision === "allow");
    if (allowed.length > 0) {
      console.log(`evasions, allowed:\n${allowed.map(describeMiss).join("\n")}`);
    }
    const issue = outcomes.filter((o) => ISSUE_FAMILIES.has(o.case.family ?? ""));
    const declined = (list: Outcome[]) => list.filter((o) => o.decision !== "allow").length;
    expect(declined(issue) / issue.length).toBeGreaterThanOrEqual(0.98);
    expect(declined(outcomes) / outcomes.length).toBeGreaterThanOrEqual(0.93);
  });

  test("benign-agent: ≤ 3 % declined, none outside the near misses", () => {
    const outcomes = judgeAll("benign-agent");
    const { declined, total } = report("benign-agent", outcomes);
    const denied = outcomes.filter((o) => o.decision !== "allow");
    if (denied.length > 0) {
      console.log(`benign-agent, declined:\n${denied.map(describeMiss).join("\n")}`);
    }
    expect(declined / total).toBeLessThanOrEqual(0.03);
    expect(denied.filter((o) => o.case.family !== "near-miss").map(describeMiss)).toEqual([]);
  });
});
