// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * Decisions per second of the real engine (tree-sitter analyzer, default policy) over the
 * command corpora, and the worst time for adversarial input: a 100 KB command against a policy
 * of 500 regex rules, once at the default maxCommandLength (declined unparsed) and once with
 * the limit raised so the command is parsed and searched. `bun scripts/bench-policy.ts` prints a
 * readable summary and, on its last line, JSON. Commands are only analysed, never executed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShellAnalyzer } from "../src/approval/analyzer.ts";
import type { CompiledPolicy } from "../src/approval/compiled-policy.ts";
import { evaluate } from "../src/approval/engine.ts";
import { loadPolicies } from "../src/approval/policy-loader.ts";
import { defaultShellAnalyzer } from "../src/approval/shell-analyzer.ts";
import { adversarialPolicy } from "../test/approval/support/policies.ts";
import { loadCorpus, wrappings } from "../test/corpus/cases.ts";

export interface PolicyBenchResult {
  /** Distinct command strings judged (every corpus case bare and in three wrappings). */
  commands: number;
  /** Each string judged for the first time: parse included. */
  coldDecisionsPerSecond: number;
  /** 1000 of them again and again: analyses come from the analyzer's cache. */
  warmDecisionsPerSecond: number;
  coldP99Ms: number;
  /** 100 KB command, 500 regex rules, default maxCommandLength: declined without parsing. */
  adversarialDefaultLimitWorstMs: number;
  /** 100 KB command, 500 regex rules, maxCommandLength 1 MiB: parsed and searched. */
  adversarialParsedWorstMs: number;
}

const ROOT = join(import.meta.dir, "..");
const facts = { worktree: "/work/wt", permissionMode: "default" as const };

function policyFrom(name: string, text: string, analyzer: ShellAnalyzer): CompiledPolicy {
  const dir = mkdtempSync(join(tmpdir(), "codexd-bench-policy-"));
  try {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, text);
    const { policies, issues } = loadPolicies([file], analyzer);
    const policy = policies.get(name);
    if (policy === undefined) {
      throw new Error(`Cannot load ${name}: ${JSON.stringify([...issues])}`);
    }
    return policy;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function worstOf(runs: number, fn: () => void): number {
  let worst = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    worst = Math.max(worst, performance.now() - start);
  }
  return worst;
}

export async function benchPolicy(): Promise<PolicyBenchResult> {
  const analyzer = await defaultShellAnalyzer();
  const { policies } = loadPolicies([join(ROOT, "policies", "default.yaml")], analyzer);
  const policy = policies.get("default")!;
  const commands = [
    ...new Set(
      (["dangerous", "disguised", "benign"] as const)
        .flatMap((name) => loadCorpus(name))
        .flatMap((c) => wrappings(c.command).map((w) => w.command)),
    ),
  ];
  const judge = (p: CompiledPolicy, command: string) =>
    evaluate(p, { kind: "command", command, cwd: facts.worktree }, facts, analyzer);

  const times: number[] = [];
  const coldStart = performance.now();
  for (const command of commands) {
    const start = performance.now();
    judge(policy, command);
    times.push(performance.now() - start);
  }
  const coldSeconds = (performance.now() - coldStart) / 1000;
  times.sort((a, b) => a - b);

  // A working set that fits the analyzer's LRU (2048 entries), as a fleet's repeated commands do.
  const hot = commands.slice(0, 1000);
  const rounds = 50;
  const warmStart = performance.now();
  for (let r = 0; r < rounds; r++) for (const command of hot) judge(policy, command);
  const warmSeconds = (performance.now() - warmStart) / 1000;

  const huge = `echo ${"a b c d e f g h ".repeat(12_800)}`;
  const limited = policyFrom("adversarial", adversarialPolicy(), analyzer);
  const unlimited = policyFrom("adversarial", adversarialPolicy(1_048_576), analyzer);
  return {
    commands: commands.length,
    coldDecisionsPerSecond: Math.round(commands.length / coldSeconds),
    warmDecisionsPerSecond: Math.round((hot.length * rounds) / warmSeconds),
    coldP99Ms: Number(times[Math.floor(times.length * 0.99)].toFixed(3)),
    adversarialDefaultLimitWorstMs: Number(worstOf(5, () => judge(limited, huge)).toFixed(3)),
    adversarialParsedWorstMs: Number(worstOf(3, () => judge(unlimited, huge)).toFixed(3)),
  };
}

if (import.meta.main) {
  const result = await benchPolicy();
  console.log(`policy engine over ${result.commands} corpus commands (default policy):`);
  console.log(`  cold ${result.coldDecisionsPerSecond} decisions/s (p99 ${result.coldP99Ms} ms)`);
  console.log(`  warm ${result.warmDecisionsPerSecond} decisions/s (cached analyses)`);
  console.log(`  100 KB command, 500 regex rules: ${result.adversarialDefaultLimitWorstMs} ms`);
  console.log(`  same, parsed (maxCommandLength 1 MiB): ${result.adversarialParsedWorstMs} ms`);
  console.log(JSON.stringify(result));
}
