/**
 * What the policy engine needs from the shell analyzer (`./shell/`, `./builtin-rules.ts`,
 * `./argv-match.ts`, written separately). The engine takes it as a value so that it stays a
 * pure function over strings and tests can exercise the decision order on their own.
 */

export interface SimpleCommand {
  /** Normalized: launchers stripped, basename, unquoted, git global options skipped. */
  argv: string[];
  rawArgv: string[];
  text: string;
  pipedFrom?: string[];
  inSubstitution?: boolean;
}

export interface CommandAnalysis {
  commands: SimpleCommand[];
  unanalyzable?: { reason: string };
  interactive?: { program: string };
}

export interface BuiltinMatch {
  ruleId: string;
  reason: string;
  command?: SimpleCommand;
}

export interface BuiltinRuleInfo {
  id: string;
  reason: string;
  description?: string;
}

export interface ShellAnalyzer {
  analyze(command: string): CommandAnalysis;
  matchBuiltin(analysis: CommandAnalysis): BuiltinMatch | undefined;
  /** Flag-aware argv prefix match. */
  matchesPrefix(command: SimpleCommand, prefix: string[]): boolean;
  readonly builtinRules: readonly BuiltinRuleInfo[];
}

/**
 * Caches analyses of identical command strings: fleets repeat the same few commands, and the
 * parse dominates a decision. A Map keeps insertion order, which is all an LRU needs.
 */
export function cachingAnalyzer(inner: ShellAnalyzer, capacity = 2048): ShellAnalyzer {
  const cache = new Map<string, CommandAnalysis>();
  // Long strings are rare and would pin memory; they are analysed every time.
  const maxKeyLength = 4096;
  return {
    builtinRules: inner.builtinRules,
    matchBuiltin: (a) => inner.matchBuiltin(a),
    matchesPrefix: (c, p) => inner.matchesPrefix(c, p),
    analyze(command) {
      if (command.length > maxKeyLength) return inner.analyze(command);
      const hit = cache.get(command);
      if (hit !== undefined) {
        cache.delete(command);
        cache.set(command, hit);
        return hit;
      }
      const analysis = inner.analyze(command);
      cache.set(command, analysis);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
      return analysis;
    },
  };
}
