/** Which file a command runs as code: `sh x.sh`, `python x.py`, `source x`, `./x`, `/tmp/x`. */
import type { SimpleCommand } from "../analyzer.ts";
import { codeArgs } from "./inline-code.ts";
import { isInterpreter, SHELLS } from "./programs.ts";

/** A shell option cluster holding `-c`: the script is the next word, not a file. */
export const CODE_OPTIONS_SHELL = /^-[a-zA-Z]*c[a-zA-Z]*$/;

export function executedFile(c: Pick<SimpleCommand, "argv" | "path">): string | undefined {
  const [program, ...args] = c.argv;
  if (c.path !== undefined) return c.path;
  if (program === "source" || program === ".") return args[0];
  if (SHELLS.has(program)) {
    if (args.some((a) => CODE_OPTIONS_SHELL.test(a))) return undefined;
    return args.find((a) => !a.startsWith("-") && !a.startsWith("+"));
  }
  if (isInterpreter(program)) {
    // `node -r ./pre.js -e 0` loads pre.js first.
    const preload = args.findIndex((a) => a === "-r" || a === "--require" || a === "--import");
    if (preload !== -1 && args[preload + 1] !== undefined) return args[preload + 1];
    const parsed = codeArgs(program, args.map((value) => ({ value, dynamic: false })));
    if (parsed.code.length > 0) return undefined;
    return parsed.operand?.startsWith("-m ") ? undefined : parsed.operand;
  }
  return undefined;
}

/** Files that make the next build, test or interpreter run execute what they say. */
export const BUILD_FILE =
  /(^|\/)(Makefile|makefile|GNUmakefile|[^/]*\.mk|package\.json|\.npmrc|\.yarnrc(\.yml)?|CMakeLists\.txt|[^/]*\.cmake|setup\.py|setup\.cfg|pyproject\.toml|conftest\.py|pytest\.ini|tox\.ini|noxfile\.py|sitecustomize\.py|usercustomize\.py|[^/]*\.pth|Cargo\.toml|build\.rs|\.cargo\/config(\.toml)?|Rakefile|Gemfile|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|pom\.xml|justfile|Taskfile\.ya?ml|\.envrc|[^/]*\.py|[^/]*\.[cm]?js|[^/]*\.pm|[^/]*\.rb|node_modules\/.*)$/;
