/**
 * The production ShellAnalyzer: the tree-sitter analyzer (`./shell/`), the built-in rules
 * (`./builtin-rules.ts`) and flag-aware prefix matching (`./argv-match.ts`), behind an LRU of
 * analyses.
 */
import {
  type BuiltinMatch,
  type BuiltinRuleInfo,
  cachingAnalyzer,
  type CommandAnalysis,
  type RuleContext,
  type ShellAnalyzer,
  type SimpleCommand,
} from "./analyzer.ts";

/** The exports of the shell analyzer modules this file binds together. */
export interface ShellAnalyzerParts {
  initShellParser(): Promise<void>;
  analyzeCommand(command: string): CommandAnalysis;
  matchBuiltin(analysis: CommandAnalysis, context?: RuleContext): BuiltinMatch | undefined;
  matchesPrefix(command: SimpleCommand, prefix: string[]): boolean;
  downloadedFiles?(analysis: CommandAnalysis, context: RuleContext): string[];
  BUILTIN_RULES: readonly BuiltinRuleInfo[];
}

/** Initializes the parser and returns a caching analyzer over the parts. */
export async function shellAnalyzerFrom(parts: ShellAnalyzerParts): Promise<ShellAnalyzer> {
  await parts.initShellParser();
  return cachingAnalyzer({
    analyze: (command) => parts.analyzeCommand(command),
    matchBuiltin: (analysis, context) => parts.matchBuiltin(analysis, context),
    matchesPrefix: (command, prefix) => parts.matchesPrefix(command, prefix),
    ...(parts.downloadedFiles !== undefined && { downloadedFiles: parts.downloadedFiles }),
    builtinRules: parts.BUILTIN_RULES,
  });
}

/**
 * The shell analyzer modules, imported on first use so that loading the CLI for `--help` does
 * not pull in web-tree-sitter.
 */
async function loadParts(): Promise<ShellAnalyzerParts> {
  const [parser, analyze, builtin, argv] = await Promise.all([
    import("./shell/parser.ts"),
    import("./shell/analyze.ts"),
    import("./builtin-rules.ts"),
    import("./argv-match.ts"),
  ]);
  return {
    initShellParser: parser.initShellParser,
    analyzeCommand: analyze.analyzeCommand,
    matchBuiltin: builtin.matchBuiltin,
    matchesPrefix: argv.matchesPrefix,
    downloadedFiles: builtin.downloadedFiles,
    BUILTIN_RULES: builtin.BUILTIN_RULES,
  };
}

let ready: Promise<ShellAnalyzer> | undefined;

/** The shared production analyzer; the parser is initialized once. */
export function defaultShellAnalyzer(): Promise<ShellAnalyzer> {
  ready ??= loadParts().then(shellAnalyzerFrom).catch((error) => {
    ready = undefined;
    throw error;
  });
  return ready;
}
