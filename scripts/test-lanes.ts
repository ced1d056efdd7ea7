/**
 * The test files by lane: `integration` runs a real codex (the pinned one, or `$CODEX_BIN`), `unit`
 * needs none. A file is an integration test when its source starts codex in any way the test
 * support offers (the harness, the test provider, a daemon in or out of this process, the schema
 * generator, codexd's own commands that start codex); every other file is a unit test. So a new
 * test file lands in the right lane without being listed here.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export type Lane = "unit" | "integration";

/** What in a test file's source starts a real codex. */
const STARTS_CODEX = new RegExp(
  [
    // test/support: the harness, the provider fixture, the daemon in and out of this process
    String.raw`\bstartCodex\b`,
    String.raw`\bstartBareClient\b`,
    String.raw`\bmakeCodexHome\b`,
    String.raw`\bstartTestProvider\b`,
    String.raw`\bstartDaemonInProcess\b`,
    String.raw`\bstartDaemonProcess\b`,
    String.raw`\bloadCodexSchema\b`,
    // src: the daemon, the provider's child and process, the binary, the schema
    String.raw`\bstartDaemon\(`,
    String.raw`\bstartCodexChild\b`,
    String.raw`\bCodexProcess\.start\b`,
    String.raw`\bresolveCodexBinary\b`,
    String.raw`\bgenerateSchema\b`,
    // codexd's commands that start codex: `codexd demo`, `codexd serve`
    String.raw`main\.ts"\),\s*"(demo|serve)"`,
  ].join("|"),
);

/** Every `*.test.ts` under test/, relative to the repository, sorted. */
export function testFiles(): string[] {
  return readdirSync(path.join(REPO_ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => path.posix.join("test", file.split(path.sep).join("/")))
    .sort();
}

export function laneOf(file: string): Lane {
  const source = readFileSync(path.join(REPO_ROOT, file), "utf8");
  return STARTS_CODEX.test(source) ? "integration" : "unit";
}

export function filesOf(lane: Lane): string[] {
  return testFiles().filter((file) => laneOf(file) === lane);
}

/**
 * `bun test` over `files` from the repository root, writing a JUnit report to `report` (relative
 * to the root); the exit status of the run. Both test runners (lanes, another codex) use it.
 */
export function runBunTests(
  files: readonly string[],
  report: string,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const run = spawnSync(
    process.execPath,
    [
      "test",
      "--timeout",
      "60000",
      "--reporter=junit",
      `--reporter-outfile=${report}`,
      ...files.map((file) => (path.isAbsolute(file) ? file : `./${file}`)),
    ],
    { cwd: REPO_ROOT, stdio: "inherit", env },
  );
  return run.status ?? 1;
}
