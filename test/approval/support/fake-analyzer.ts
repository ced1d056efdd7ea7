/**
 * A small stand-in for the tree-sitter analyzer: enough shell (words, quotes, `&&`, `||`, `;`,
 * `|`) to test the decision order without depending on the real parser's details.
 */
import type {
  BuiltinMatch,
  CommandAnalysis,
  ShellAnalyzer,
  SimpleCommand,
} from "../../../src/approval/analyzer.ts";

const INTERACTIVE = new Set(["bash", "sh", "python", "python3", "node"]);

function words(text: string): string[] | undefined {
  const out: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const m of text.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

export const fakeAnalyzer: ShellAnalyzer = {
  builtinRules: [
    { id: "builtin.rm-root", reason: "deletes the filesystem root or home" },
    { id: "builtin.force-push", reason: "rewrites remote history" },
  ],
  analyze(command: string): CommandAnalysis {
    if (/\$\(|`|^\s*eval\b|^\s*\$/.test(command)) {
      return { commands: [], unanalyzable: { reason: "dynamic command" } };
    }
    if (/['"]/.test(command.replace(/'[^']*'|"[^"]*"/g, ""))) {
      return { commands: [], unanalyzable: { reason: "parse error" } };
    }
    const commands: SimpleCommand[] = [];
    for (const part of command.split(/&&|\|\||;|\|/)) {
      const text = part.trim();
      if (text === "") continue;
      const rawArgv = words(text) ?? [];
      const argv = [rawArgv[0].split("/").pop()!, ...rawArgv.slice(1)];
      // Like the real analyzer, skip git's global options.
      while (argv[0] === "git" && (argv[1] === "-C" || argv[1] === "-c")) argv.splice(1, 2);
      commands.push({ argv, rawArgv, text });
    }
    const first = commands[0];
    if (commands.length === 1 && first.argv.length === 1 && INTERACTIVE.has(first.argv[0])) {
      return { commands, interactive: { program: first.argv[0] } };
    }
    return { commands };
  },
  matchBuiltin(a: CommandAnalysis): BuiltinMatch | undefined {
    for (const c of a.commands) {
      if (
        c.argv[0] === "rm" && c.argv.includes("-rf") && c.argv.some((x) => x === "/" || x === "~")
      ) {
        return {
          ruleId: "builtin.rm-root",
          reason: "deletes the filesystem root or home",
          command: c,
        };
      }
      if (c.argv[0] === "git" && c.argv[1] === "push" && c.argv.includes("--force")) {
        return { ruleId: "builtin.force-push", reason: "rewrites remote history", command: c };
      }
    }
    return undefined;
  },
  matchesPrefix(c: SimpleCommand, prefix: string[]): boolean {
    return prefix.length <= c.argv.length && prefix.every((p, i) => c.argv[i] === p);
  },
};
