/**
 * `npm run test:codex -- <version> [test files…]`: the real-codex tests (the integration lane,
 * scripts/test-lanes.ts) against another published codex. The version is installed on demand from
 * the npm registry into `$XDG_CACHE_HOME/codexd/codex-<version>/` (`~/.cache/…`) and used through
 * `$CODEX_BIN`, which the test support and the daemon prefer over node_modules. Named test files
 * narrow the run. The JUnit report goes to test-results/junit-codex-<version>.xml.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import process from "node:process";
import { resolveCodexBinary } from "../src/provider/codex/binary.ts";
import { filesOf, REPO_ROOT, runBunTests } from "./test-lanes.ts";

const [version, ...only] = process.argv.slice(2);
if (!version || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) {
  process.stderr.write("usage: npm run test:codex -- <codex version, e.g. 0.166.0> [test files]\n");
  process.exit(2);
}

const cache = path.join(
  process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"),
  "codexd",
  `codex-${version}`,
);
const wrapper = path.join(cache, "node_modules", "@openai", "codex", "bin", "codex.js");
if (!existsSync(wrapper)) {
  mkdirSync(cache, { recursive: true });
  process.stderr.write(`installing @openai/codex@${version} into ${cache}\n`);
  const install = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      cache,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      `@openai/codex@${version}`,
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  if (install.status !== 0) process.exit(install.status ?? 1);
}
// The native binary behind npm's node wrapper (binary.ts), so the tests own app-server's pid.
const binary = await resolveCodexBinary({ binary: wrapper });
const reported = spawnSync(binary.path, ["--version"], { encoding: "utf8" }).stdout.trim();
if (!reported.endsWith(version)) {
  process.stderr.write(`${binary.path} reports "${reported}", not ${version}\n`);
  process.exit(1);
}
process.stderr.write(`running the real-codex tests against ${reported} (${binary.path})\n`);

const files = only.length > 0 ? only : filesOf("integration");
mkdirSync(path.join(REPO_ROOT, "test-results"), { recursive: true });
process.exit(
  runBunTests(files, `test-results/junit-codex-${version}.xml`, {
    ...process.env,
    CODEX_BIN: binary.path,
  }),
);
