// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
// Prints "N passed, N failed" from a JUnit XML report (bun test --reporter=junit).
// Usage: node scripts/junit-summary.mjs REPORT [EXIT_STATUS_OF_TEST_RUN]
// Exits 1 when anything failed, when the report is missing, or when no test ran.
import { existsSync, readFileSync } from "node:fs";

const [report, runStatus = "0"] = process.argv.slice(2);
if (!report || !existsSync(report)) {
  // The checks before the test run failed (or the runner crashed): count that as one failure.
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const xml = readFileSync(report, "utf8");
let passed = 0;
let failed = 0;
let skipped = 0;
// Each <testcase ...> is either self-closing (passed) or holds <failure>/<error>/<skipped>.
for (const match of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
  const body = match[2] ?? "";
  if (/<(failure|error)\b/.test(body)) failed++;
  else if (/<skipped\b/.test(body)) skipped++;
  else passed++;
}
if (runStatus !== "0" && failed === 0) failed = 1; // the runner failed outside any test case
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
