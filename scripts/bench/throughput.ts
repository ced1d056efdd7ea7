/**
 * Scenario 2: the scripted model streams a 1 MB answer in 10,000 deltas. How many delta events
 * per second reach an SSE client of the daemon, against how many delta notifications per second
 * the direct stdio client reads from codex. Each rate is deltas / (request sent → turn end).
 */
import { type BenchContext, STREAM_MARKER } from "./context.ts";
import { startBenchDaemon } from "./daemon.ts";
import { DirectClient } from "./direct.ts";
import { DaemonSession } from "./session.ts";
import { cpuMsOf } from "./machine.ts";
import { median, ratio, round } from "./stats.ts";
import { allCpus, pin, pinningUnavailable } from "./cpu-affinity.ts";
import os from "node:os";

export const ANSWER_CHARS = 1_000_000;
export const ANSWER_DELTAS = 10_000;

/** The rule the shared scripted model serves for STREAM_MARKER. */
export function streamRule() {
  return {
    marker: STREAM_MARKER,
    rounds: [[{
      type: "message" as const,
      text: "x".repeat(ANSWER_CHARS - 1) + "\n",
      deltas: ANSWER_DELTAS,
    }]],
  };
}

export interface ThroughputRun {
  ms: number;
  deltas: number;
  eventsPerSecond: number;
  /**
   * CPU the path's own processes spent on the run, ms: the daemon's for the daemon path, the
   * direct client's (the bench process) for the direct path. Unlike the rate, this hardly moves
   * when other work shares the machine, so it compares builds of the daemon on a noisy machine.
   */
  cpuMs?: number;
  /** The daemon path only: CPU of its SSE client (the bench process) during the run, ms. */
  clientCpuMs?: number;
  /** CPU of the codex app-server the path talks to during the run, ms. */
  codexCpuMs?: number;
}

interface PathFigures {
  eventsPerSecond: number | null;
  deltasReceived: number[];
  runs: ThroughputRun[];
  /** Median CPU per run of the path's own process (see ThroughputRun.cpuMs), ms. */
  cpuMsPerRun: number | null;
  /** The daemon path: median CPU per run of its SSE client, ms. */
  clientCpuMsPerRun?: number | null;
  /** Median CPU per run of the path's codex, ms. */
  codexCpuMsPerRun: number | null;
}

/** One set of interleaved runs, daemon against direct. */
export interface ThroughputFigures {
  daemon: PathFigures;
  direct: PathFigures;
  /** daemon / direct events per second (median runs). */
  ratio: number | null;
}

/**
 * The same runs again with codex alone on CPU 0 in both paths and every other process of the run
 * (daemon, SSE client, direct client, model) on the other CPUs: whether the daemon keeps up with
 * the codex it serves once the two do not share cores (see cpu-affinity.ts).
 */
export type PinnedFigures =
  | ThroughputFigures & { codexCpus: string; otherCpus: string }
  | { skipped: string };

export interface ThroughputResult extends ThroughputFigures {
  answerChars: number;
  answerDeltas: number;
  runs: number;
  pinned?: PinnedFigures;
}

function run(ms: number, deltas: number, cpuMs: number, codexCpuMs: number): ThroughputRun {
  return {
    ms: round(ms)!,
    deltas,
    eventsPerSecond: round(deltas / (ms / 1000), 0)!,
    cpuMs: round(cpuMs, 0)!,
    codexCpuMs: round(codexCpuMs, 0)!,
  };
}

