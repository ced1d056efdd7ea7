// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * Runs every daemon fault scenario against a real `codexd serve` subprocess and prints a table:
 * fault, what the daemon did, events lost (must be 0), processes left (must be 0), time to
 * recover. Exits 1 when any row is not clean.
 *
 *   bun scripts/fault-report.ts [--only name,name] [--json]
 *
 * Scenario names: codex-kill, instant-death, model-429, model-500, model-cut, model-stall,
 * slow-client, daemon-kill, daemon-term (see scripts/faults/scenarios.ts).
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { startScriptedModel } from "../src/devtools/scripted-model.ts";
import { makeTempWorktree } from "../test/support/codex-harness.ts";
import { type FaultRow, faultScript, runScenario, SCENARIOS } from "./faults/scenarios.ts";

const { values } = parseArgs({
  options: { only: { type: "string" }, json: { type: "boolean", default: false } },
});
const only = values.only?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((name) => !SCENARIOS.some(([n]) => n === name)) ?? [];
if (unknown.length > 0) {
  console.error(`fault-report: unknown scenario ${unknown.join(", ")}`);
  process.exit(2);
}

const model = await startScriptedModel(faultScript());
const worktree = await makeTempWorktree();
const rows: FaultRow[] = [];
try {
  for (const [name, scenario] of SCENARIOS) {
    if (only && !only.includes(name)) continue;
    process.stderr.write(`fault-report: ${name}...\n`);
    const row = await runScenario(name, scenario, { model, cwd: worktree.path });
    process.stderr.write(`fault-report: ${name}: ${row.ok ? "ok" : "NOT OK"}\n`);
    rows.push(row);
  }
} finally {
  await worktree.remove();
  await model.close();
}

const clean = (row: FaultRow) => row.ok && row.eventsLost === 0 && row.processesLeft === 0;
if (values.json) {
  console.log(JSON.stringify(rows.map((row) => ({ ...row, clean: clean(row) })), null, 2));
} else {
  console.log(table(rows));
}
process.exit(rows.every(clean) ? 0 : 1);

function table(rows: readonly FaultRow[]): string {
  const header = ["fault", "what the daemon did", "lost", "left", "recover", ""];
  const body = rows.map((r) => [
    r.fault,
    r.did,
    String(r.eventsLost),
    String(r.processesLeft),
    r.recoverMs === undefined ? "—" : `${(r.recoverMs / 1000).toFixed(2)} s`,
    clean(r) ? "ok" : "FAIL",
  ]);
  const widths = header.map((h, i) =>
    Math.min(i === 1 ? 100 : 40, Math.max(h.length, ...body.map((row) => row[i]!.length)))
  );
  const line = (cells: string[]) =>
    "| " + cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |";
  return [
    line(header),
    "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|",
    ...body.map(line),
  ].join("\n");
}
