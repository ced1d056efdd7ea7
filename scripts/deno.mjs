#!/usr/bin/env node
// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
// Runs the pinned Deno from its platform package. The `deno` npm wrapper cannot be used: it lists
// optional packages for every platform, and the registry this project installs from carries only
// `@deno/linux-x64-glibc`, so `npm ci` rejects the lock file as incomplete.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";

const require = createRequire(import.meta.url);
const suffix = process.platform === "linux" ? "-glibc" : "";
const pkg = `@deno/${process.platform}-${process.arch}${suffix}`;

let exe;
try {
  exe = join(
    dirname(require.resolve(`${pkg}/package.json`)),
    process.platform === "win32" ? "deno.exe" : "deno",
  );
} catch {
  console.error(
    `Cannot run deno: package ${pkg} is not installed (run npm ci on a supported platform)`,
  );
  process.exit(1);
}

const result = spawnSync(exe, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  console.error(`Cannot run deno: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
