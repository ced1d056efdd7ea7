/**
 * Must-show: N concurrent sessions (spawn + follow-up turns each), daemon against direct, like
 * with like: the daemon runs `pool` app-server children (its default on this machine unless
 * told), and the direct baseline runs as many app-servers, each a stdio client, the sessions
 * placed on them round-robin. The two alternate run by run; the ratio is taken pair by pair.
 */
import { defaultPoolSize } from "../../src/daemon/config.ts";
import type { BenchContext } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { DirectClient, type DirectThreads } from "./direct.ts";
import { driveSession, echoOf, failureSummary } from "./load.ts";
import { cpuMsOf, loadAverage } from "./machine.ts";
import { MemorySampler } from "./memory-sampler.ts";
import { median, nowMs, ratio, round } from "./stats.ts";

/** CPU time of a run, ms: of the side's own process (daemon, or direct client), and of codex. */
export interface RunCpu {
  serverMs: number;
  codexMs: number;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const roundCpu = (c: RunCpu): RunCpu => ({
  serverMs: round(c.serverMs, 0)!,
  codexMs: round(c.codexMs, 0)!,
});

export interface ConcurrentVsDirectResult {
  sessions: number;
  followUps: number;
  pool: number;
  /** How the direct baseline was configured. */
  direct: string;
  /**
   * One more direct run whose threads start bare ({cwd, approvalPolicy, sandbox}), as issue 14's
   * 1.67× was measured: the gap to the like-with-like direct run is codex's cost of the config.
   */
  bareDirectWallMs: number | null;
  pairs: Array<{
    daemonWallMs: number;
    directWallMs: number;
    ratio: number | null;
    /** CPU of each side: the daemon process or the bench's direct client, and codex. */
    daemonCpu: RunCpu;
    directCpu: RunCpu;
  }>;
  daemonWallMs: number | null;
  directWallMs: number | null;
  /** Median of the pairs' daemon/direct. */
  ratio: number | null;
  failures: string[];
  daemonPeakRssMiB: number | null;
  loadAverage: { before: number[]; after: number[] };
}

async function daemonRun(
  ctx: BenchContext,
  sessions: number,
  followUps: number,
  pool: number,
): Promise<{ wallMs: number; failures: string[]; peakRssMiB: number; cpu: RunCpu }> {
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, {
    ...ctx.daemonOptions,
    config: { codex: { pool } },
  });
  const sampler = new MemorySampler(daemon);
  sampler.start();
  const codexPids = daemon.codexPids();
  const cpuBefore = { daemon: cpuMsOf(daemon.pid), codex: sum(codexPids.map(cpuMsOf)) };
  const started = nowMs();
  const outcomes = await Promise.all(
    Array.from({ length: sessions }, (_, i) =>
      driveSession(daemon.client, ctx.cwd, i, {
        prompts: Array.from({ length: followUps + 1 }, (_, t) => `session ${i} turn ${t}`),
      })),
  );
  const wallMs = nowMs() - started;
  sampler.stop();
  const cpu = {
    serverMs: cpuMsOf(daemon.pid) - cpuBefore.daemon,
    codexMs: sum(codexPids.map(cpuMsOf)) - cpuBefore.codex,
  };
  return { wallMs, failures: failureSummary(outcomes), peakRssMiB: sampler.daemonPeak, cpu };
}

async function directRun(
  ctx: BenchContext,
  sessions: number,
  followUps: number,
  servers: number,
  threads: DirectThreads,
): Promise<{ wallMs: number; failures: string[]; cpu: RunCpu }> {
  const clients = await Promise.all(
    Array.from({ length: servers }, () => DirectClient.start(ctx.model, { threads })),
  );
  const failures: string[] = [];
  try {
    const codexBefore = sum(clients.map((c) => cpuMsOf(c.pid)));
    const ownBefore = process.cpuUsage();
    const started = nowMs();
    await Promise.all(Array.from({ length: sessions }, async (_, i) => {
      const direct = clients[i % servers]!;
      const thread = await direct.startThread(ctx.cwd);
      for (let turn = 0; turn <= followUps; turn++) {
        const prompt = `session ${i} turn ${turn}`;
        const done = await direct.runTurn(thread, prompt);
        if (done.status !== "completed") failures.push(`direct turn ended ${done.status}`);
        else if (done.text !== echoOf(prompt)) failures.push("direct: wrong answer");
      }
    }));
    const wallMs = nowMs() - started;
    const own = process.cpuUsage(ownBefore);
    const cpu = {
      serverMs: (own.user + own.system) / 1000,
      codexMs: sum(clients.map((c) => cpuMsOf(c.pid))) - codexBefore,
    };
    return { wallMs, failures: [...new Set(failures)], cpu };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export async function concurrentVsDirect(
  ctx: BenchContext,
  options: { sessions: number; followUps: number; pairs: number; pool?: number },
): Promise<ConcurrentVsDirectResult> {
  const pool = options.pool ?? defaultPoolSize();
  const before = loadAverage();
  const pairs: ConcurrentVsDirectResult["pairs"] = [];
  const threads = ctx.directThreads;
  const failures: string[] = [];
  let peak = 0;
  for (let i = 0; i < options.pairs; i++) {
    ctx.log(`${options.sessions} sessions, pair ${i + 1}/${options.pairs}: daemon (pool ${pool})`);
    const a = await daemonRun(ctx, options.sessions, options.followUps, pool);
    ctx.log(`  daemon ${Math.round(a.wallMs)} ms; direct (${pool} app-server(s))`);
    const b = await directRun(ctx, options.sessions, options.followUps, pool, threads);
    ctx.log(
      `  direct ${Math.round(b.wallMs)} ms; cpu daemon ${JSON.stringify(a.cpu)} direct ${
        JSON.stringify(b.cpu)
      }`,
    );
    failures.push(...a.failures, ...b.failures);
    peak = Math.max(peak, a.peakRssMiB);
    pairs.push({
      daemonWallMs: round(a.wallMs, 0)!,
      directWallMs: round(b.wallMs, 0)!,
      ratio: ratio(a.wallMs, b.wallMs),
      daemonCpu: roundCpu(a.cpu),
      directCpu: roundCpu(b.cpu),
    });
  }
  ctx.log(`  direct, threads started bare (approval policy and sandbox only)`);
  const bare = threads === "bare"
    ? pairs[0]?.directWallMs
    : (await directRun(ctx, options.sessions, options.followUps, pool, "bare")
      .catch(() => undefined))?.wallMs;
  return {
    sessions: options.sessions,
    followUps: options.followUps,
    pool,
    direct: `${pool} \`codex app-server\` process(es), each driven over stdio by the bench's ` +
      `minimal JSON-RPC client, sessions placed round-robin, each thread started ${
        threads === "bare"
          ? "bare (--direct-bare)"
          : "with the daemon's own thread/start (its sandbox permission profile and config) " +
            "and HOME"
      }; same codex, model and prompts`,
    bareDirectWallMs: bare === undefined ? null : round(bare, 0),
    pairs,
    daemonWallMs: round(median(pairs.map((p) => p.daemonWallMs)), 0),
    directWallMs: round(median(pairs.map((p) => p.directWallMs)), 0),
    ratio: round(median(pairs.map((p) => p.ratio ?? Number.NaN)), 3),
    failures: [...new Set(failures)],
    daemonPeakRssMiB: round(peak, 1),
    loadAverage: { before, after: loadAverage() },
  };
}
