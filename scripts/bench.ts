// deno-lint-ignore-file no-console -- a command-line script: what it prints is its output
/**
 * `npm run bench` (`bun scripts/bench.ts [--quick] [--only a,b] [--daemon ${DAEMON_MODES.join("|")}]`):
 * the benchmarks of issue 6. Every scenario runs the same pinned codex against the same scripted
 * model, so ratios compare like with like. Prints markdown tables on stdout (progress on stderr)
 * and writes every figure, the machine and the target checks to bench-results/<date>.json.
 *
 * Scenarios (scripts/bench/): turn-overhead, throughput, concurrency, policy, startup, and the
 * must-shows of issue 14: concurrent-100 (daemon vs direct, like with like), sessions-500, churn
 * (1,000 sessions, recycling), rolling-restart, kill-child. `--quick` runs each smaller.
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
import { chooseDaemonMode, DAEMON_MODES } from "./bench/daemon.ts";
import { codexVersion, machineInfo } from "./bench/machine.ts";
import { policyEngine } from "./bench/policy.ts";
import { profileTurnPath } from "./bench/profile.ts";
import { type BenchResults, checkTargets, markdown } from "./bench/report.ts";
import { startup } from "./bench/startup.ts";
import { throughput } from "./bench/throughput.ts";
import { benchRules } from "./bench/model-rules.ts";
import { turnOverhead } from "./bench/turn-overhead.ts";
import { churn } from "./bench/churn.ts";
import { concurrentVsDirect } from "./bench/concurrent-vs-direct.ts";
import { killChild } from "./bench/kill-child.ts";
import { loadAverage } from "./bench/machine.ts";
import { manySessions } from "./bench/many-sessions.ts";
import { rollingRestart } from "./bench/rolling-restart.ts";
import { startModelProcess } from "./bench/model-process.ts";
import { ensureFetchSlots } from "./bench/fetch-slots.ts";

const SCENARIOS = [
  "turn-overhead",
  "throughput",
  "concurrency",
  "policy",
  "startup",
  "concurrent-100",
  "sessions-500",
  "churn",
  "rolling-restart",
  "kill-child",
] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `Usage: bun scripts/bench.ts [--quick] [--only ${SCENARIOS.join(",")}]
                            [--daemon ${DAEMON_MODES.join("|")}] [--model process|in-process]
                            [--out FILE] [--cpu-prof DIR] [--direct-bare]
  --cpu-prof DIR   every daemon subprocess writes a CPU profile (.cpuprofile) into DIR
  --direct-bare    direct clients start threads bare ({cwd, approvalPolicy, sandbox}) instead of
                   with the daemon's own thread/start (its sandbox permission profile and config)`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      daemon: { type: "string" },
      model: { type: "string", default: "process" },
      out: { type: "string" },
      "cpu-prof": { type: "string" },
      "direct-bare": { type: "boolean", default: false },
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
  const mode = DAEMON_MODES.find((m) => m === daemon);
  if (daemon !== undefined && mode === undefined) {
    console.error(`bench: --daemon must be one of ${DAEMON_MODES.join(", ")}, not ${daemon}`);
    process.exit(2);
  }
  if (values.model !== "process" && values.model !== "in-process") {
    console.error(`bench: --model must be process or in-process, not ${values.model}`);
    process.exit(2);
  }
  return {
    quick: values.quick,
    modelInProcess: values.model === "in-process",
    only: new Set(only as Scenario[]),
    daemon: mode,
    out: values.out,
    cpuProf: values["cpu-prof"],
    directBare: values["direct-bare"],
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

  // The model stamps requests on the bench's monotonic clock, so profile.ts can split turns.
  await using model = await startScriptedModel({ rules: benchRules() }, {
    now: () => performance.now(),
  });
  await using worktree = await makeTempWorktree();
  // The measured paths reach a model in its own process (see bench/model-process.ts).
  await using modelProcess = options.modelInProcess ? undefined : await startModelProcess();
  log(`model: ${modelProcess ? `own process (pid ${modelProcess.pid})` : "in the bench process"}`);
  const ctx: BenchContext = {
    model: modelProcess ?? model,
    recordingModel: model,
    ...(modelProcess && { modelPid: modelProcess.pid }),
    cwd: worktree.path,
    codexBinary,
    daemonMode,
    quick: options.quick,
    directThreads: options.directBare ? "bare" : "daemon",
    daemonOptions: options.cpuProf
      ? { bunFlags: ["--cpu-prof", `--cpu-prof-dir=${path.resolve(options.cpuProf)}`] }
      : {},
    log,
  };
  const results: Omit<BenchResults, "targets"> = {
    date: new Date().toISOString(),
    quick: options.quick,
    machine: machineInfo(),
    codexVersion: codexVersion(codexBinary),
    daemon: { mode: daemonMode, how },
    model: modelProcess ? "own process" : "in the bench process",
    directThreads: options.directBare
      ? "bare thread/start ({cwd, approvalPolicy, sandbox})"
      : "the daemon's own thread/start (sandbox permission profile with the same read-denied " +
        "paths, environment policy, trust) and the daemon's HOME",
    loadAverage: { start: loadAverage() },
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
  const ratio = results.turnOverhead?.ratios.daemonOverDirectP50;
  if (ratio != null && ratio > 1.1) {
    log(`daemon/direct ${ratio} > 1.10: splitting turns along the path`);
    results.turnProfile = await attempt("turn-overhead", () => profileTurnPath(ctx, 30));
  }
  results.throughput = await attempt(
    "throughput",
    () => throughput(ctx, { runs: options.quick ? 1 : 5, pin: true }),
  );
  results.concurrency = await attempt("concurrency", () =>
    concurrency(ctx, {
      // 100 sessions: concurrent-100 below, daemon and direct alternating pair by pair.
      levels: options.quick ? [1, 10, 50] : [1, 10, 50, 200],
      followUps: 2,
      deadlineMs: options.quick ? 60_000 : 300_000,
      direct: true,
    }));
  results.policy = await attempt("policy", () => policyEngine({ quick: options.quick }));
  results.startup = await attempt(
    "startup",
    () => startup(ctx.model, codexBinary, { starts: 5, log }),
  );
  const quick = options.quick;
  results.concurrentVsDirect = await attempt("concurrent-100", () =>
    concurrentVsDirect(ctx, {
      sessions: quick ? 20 : 100,
      followUps: 2,
      pairs: quick ? 1 : 2,
    }));
  results.manySessions = await attempt(
    "sessions-500",
    () => manySessions(ctx, { sessions: quick ? 50 : 500, deadlineMs: 600_000 }),
  );
  results.churn = await attempt(
    "churn",
    () => churn(ctx, { sessions: quick ? 150 : 1000, concurrency: 20 }),
  );
  results.rollingRestart = await attempt("rolling-restart", () =>
    rollingRestart(ctx, {
      sessions: quick ? 10 : 50,
      turnsPerSession: quick ? 3 : 6,
      pool: 2,
    }));
  results.killChild = await attempt(
    "kill-child",
    () => killChild(ctx, { sessions: quick ? 12 : 40, pool: 4 }),
  );
  results.loadAverage!.end = loadAverage();

  if (daemonMode === "in-process") {
    results.notes.push(
      "Note: the daemon ran inside the bench process (startDaemon with the test suite's fake " +
        "command analyzer), so its RSS is the bench process's and it shares an event loop with " +
        "the bench's clients.",
    );
  } else if (daemonMode === "subprocess-fake-analyzer") {
    results.notes.push(
      "Note: `codexd serve` cannot start until the production shell analyzer is built, so the " +
        "daemon ran as its own process through scripts/bench/serve-fake-analyzer.ts (the same " +
        "startDaemon with the test suite's fake analyzer; these turns never consult it). " +
        "The bench switches to `bun src/main.ts serve` by itself once the analyzer works.",
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

ensureFetchSlots();
await main();
