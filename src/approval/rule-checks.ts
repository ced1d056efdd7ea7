/**
 * Load-time checks of one command rule: the regex compiles, the rule is not so broad it admits
 * anything, it does not touch the built-in rules, and its `match` / `notMatch` examples hold.
 */
import type { ShellAnalyzer } from "./analyzer.ts";
import { broadAllowReason } from "./broad-allow.ts";
import { allowRuleAcceptsLine, searchRuleMatches } from "./compiled-policy.ts";
import type { PolicyIssue } from "./policy-errors.ts";
import type { CommandRule, RuleKind } from "./policy-schema.ts";
import { compileRegex } from "./regex.ts";

export type RulePath = ReadonlyArray<string | number>;
type Path = RulePath;

export function reservedId(id: string, analyzer: ShellAnalyzer): boolean {
  return id.startsWith("builtin.") || analyzer.builtinRules.some((b) => b.id === id);
}

export function reservedMessage(id: string): string {
  return `rule id ${id} is reserved: built-in safety rules cannot be removed, reordered or overridden`;
}

/** Compiles the regex and runs the examples of one rule. */
export function checkRule(
  rule: CommandRule,
  kind: RuleKind,
  path: Path,
  analyzer: ShellAnalyzer,
  issue: (path: Path, message: string) => PolicyIssue,
): PolicyIssue[] {
  if (rule.id !== undefined && reservedId(rule.id, analyzer)) {
    return [issue([...path, "id"], reservedMessage(rule.id))];
  }
  let compiled;
  try {
    compiled = {
      id: rule.id ?? "example",
      kind,
      from: "",
      prefix: rule.prefix,
      regex: rule.regex === undefined ? undefined : compileRegex(rule.regex),
    };
  } catch (error) {
    return [issue([...path, "regex"], error instanceof Error ? error.message : String(error))];
  }
  if (kind === "allow") {
    const broad = broadAllowReason(rule, compiled.regex);
    if (broad !== undefined) {
      return [issue([...path, rule.prefix ? "prefix" : "regex"], `allow rule refused: ${broad}`)];
    }
    if (rule.prefix !== undefined) {
      const builtin = analyzer.matchBuiltin(
        analyzer.analyze(rule.prefix.map(shellQuote).join(" ")),
      );
      if (builtin !== undefined) {
        return [
          issue(
            [...path, "prefix"],
            `allow rule names what built-in rule ${builtin.ruleId} denies; built-in rules cannot be overridden`,
          ),
        ];
      }
    }
  }
  const issues: PolicyIssue[] = [];
  const hits = (example: string) => {
    const analysis = analyzer.analyze(example);
    return kind === "allow"
      ? allowRuleAcceptsLine(compiled, analysis, analyzer)
      : searchRuleMatches(compiled, example, analysis, analyzer);
  };
  (rule.match ?? []).forEach((example, i) => {
    if (kind === "allow") {
      const builtin = analyzer.matchBuiltin(analyzer.analyze(example));
      if (builtin !== undefined) {
        issues.push(
          issue(
            [...path, "match", i],
            `example ${
              JSON.stringify(example)
            } is denied by built-in rule ${builtin.ruleId}; built-in rules cannot be overridden`,
          ),
        );
        return;
      }
    }
    if (!hits(example)) {
      issues.push(
        issue([...path, "match", i], `example ${JSON.stringify(example)} does not match the rule`),
      );
    }
  });
  (rule.notMatch ?? []).forEach((example, i) => {
    if (hits(example)) {
      issues.push(
        issue([...path, "notMatch", i], `example ${JSON.stringify(example)} matches the rule`),
      );
    }
  });
  return issues;
}

export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
