/**
 * `npm run bench` (`bun scripts/bench.ts [--quick] [--only a,b] [--daemon subprocess|in-process]`):
 * the benchmarks of issue 6. Every scenario runs the same pinned codex against the same scripted
 * model, so ratios compare like with like. Prints markdown tables on stdout (progress on stderr)
 * and writes every figure, the machine and the target checks to bench-results/<date>.json.
 *
 * Scenarios (scripts/bench/): turn-overhead, throughput, concurrency, policy, startup.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { startScriptedModel } from "../src/devtools/scripted-model.ts";
import { resolveCodexBinary } from "../src/provider/codex/binary.ts";
import { makeTempWorktree, REPO_ROOT } from "../test/support/codex-harness.ts";
import { concurrency } from "./bench/concurrency.ts";
import type { BenchContext } from "./bench/context.ts";
import { chooseDaemonMode, type DaemonMode } from "./bench/daemon.ts";
import { codexVersion, machineInfo } from "./bench/machine.ts";
import { policyEngine } from "./bench/policy.ts";
import { type BenchResults, checkTargets, markdown } from "./bench/report.ts";
import { startup } from "./bench/startup.ts";
import { streamRule, throughput } from "./bench/throughput.ts";
import { turnOverhead } from "./bench/turn-overhead.ts";

const SCENARIOS = ["turn-overhead", "throughput", "concurrency", "policy", "startup"] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `Usage: bun scripts/bench.ts [--quick] [--only ${SCENARIOS.join(",")}]
                            [--daemon subprocess|in-process] [--out FILE]`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      daemon: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = values.only?.split(",").map((s) => s.trim()).filter(Boolean) ?? [...SCENARIOS];
  for (const name of only) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      console.error(`bench: unknown scenario ${name}\n${USAGE}`);
      process.exit(2);
    }
  }
  const daemon = values.daemon;
  if (daemon !== undefined && daemon !== "subprocess" && daemon !== "in-process") {
    console.error(`bench: --daemon must be subprocess or in-process, not ${daemon}`);
    process.exit(2);
  }
  return {
    quick: values.quick,
    only: new Set(only as Scenario[]),
    daemon: daemon as DaemonMode | undefined,
    out: values.out,
  };
}

/** The registry's latest @openai/codex-sdk, for the report (the package is not installed). */
async function sdkLatest(): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)("npm", ["view", "@openai/codex-sdk", "version"], {
      timeout: 15_000,
    });
    return stdout.trim().split("\n").at(-1);
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
  const started = performance.now();
  const codexBinary = (await resolveCodexBinary({ searchFrom: [REPO_ROOT] })).path;
  const chosen = await chooseDaemonMode();
  const daemonMode = options.daemon ?? chosen.mode;
  const how = options.daemon && options.daemon !== chosen.mode
    ? `${options.daemon} (forced by --daemon)`
    : chosen.why;
  log(`daemon: ${daemonMode}: ${how}`);

  await using model = await startScriptedModel({ rules: [streamRule()] });
  await using worktree = await makeTempWorktree();
  const ctx: BenchContext = {
    model,
    cwd: worktree.path,
    codexBinary,
    daemonMode,
    quick: options.quick,
    log,
  };
  const results: Omit<BenchResults, "targets"> = {
    date: new Date().toISOString(),
    quick: options.quick,
    machine: machineInfo(),
    codexVersion: codexVersion(codexBinary),
    daemon: { mode: daemonMode, how },
    errors: {},
    notes: [],
  };
  const attempt = async <T>(name: Scenario, run: () => Promise<T>): Promise<T | undefined> => {
    if (!options.only.has(name)) return undefined;
    try {
      return await run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${name} failed: ${message}`);
      results.errors[name] = message;
      return undefined;
    }
  };

  results.turnOverhead = await attempt("turn-overhead", async () =>
    turnOverhead(ctx, {
      turns: 50,
      execTurns: options.quick ? 10 : 50,
      sdkLatest: await sdkLatest(),
    }));
  results.throughput = await attempt(
    "throughput",
    () => throughput(ctx, { runs: options.quick ? 1 : 3 }),
  );
  results.concurrency = await attempt("concurrency", () =>
    concurrency(ctx, {
      levels: options.quick ? [1, 10, 50] : [1, 10, 50, 100, 200],
      followUps: 2,
      deadlineMs: options.quick ? 60_000 : 300_000,
      direct: true,
    }));
  results.policy = await attempt("policy", () => policyEngine({ quick: options.quick }));
  results.startup = await attempt("startup", () => startup(model, codexBinary, { starts: 5, log }));

  if (daemonMode === "in-process") {
    results.notes.push(
      "Note: the daemon ran inside the bench process (startDaemon with the test suite's fake " +
        "command analyzer), so its RSS is the bench process's and it shares an event loop with " +
        "the bench's clients. The subprocess (`bun src/main.ts serve`) is used once the " +
        "production shell analyzer works.",
    );
  }
  const full: BenchResults = { ...results, targets: checkTargets(results) };
  const outFile = options.out ??
    path.join(
      REPO_ROOT,
      "bench-results",
      `${full.date.replace(/[:.]/g, "-")}${options.quick ? "-quick" : ""}.json`,
    );
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(full, null, 2) + "\n");
  console.log(markdown(full));
  log(
    `wrote ${path.relative(REPO_ROOT, outFile)} in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
}

await main();
