/**
 * Refuses allow rules so broad they would admit anything: a shell, an interpreter running inline
 * code, a launcher that runs whatever follows it, or a regex that accepts such commands.
 */
import type { CommandRule } from "./policy-schema.ts";
import { LAUNCHERS } from "./shell/launchers.ts";
import { PRIVILEGE } from "./shell/programs.ts";
import type { CompiledRegex } from "./regex.ts";

const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "fish",
  "csh",
  "tcsh",
  "ash",
  "busybox",
  "pwsh",
  "powershell",
  "cmd",
]);
const INTERPRETERS = new Set([
  "python",
  "python2",
  "python3",
  "node",
  "nodejs",
  "bun",
  "deno",
  "perl",
  "ruby",
  "php",
  "lua",
  "awk",
  "gawk",
  "mawk",
  "tclsh",
  "osascript",
  "Rscript",
  "julia",
  "irb",
  "jshell",
  "npx",
  "bunx",
  "pnpx",
  "uvx",
  "pipx",
]);
/**
 * Programs whose arguments are another command to run: the normalizer's launcher table, the
 * privilege tools, and the builtins that run a string.
 */
const LAUNCHER_NAMES = new Set([
  ...Object.entries(LAUNCHERS).filter(([, spec]) => spec.sub === undefined).map(([name]) => name),
  ...PRIVILEGE,
  "eval",
  "source",
  ".",
  "trap",
  "ssh",
  "gdb",
  "find",
]);
/** Launchers only with a subcommand (`uv run`, `pnpm exec`): their prefix names both words. */
function launcherSubcommand(prefix: readonly string[]): boolean {
  const spec = LAUNCHERS[prefix[0] ?? ""];
  return spec?.sub !== undefined && (spec.sub.length === 0 || spec.sub.includes(prefix[1] ?? ""));
}
/** Tools that are harmless only with a subcommand. */
const NEEDS_SUBCOMMAND = new Set([
  "git",
  "npm",
  "pnpm",
  "yarn",
  "cargo",
  "go",
  "docker",
  "kubectl",
  "make",
  "gh",
]);

/** Commands an allow regex must not accept in full. */
const PROBES = [
  "bash -c x",
  "sh -c x",
  "eval x",
  "python -c x",
  "node -e x",
  "sudo x",
  "env x",
  "xargs x",
  "rm -rf x",
];

export function broadAllowReason(rule: CommandRule, regex?: CompiledRegex): string | undefined {
  if (regex !== undefined) {
    const probe = PROBES.find((p) => regex.testExact(p));
    return probe === undefined
      ? undefined
      : `regex ${JSON.stringify(regex.source)} also accepts ${
        JSON.stringify(probe)
      }, so it would admit anything`;
  }
  const prefix = rule.prefix ?? [];
  const program = prefix[0]?.split("/").pop() ?? "";
  if (LAUNCHER_NAMES.has(program) || launcherSubcommand([program, ...prefix.slice(1)])) {
    const named = LAUNCHER_NAMES.has(program) ? program : `${program} ${prefix[1]}`;
    return `${named} runs whatever command follows it`;
  }
  if (SHELLS.has(program) || INTERPRETERS.has(program)) {
    if (prefix.length === 1) return `a bare ${program} runs any code`;
    if (prefix[1].startsWith("-")) return `${prefix.join(" ")} runs inline code`;
  }
  if (prefix.length === 1 && NEEDS_SUBCOMMAND.has(program)) {
    return `a bare ${program} admits every subcommand; name the subcommand (e.g. ${program} status)`;
  }
  if (program === "git" && (prefix[1] === "-c" || prefix[1] === "config")) {
    return `git ${prefix[1]} can set hooks and aliases that run any command`;
  }
  return undefined;
}