/** CPU time of the bench process itself so far, ms. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function sumCpuMs(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += cpuMsOf(pid);
  return total;
}

function figures(runs: ThroughputRun[]): PathFigures {
  const medianOf = (key: "cpuMs" | "clientCpuMs" | "codexCpuMs") =>
    round(median(runs.map((r) => r[key] ?? 0)), 0);
  return {
    eventsPerSecond: round(median(runs.map((r) => r.eventsPerSecond)), 0),
    deltasReceived: runs.map((r) => r.deltas),
    runs,
    cpuMsPerRun: medianOf("cpuMs"),
    codexCpuMsPerRun: medianOf("codexCpuMs"),
  };
}

export async function throughput(
  ctx: BenchContext,
  options: { runs: number; pin?: boolean },
): Promise<ThroughputResult> {
  await using daemon = await startBenchDaemon(ctx.model, ctx.daemonMode, ctx.daemonOptions);
  await using direct = await DirectClient.start(ctx.model, { threads: ctx.directThreads });
  const { session } = await DaemonSession.spawn(daemon.client, {
    prompt: "bench warm-up a",
    cwd: ctx.cwd,
  });
  const thread = await direct.startThread(ctx.cwd);
  await direct.runTurn(thread, "bench warm-up b");

  /** `runs` pairs, direct then daemon, each turn streaming the big answer. */
  const measure = async (label: string): Promise<ThroughputFigures> => {
    ctx.log(`throughput${label}: ${options.runs} run(s) of ${ANSWER_DELTAS} deltas each way`);
    const daemonRuns: ThroughputRun[] = [];
    const directRuns: ThroughputRun[] = [];
    const daemonCodex = daemon.codexPids();
    for (let i = 0; i < options.runs; i++) {
      const ownBefore = ownCpuMs();
      const codexBefore = cpuMsOf(direct.pid);
      const b = await direct.runTurn(thread, `${STREAM_MARKER} ${i}`);
      if (b.status !== "completed") throw new Error(`direct stream turn ended ${b.status}`);
      directRuns.push(
        run(b.ms, b.deltas, ownCpuMs() - ownBefore, cpuMsOf(direct.pid) - codexBefore),
      );
      const daemonBefore = cpuMsOf(daemon.pid);
      const clientBefore = ownCpuMs();
      const daemonCodexBefore = sumCpuMs(daemonCodex);
      const a = await session.runTurn(`${STREAM_MARKER} ${i}`);
      if (a.outcome !== "result") throw new Error(`daemon stream turn ended with ${a.outcome}`);
      daemonRuns.push({
        ...run(
          a.ms,
          a.deltas,
          cpuMsOf(daemon.pid) - daemonBefore,
          sumCpuMs(daemonCodex) - daemonCodexBefore,
        ),
        clientCpuMs: round(ownCpuMs() - clientBefore, 0)!,
      });
    }
    const daemonFigures = figures(daemonRuns);
    daemonFigures.clientCpuMsPerRun = round(
      median(daemonRuns.map((r) => r.clientCpuMs ?? 0)),
      0,
    );
    const directFigures = figures(directRuns);
    return {
      daemon: daemonFigures,
      direct: directFigures,
      ratio: ratio(daemonFigures.eventsPerSecond, directFigures.eventsPerSecond),
    };
  };

  const shared = await measure("");
  let pinned: PinnedFigures | undefined;
  if (options.pin) {
    const unavailable = pinningUnavailable() ??
      (daemon.pid === process.pid ? "the daemon runs in the bench process" : undefined);
    if (unavailable) pinned = { skipped: unavailable };
    else {
      const codexPids = [direct.pid, ...daemon.codexPids()];
      const others = [process.pid, daemon.pid, ...(ctx.modelPid ? [ctx.modelPid] : [])];
      const codexCpus = "0";
      const last = os.availableParallelism() - 1;
      const otherCpus = last === 1 ? "1" : `1-${last}`;
      pin(codexPids, codexCpus);
      pin(others, otherCpus);
      try {
        pinned = { ...await measure(" (codex pinned)"), codexCpus, otherCpus };
      } finally {
        pin([...codexPids, ...others], allCpus());
      }
    }
  }
  await session.close();
  return {
    answerChars: ANSWER_CHARS,
    answerDeltas: ANSWER_DELTAS,
    runs: options.runs,
    ...shared,
    ...(pinned && { pinned }),
  };
}
