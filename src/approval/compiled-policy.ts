/**
 * A merged policy made ready for the hot path: regexes compiled (deny/ask ones also into one
 * alternation each), globs compiled, version hash computed.
 */
import { createHash } from "node:crypto";
import picomatch from "picomatch";
import type { CommandAnalysis, ShellAnalyzer } from "./analyzer.ts";
import type { MergedPolicy, PolicyDecision, RuleKind } from "./policy-schema.ts";
import { type CompiledRegex, compileRegex, RegexSet } from "./regex.ts";

export interface CompiledCommandRule {
  id: string;
  kind: RuleKind;
  /** The policy file the rule was written in (differs from the policy under `extends`). */
  from: string;
  reason?: string;
  prefix?: string[];
  regex?: CompiledRegex;
}

export interface CompiledPolicy {
  readonly name: string;
  /** sha256 of the merged, normalized content; 12 hex digits. */
  readonly version: string;
  readonly file?: string;
  readonly merged: MergedPolicy;
  readonly rules: Readonly<Record<RuleKind, readonly CompiledCommandRule[]>>;
  readonly denyRegexes: RegexSet<CompiledCommandRule>;
  readonly askRegexes: RegexSet<CompiledCommandRule>;
  readonly fileDeny: (relativePath: string) => boolean;
}

export function compilePolicy(merged: MergedPolicy, file?: string): CompiledPolicy {
  const rules = {} as Record<RuleKind, CompiledCommandRule[]>;
  for (const kind of ["deny", "allow", "ask"] as const) {
    rules[kind] = merged.commands[kind].map((r) => ({
      id: r.id,
      kind,
      from: r.from,
      reason: r.reason,
      prefix: r.prefix,
      regex: r.regex === undefined ? undefined : compileRegex(r.regex),
    }));
  }
  const regexSet = (list: CompiledCommandRule[]) =>
    new RegexSet(
      list.filter((r) => r.regex !== undefined).map((r) => ({ regex: r.regex!, value: r })),
    );
  const globs = merged.files.deny;
  const fileDeny = globs.length === 0 ? () => false : picomatch(globs, { dot: true });
  return {
    name: merged.name,
    version: policyVersion(merged),
    file,
    merged,
    rules,
    denyRegexes: regexSet(rules.deny),
    askRegexes: regexSet(rules.ask),
    fileDeny,
  };
}

export function policyVersion(merged: MergedPolicy): string {
  return createHash("sha256").update(stableJson(merged)).digest("hex").slice(0, 12);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Does a deny or ask rule hit the command line? A prefix hits when any simple command starts
 * with it; a regex when it is found anywhere in the raw line (it sees what the analyzer could not).
 */
export function searchRuleMatches(
  rule: CompiledCommandRule,
  line: string,
  analysis: CommandAnalysis,
  analyzer: ShellAnalyzer,
): boolean {
  if (rule.regex !== undefined) return rule.regex.test(line);
  const prefix = rule.prefix!;
  return analysis.commands.some((c) => analyzer.matchesPrefix(c, prefix));
}

/** Does an allow rule accept this one simple command? A regex must match its whole text. */
export function allowRuleAccepts(
  rule: CompiledCommandRule,
  command: CommandAnalysis["commands"][number],
  analyzer: ShellAnalyzer,
): boolean {
  if (rule.regex !== undefined) return rule.regex.testExact(command.text);
  return analyzer.matchesPrefix(command, rule.prefix!);
}

/** An allow rule accepts a line when the line is analysable and every simple command passes. */
export function allowRuleAcceptsLine(
  rule: CompiledCommandRule,
  analysis: CommandAnalysis,
  analyzer: ShellAnalyzer,
): boolean {
  return analysis.unanalyzable === undefined && analysis.commands.length > 0 &&
    analysis.commands.every((c) => allowRuleAccepts(rule, c, analyzer));
}

export type { PolicyDecision };
