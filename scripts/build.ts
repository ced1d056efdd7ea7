// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * `npm run build`: compiles codexd into one executable, dist/codexd, that runs with no
 * node_modules beside it (codex comes from the configuration, $CODEX_BIN or PATH).
 *
 * A compiled Bun binary would by default read bunfig.toml and .env from the folder it starts in;
 * both are turned off so that a file in a worktree cannot change the daemon.
 */
import { statSync } from "node:fs";
import { spawnSync } from "node:child_process";

const outfile = process.argv[2] ?? "dist/codexd";
const result = spawnSync(process.execPath, [
  "build",
  "--compile",
  "--minify",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--no-compile-autoload-tsconfig",
  "--no-compile-autoload-package-json",
  "scripts/compiled-entry.ts",
  "--outfile",
  outfile,
], { stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
const size = statSync(outfile).size;
console.log(`built ${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB`);
