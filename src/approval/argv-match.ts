/**
 * Flag-aware argv prefix matching for policy `prefix` rules. `[rm, -rf]` matches `rm -fr x`,
 * `rm -r -f x`, `rm x --recursive --force`; `[git, push, --force]` matches `git -C d push -f`
 * and `git push --forc` where that abbreviation is unique. Words that are not options
 * (subcommands, operands) must match in order from the start.
 */
import type { SimpleCommand } from "./analyzer.ts";
import { skipGitGlobals } from "./shell/git.ts";
import { parseArgs, type ParsedOption } from "./shell/options.ts";
import { basename } from "./shell/programs.ts";
import { optionSpec } from "./shell/specs.ts";

function optionCovered(wanted: ParsedOption, have: readonly ParsedOption[]): boolean {
  return have.some((o) =>
    o.name === wanted.name && (wanted.value === undefined || o.value === wanted.value)
  );
}

export function matchesPrefix(command: SimpleCommand, prefix: string[]): boolean {
  const argv = command.argv;
  if (prefix.length === 0 || argv.length === 0) return false;
  const program = basename(argv[0]);
  if (basename(prefix[0]) !== program) return false;
  let args = argv.slice(1);
  let wanted = prefix.slice(1);
  if (program === "git") {
    args = skipGitGlobals(args);
    wanted = skipGitGlobals(wanted);
  }
  if (wanted.length === 0) return true;
  const spec = optionSpec(program, args);
  const have = parseArgs(args, spec);
  const want = parseArgs(wanted, program === "git" ? optionSpec(program, wanted) : spec);
  if (want.operands.length > have.operands.length) return false;
  if (!want.operands.every((w, i) => have.operands[i] === w)) return false;
  return want.options.every((o) => optionCovered(o, have.options));
}
