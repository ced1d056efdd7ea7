/**
 * `npm run test:unit` / `npm run test:integration` (`bun scripts/run-tests.ts <lane> [--list]`):
 * one lane of the tests (scripts/test-lanes.ts: `unit` needs no codex, `integration` runs the
 * real one). Each lane writes its JUnit report to test-results/junit-<lane>.xml, and then
 * test-results/junit.xml is rewritten as the union of the lane reports there, so `npm test`
 * (both lanes in turn) leaves one report for .ci/run to count. `--list` prints the lane's files.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { filesOf, type Lane, REPO_ROOT, runBunTests } from "./test-lanes.ts";

const LANES: readonly Lane[] = ["unit", "integration"];
const [lane, ...rest] = process.argv.slice(2);
if (!LANES.includes(lane as Lane)) {
  process.stderr.write(`usage: bun scripts/run-tests.ts ${LANES.join("|")} [--list]\n`);
  process.exit(2);
}
const files = filesOf(lane as Lane);
if (rest.includes("--list")) {
  process.stdout.write(files.join("\n") + "\n");
  process.exit(0);
}

const results = path.join(REPO_ROOT, "test-results");
mkdirSync(results, { recursive: true });
const report = path.join(results, `junit-${lane}.xml`);
rmSync(report, { force: true });
const status = runBunTests(files, path.relative(REPO_ROOT, report));
writeFileSync(path.join(results, "junit.xml"), mergeReports(LANES.map(laneReport)));
process.exit(status);

function laneReport(name: Lane): string | undefined {
  const file = path.join(results, `junit-${name}.xml`);
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** One `<testsuites>` holding every lane report's suites; its totals are their sums. */
function mergeReports(reports: ReadonlyArray<string | undefined>): string {
  const totals = { tests: 0, failures: 0, skipped: 0 };
  const bodies: string[] = [];
  for (const xml of reports) {
    if (xml === undefined) continue;
    const root = /<testsuites\b([^>]*)>([\s\S]*)<\/testsuites>/.exec(xml);
    if (!root) continue;
    for (const key of Object.keys(totals) as Array<keyof typeof totals>) {
      totals[key] += Number(new RegExp(`\\b${key}="(\\d+)"`).exec(root[1])?.[1] ?? 0);
    }
    bodies.push(root[2].trim());
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="codexd" tests="${totals.tests}" ` +
    `failures="${totals.failures}" skipped="${totals.skipped}">\n${bodies.join("\n")}\n` +
    `</testsuites>\n`;
}
