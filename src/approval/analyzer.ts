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
  /** Per argv word: only known at run time (absent when every word is literal). */
  dynamic?: boolean[];
  /** Per argv word: an unquoted expansion that may split into several words. */
  splits?: boolean[];
  /** Where it runs, relative to the session's directory (`..`, `/`, `~`); null: unknown. */
  cwd?: string | null;
  /** Variables set for this command alone (`GIT_CONFIG_COUNT=1 git …`). */
  env?: string[];
  /** xargs appends words read from stdin at run time. */
  appended?: boolean;
  /** Found inside an unknown program's arguments, which may or may not run it. */
  guessed?: boolean;
  /** Files its output redirects write (`$?` for one only known at run time). */
  writes?: string[];
  /** The program as written when it was a path (`./x.sh`). */
  path?: string;
  /** Run by `find -exec` on the paths find walks: as recursive as `-r`. */
  viaFind?: boolean;
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
  /**
   * `deny`: the rule matches. `unanalyzable`: the rule could match, but a word it depends on is
   * only known at run time; the policy's `unanalyzable` setting decides.
   */
  kind?: "deny" | "unanalyzable";
}

/** What the built-in rules know about where a command runs. */
export interface RuleContext {
  /** The session's worktree (absolute); unknown when absent. */
  worktree?: string;
  /** The directory codex runs the command in (absolute); the worktree when absent. */
  cwd?: string;
  /** Files a downloader wrote earlier in this session (absolute paths). */
  tainted?: ReadonlySet<string>;
  /** The real path of an existing path (symlinks followed), when the filesystem can be read. */
  realpath?: (path: string) => string | undefined;
  /** The folder the worktree's `core.hooksPath` names (absolute), read when first asked. */
  hooksDir?: () => string | undefined;
}

export interface BuiltinRuleInfo {
  id: string;
  reason: string;
  description?: string;
}

export interface ShellAnalyzer {
  analyze(command: string): CommandAnalysis;
  matchBuiltin(analysis: CommandAnalysis, context?: RuleContext): BuiltinMatch | undefined;
  /** Flag-aware argv prefix match. */
  matchesPrefix(command: SimpleCommand, prefix: string[]): boolean;
  readonly builtinRules: readonly BuiltinRuleInfo[];
  /** Files the line's downloaders write (absolute), to taint for the rest of the session. */
  downloadedFiles?(analysis: CommandAnalysis, context: RuleContext): string[];
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
    matchBuiltin: (a, c) => inner.matchBuiltin(a, c),
    matchesPrefix: (c, p) => inner.matchesPrefix(c, p),
    ...(inner.downloadedFiles !== undefined &&
      { downloadedFiles: inner.downloadedFiles.bind(inner) }),
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
